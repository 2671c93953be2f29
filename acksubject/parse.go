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
// A subject inside the grammar is read in a single pass, left to right,
// with no split into tokens (see scan); a refused subject is then read
// again, token by token, to name the fault.
func Parse(subject string) (info Info, err error) {
	if len(subject) > MaxLen {
		return Info{}, syntaxError(-1, FieldSubject, RuleTooLong)
	}
	var sp spans
	if scan(subject, &info, &sp) {
		info.AccountHash = subject[sp.hash[0]:sp.hash[1]]
		info.Stream = subject[sp.stream[0]:sp.stream[1]]
		info.Consumer = subject[sp.consumer[0]:sp.consumer[1]]
		return info, nil
	}
	return parseTokens(subject)
}

// ParseBytes is Parse for a subject held in a byte slice, with the same
// grammar and the same errors. The bytes are read during the call only:
// the Info's AccountHash, Stream and Consumer are copies, so it allocates
// them (Binding.ParseBytes, for a subject that must name a binding's
// stream and consumer, does not allocate).
func ParseBytes(subject []byte) (Info, error) {
	if len(subject) > MaxLen {
		return Info{}, syntaxError(-1, FieldSubject, RuleTooLong)
	}
	var info Info
	var sp spans
	if scan(subject, &info, &sp) {
		info.AccountHash = string(subject[sp.hash[0]:sp.hash[1]])
		info.Stream = string(subject[sp.stream[0]:sp.stream[1]])
		info.Consumer = string(subject[sp.consumer[0]:sp.consumer[1]])
		return info, nil
	}
	return parseTokens(string(subject))
}

// spans are the places of an Info's text fields in the subject scan read:
// [start, end) byte offsets, {0, 0} for an absent account hash.
type spans struct {
	hash, stream, consumer [2]int
}

// scan reads s in one pass, left to right, into info and reports whether s
// is inside the grammar. It reads every subject inside the grammar into the
// Info Parse returns and refuses every subject outside it, without saying
// why; on refusal info holds whatever was read before the fault.
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
func scan[T text](s T, info *Info, sp *spans) bool {
	const (
		hashAt = len(Prefix) + len(NoDomain) + 1 // first byte of a v2 account hash
		v2Tail = hashAt + AccountHashLen + 1     // first byte after it and its '.'
	)
	if len(s) < len(Prefix) || string(s[:len(Prefix)]) != Prefix {
		return false
	}
	if len(s) > v2Tail && string(s[len(Prefix):hashAt]) == NoDomain+"." && s[v2Tail-1] == '.' && isHash(s[hashAt:v2Tail-1]) {
		info.Form, sp.hash = FormV2, [2]int{hashAt, v2Tail - 1}
		if i, ok := scanNames(s, v2Tail, sp); ok && scanNumbers(s, i, info) {
			return true
		}
	}
	info.Form, sp.hash = FormClassic, [2]int{}
	i, ok := scanNames(s, len(Prefix), sp)
	return ok && scanNumbers(s, i, info)
}

// scanNames reads the stream and consumer tokens that start at s[i], and
// the '.' after each, into sp. It returns the index after the second '.'
// and whether both names obey the asset-name rule and its length cap.
func scanNames[T text](s T, i int, sp *spans) (int, bool) {
	end := nameLen(s, i)
	if end == i || end-i > MaxNameLen || end == len(s) || s[end] != '.' {
		return 0, false
	}
	sp.stream = [2]int{i, end}
	i = end + 1
	end = nameLen(s, i)
	if end == i || end-i > MaxNameLen || end == len(s) || s[end] != '.' {
		return 0, false
	}
	sp.consumer = [2]int{i, end}
	return end + 1, true
}

// scanNumbers reads the five number tokens that end every subject, from
// s[i] to the end of s, into info, and reports whether they obey the
// grammar: strict decimals (at least one digit, no leading zero) whose
// value fits their field, counts and sequences not 0.
//
// A token's digits are added to its value as they are read: eight at a
// time while eight digits follow (at most twice, see eightDigits), then one
// at a time. Up to 19 digits cannot overflow a uint64; a 20th is added with
// an overflow check, and a 21st always overflows.
func scanNumbers[T text](s T, i int, info *Info) bool {
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
					return false
				}
			}
		}
		if end == i || end-i > 1 && s[i] == '0' {
			return false
		}
		nums[f] = n
		if f == len(nums)-1 {
			if end != len(s) {
				return false
			}
			break
		}
		if end == len(s) || s[end] != '.' {
			return false
		}
		i = end + 1
	}
	if nums[0] == 0 || nums[1] == 0 || nums[2] == 0 || nums[3] > math.MaxInt64 {
		return false
	}
	info.Delivered, info.StreamSeq, info.ConsumerSeq = nums[0], nums[1], nums[2]
	info.Timestamp, info.Pending = int64(nums[3]), nums[4]
	return true
}

// parseTokens is Parse for a subject scan refused: it splits the subject
// into tokens and checks them one by one, in the order Parse documents,
// to name the first fault. It reads a subject inside the grammar into the
// same Info as scan.
func parseTokens(subject string) (Info, error) {
	// Split into at most V2Tokens tokens, counting any beyond.
	var tok [V2Tokens]string
	n, rest := 0, subject
	for {
		i := strings.IndexByte(rest, '.')
		if n < len(tok) {
			if i < 0 {
				tok[n] = rest
			} else {
				tok[n] = rest[:i]
			}
		}
		n++
		if i < 0 {
			break
		}
		rest = rest[i+1:]
	}

	if r := checkLiteral(tok[0], "$JS", RulePrefix); r != 0 {
		return Info{}, syntaxError(0, FieldPrefix, r)
	}
	if n < 2 {
		return Info{}, syntaxError(-1, FieldSubject, RuleTokenCount)
	}
	if r := checkLiteral(tok[1], "ACK", RulePrefix); r != 0 {
		return Info{}, syntaxError(1, FieldPrefix, r)
	}

	var info Info
	switch n {
	case ClassicTokens:
		info.Form = FormClassic
	case V2Tokens:
		info.Form = FormV2
		if r := checkLiteral(tok[v2DomainIndex], NoDomain, RuleDomain); r != 0 {
			return Info{}, syntaxError(v2DomainIndex, FieldDomain, r)
		}
		if r := checkHash(tok[v2HashIndex]); r != 0 {
			return Info{}, syntaxError(v2HashIndex, FieldAccountHash, r)
		}
		info.AccountHash = tok[v2HashIndex]
	default:
		return Info{}, syntaxError(-1, FieldSubject, RuleTokenCount)
	}

	base := info.Form.streamIndex()
	var r Rule
	if r = checkName(tok[base+offStream]); r != 0 {
		return Info{}, syntaxError(base+offStream, FieldStream, r)
	}
	info.Stream = tok[base+offStream]
	if r = checkName(tok[base+offConsumer]); r != 0 {
		return Info{}, syntaxError(base+offConsumer, FieldConsumer, r)
	}
	info.Consumer = tok[base+offConsumer]
	if info.Delivered, r = parseCount(tok[base+offDelivered]); r != 0 {
		return Info{}, syntaxError(base+offDelivered, FieldDelivered, r)
	}
	if info.StreamSeq, r = parseCount(tok[base+offStreamSeq]); r != 0 {
		return Info{}, syntaxError(base+offStreamSeq, FieldStreamSeq, r)
	}
	if info.ConsumerSeq, r = parseCount(tok[base+offConsumerSeq]); r != 0 {
		return Info{}, syntaxError(base+offConsumerSeq, FieldConsumerSeq, r)
	}
	if info.Timestamp, r = parseTimestamp(tok[base+offTimestamp]); r != 0 {
		return Info{}, syntaxError(base+offTimestamp, FieldTimestamp, r)
	}
	if info.Pending, r = parseNumber(tok[base+offPending], math.MaxUint64); r != 0 {
		return Info{}, syntaxError(base+offPending, FieldPending, r)
	}
	return info, nil
}
