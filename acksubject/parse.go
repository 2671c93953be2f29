package acksubject

import (
	"math"
	"math/bits"
	"strings"
)

// Parse reads an acknowledgement subject of the classic or the v2 form
// (see the package documentation for the grammar). It does not allocate:
// Stream, Consumer and AccountHash alias subject.
//
// A subject outside the grammar yields a *SyntaxError, matched by
// ErrInvalid, that names the first failing token in this order: the length,
// tokens 0 and 1, the token count, then the remaining tokens left to right.
//
// The subject is read in a single pass, left to right, with no split into
// tokens (see scan), which also names the fault of a refused subject.
func Parse(subject string) (info Info, err error) {
	if len(subject) > MaxLen {
		return Info{}, syntaxError(-1, FieldSubject, RuleTooLong)
	}
	var sp spans
	if e := scan(subject, &info, &sp); e != nil {
		return Info{}, e
	}
	info.AccountHash = subject[sp.hash[0]:sp.hash[1]]
	info.Stream = subject[sp.stream[0]:sp.stream[1]]
	info.Consumer = subject[sp.consumer[0]:sp.consumer[1]]
	return info, nil
}

// spans are the places of an Info's text fields in the subject scan read:
// [start, end) byte offsets, {0, 0} for an absent account hash.
type spans struct {
	hash, stream, consumer [2]int
}

// scan reads s in one pass, left to right, into info and returns nil for a
// subject inside the grammar, or the *SyntaxError Parse returns for one
// outside it; on refusal info holds whatever was read before the fault.
//
// Names are looked up in byteClass eight bytes at a time, numbers are
// accumulated as their digits are read, and each separator is checked
// where its token ends.
//
// Tokens 2 and 3 are the domain and account hash in the v2 form but names
// in the classic form, and which form s has shows only at its end. When
// they fit the v2 form, the rest is read as v2 first and, failing that, as
// classic: a classic subject on a stream named "_" whose consumer name
// looks like an account hash is read twice from token 2.
//
// A refused subject's fault is named in the order Parse documents: a
// token count other than classicTokens and v2Tokens comes before any
// token after the first two, and the token count tells which reading's
// first failing token is the fault (see fault).
func scan[T text](s T, info *Info, sp *spans) *SyntaxError {
	const (
		hashAt = len(ackPrefix) + len(noDomain) + 1 // first byte of a v2 account hash
		v2Tail = hashAt + accountHashLen + 1        // first byte after it and its '.'
	)
	if len(s) < len(ackPrefix) || string(s[:len(ackPrefix)]) != ackPrefix {
		return prefixFault(string(s))
	}
	v2Head := len(s) > v2Tail && string(s[len(ackPrefix):hashAt]) == noDomain+"." && s[v2Tail-1] == '.' && isHash(s[hashAt:v2Tail-1])
	v2Off, v2At := -1, 0
	if v2Head {
		info.Form, sp.hash = FormV2, [2]int{hashAt, v2Tail - 1}
		if v2Off, v2At = scanTail(s, v2Tail, info, sp); v2Off < 0 {
			return nil
		}
	}
	info.Form, sp.hash = FormClassic, [2]int{}
	off, at := scanTail(s, len(ackPrefix), info, sp)
	if off < 0 {
		return nil
	}
	switch n := strings.Count(string(s), ".") + 1; {
	case n == classicTokens:
		return fault(string(s), classicStreamIndex, off, at)
	case n == v2Tokens:
		if v2Head {
			return fault(string(s), v2StreamIndex, v2Off, v2At)
		}
		return headFault(string(s))
	case n > v2Tokens && extendedHead(string(s)):
		return &SyntaxError{Index: -1, Field: FieldSubject, Rule: RuleExtended}
	}
	return &SyntaxError{Index: -1, Field: FieldSubject, Rule: RuleTokenCount}
}

// extendedHead reports whether s, which starts with ackPrefix, goes on as
// the v2 form does: a domain token that is not empty, then an account
// hash token (see RuleExtended).
func extendedHead(s string) bool {
	domain, rest, ok := strings.Cut(s[len(ackPrefix):], ".")
	hash, _, more := strings.Cut(rest, ".")
	return ok && domain != "" && more && isHash(hash)
}

// scanTail reads the stream and consumer tokens that start at s[i], the
// five number tokens that end every subject and the '.' between them:
// the names into sp, the numbers into info. It returns -1 when they obey
// the grammar (both names the asset-name rule and its length cap, the
// numbers strict decimals, at least one digit and no leading zero, whose
// value fits their field, counts and sequences not 0, the last ending s),
// or else the offset from the stream token (offStream...) of the first
// token that does not, and the index in s of its first byte.
//
// A number's digits are added to its value as they are read: eight at a
// time while eight digits follow (at most twice, see eightDigits), then
// one at a time. Up to 19 digits cannot overflow a uint64; a 20th is added
// with an overflow check, and a 21st always overflows.
func scanTail[T text](s T, i int, info *Info, sp *spans) (off, at int) {
	end := nameLen(s, i)
	if end == i || end-i > MaxNameLen || end == len(s) || s[end] != '.' {
		return offStream, i
	}
	sp.stream = [2]int{i, end}
	i = end + 1
	end = nameLen(s, i)
	if end == i || end-i > MaxNameLen || end == len(s) || s[end] != '.' {
		return offConsumer, i
	}
	sp.consumer = [2]int{i, end}
	i = end + 1

	var nums [5]uint64
	for f := range nums {
		var n uint64
		end, limit := i, min(len(s), i+maxUintDigits-1)
		for range 2 {
			if len(s)-end < 8 {
				break
			}
			w := load64(s[end : end+8])
			if !eightDigits(w) {
				break
			}
			n = n*1e8 + eightDigitsValue(w)
			end += 8
		}
		for end < limit {
			d := s[end] - '0'
			if d > 9 {
				break
			}
			n = n*10 + uint64(d)
			end++
		}
		if end == limit && end < len(s) {
			if d := s[end] - '0'; d <= 9 {
				hi, lo := bits.Mul64(n, 10)
				var carry uint64
				n, carry = bits.Add64(lo, uint64(d), 0)
				end++
				if hi|carry != 0 || end < len(s) && s[end]-'0' <= 9 {
					return offDelivered + f, i
				}
			}
		}
		if end == i || end-i > 1 && s[i] == '0' ||
			f < offTimestamp-offDelivered && n == 0 ||
			f == offTimestamp-offDelivered && n > math.MaxInt64 {
			return offDelivered + f, i
		}
		nums[f] = n
		if f == len(nums)-1 {
			if end != len(s) {
				return offDelivered + f, i
			}
			break
		}
		if end == len(s) || s[end] != '.' {
			return offDelivered + f, i
		}
		i = end + 1
	}
	info.Delivered, info.StreamSeq, info.ConsumerSeq = nums[0], nums[1], nums[2]
	info.Timestamp, info.Pending = int64(nums[3]), nums[4]
	return -1, 0
}

// prefixFault names the fault of a subject that does not start with
// ackPrefix: token 0, a subject of one token, token 1, or (for "$JS.ACK"
// itself) the token count.
func prefixFault(s string) *SyntaxError {
	tok0, rest, more := strings.Cut(s, ".")
	if r := checkLiteral(tok0, "$JS", RulePrefix); r != 0 {
		return &SyntaxError{Index: 0, Field: FieldPrefix, Rule: r}
	}
	if !more {
		return &SyntaxError{Index: -1, Field: FieldSubject, Rule: RuleTokenCount}
	}
	tok1, _, _ := strings.Cut(rest, ".")
	if r := checkLiteral(tok1, "ACK", RulePrefix); r != 0 {
		return &SyntaxError{Index: 1, Field: FieldPrefix, Rule: r}
	}
	return &SyntaxError{Index: -1, Field: FieldSubject, Rule: RuleTokenCount}
}

// headFault names the fault of a subject of v2Tokens tokens whose tokens
// 2 and 3 are not the v2 domain and account hash.
func headFault(s string) *SyntaxError {
	tok2, rest, _ := strings.Cut(s[len(ackPrefix):], ".")
	if r := checkLiteral(tok2, noDomain, RuleDomain); r != 0 {
		return &SyntaxError{Index: v2DomainIndex, Field: FieldDomain, Rule: r}
	}
	tok3, _, _ := strings.Cut(rest, ".")
	return &SyntaxError{Index: v2HashIndex, Field: FieldAccountHash, Rule: checkHash(tok3)}
}

// fault names the rule broken by the token scanTail stopped at: the token
// at offset off from the stream token (at token index base+off), whose
// first byte is s[at].
func fault(s string, base, off, at int) *SyntaxError {
	tok, _, _ := strings.Cut(s[at:], ".")
	var r Rule
	switch off {
	case offStream, offConsumer:
		r = checkName(tok)
	case offTimestamp:
		r = numberRule(tok, 0, math.MaxInt64)
	case offPending:
		r = numberRule(tok, 0, math.MaxUint64)
	default:
		r = numberRule(tok, 1, math.MaxUint64)
	}
	return &SyntaxError{Index: base + off, Field: FieldStream + Field(off), Rule: r}
}
