package acksubject

import (
	"math"
	"strings"
)

// Parse reads an acknowledgement subject of the classic or the v2 form
// (see the package documentation for the grammar). It does not allocate:
// Stream, Consumer and AccountHash alias subject.
//
// A subject outside the grammar yields a *SyntaxError, matched by
// ErrInvalid, that names the first failing token in this order: the length,
// tokens 0 and 1, the token count, then the remaining tokens left to right.
func Parse(subject string) (Info, error) {
	if len(subject) > MaxLen {
		return Info{}, syntaxError(-1, FieldSubject, RuleTooLong)
	}

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
