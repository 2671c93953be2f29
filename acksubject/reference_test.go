package acksubject

import (
	"math"
	"strings"
)

// refParse is Parse as it was before the single-pass parser: it splits the
// subject into tokens and checks them one by one with the helpers below.
// It is kept, unchanged but for the names, as the reference the
// differential tests and FuzzParseDifferential compare Parse with; do not
// optimise it.
func refParse(subject string) (Info, error) {
	if len(subject) > MaxLen {
		return Info{}, syntaxError(-1, FieldSubject, RuleTooLong)
	}

	// Split into at most v2Tokens tokens, counting any beyond.
	var tok [v2Tokens]string
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

	if r := refCheckLiteral(tok[0], "$JS", RulePrefix); r != 0 {
		return Info{}, syntaxError(0, FieldPrefix, r)
	}
	if n < 2 {
		return Info{}, syntaxError(-1, FieldSubject, RuleTokenCount)
	}
	if r := refCheckLiteral(tok[1], "ACK", RulePrefix); r != 0 {
		return Info{}, syntaxError(1, FieldPrefix, r)
	}

	var info Info
	switch n {
	case classicTokens:
		info.Form = FormClassic
	case v2Tokens:
		info.Form = FormV2
		if r := refCheckLiteral(tok[v2DomainIndex], noDomain, RuleDomain); r != 0 {
			return Info{}, syntaxError(v2DomainIndex, FieldDomain, r)
		}
		if r := refCheckHash(tok[v2HashIndex]); r != 0 {
			return Info{}, syntaxError(v2HashIndex, FieldAccountHash, r)
		}
		info.AccountHash = tok[v2HashIndex]
	default:
		if n > v2Tokens && tok[v2DomainIndex] != "" && refCheckHash(tok[v2HashIndex]) == 0 {
			return Info{}, syntaxError(-1, FieldSubject, RuleExtended)
		}
		return Info{}, syntaxError(-1, FieldSubject, RuleTokenCount)
	}

	base := info.Form.streamIndex()
	var r Rule
	if r = refCheckName(tok[base+offStream]); r != 0 {
		return Info{}, syntaxError(base+offStream, FieldStream, r)
	}
	info.Stream = tok[base+offStream]
	if r = refCheckName(tok[base+offConsumer]); r != 0 {
		return Info{}, syntaxError(base+offConsumer, FieldConsumer, r)
	}
	info.Consumer = tok[base+offConsumer]
	if info.Delivered, r = refParseCount(tok[base+offDelivered]); r != 0 {
		return Info{}, syntaxError(base+offDelivered, FieldDelivered, r)
	}
	if info.StreamSeq, r = refParseCount(tok[base+offStreamSeq]); r != 0 {
		return Info{}, syntaxError(base+offStreamSeq, FieldStreamSeq, r)
	}
	if info.ConsumerSeq, r = refParseCount(tok[base+offConsumerSeq]); r != 0 {
		return Info{}, syntaxError(base+offConsumerSeq, FieldConsumerSeq, r)
	}
	if info.Timestamp, r = refParseTimestamp(tok[base+offTimestamp]); r != 0 {
		return Info{}, syntaxError(base+offTimestamp, FieldTimestamp, r)
	}
	if info.Pending, r = refParseNumber(tok[base+offPending], math.MaxUint64); r != 0 {
		return Info{}, syntaxError(base+offPending, FieldPending, r)
	}
	return info, nil
}

// refCheckCommon applies the rules every token shares: not empty, not a
// wildcard. It returns 0 when the token passes.
func refCheckCommon(tok string) Rule {
	switch tok {
	case "":
		return RuleEmpty
	case "*", ">":
		return RuleWildcard
	}
	return 0
}

// refCheckLiteral requires tok to be exactly want; rule is the rule
// reported otherwise.
func refCheckLiteral(tok, want string, rule Rule) Rule {
	if r := refCheckCommon(tok); r != 0 {
		return r
	}
	if tok != want {
		return rule
	}
	return 0
}

// refCheckName applies the broker's asset-name rule (isValidAssetName)
// plus the MaxNameLen cap and NUL.
func refCheckName(tok string) Rule {
	if r := refCheckCommon(tok); r != 0 {
		return r
	}
	if len(tok) > MaxNameLen {
		return RuleNameTooLong
	}
	for i := 0; i < len(tok); i++ {
		switch tok[i] {
		case ' ', '\t', '\r', '\n', '\f', '.', '*', '>', '\\', '/', 0:
			return RuleNameByte
		}
	}
	return 0
}

// refCheckHash requires accountHashLen base62 digits.
func refCheckHash(tok string) Rule {
	if r := refCheckCommon(tok); r != 0 {
		return r
	}
	if len(tok) != accountHashLen {
		return RuleAccountHash
	}
	for i := 0; i < len(tok); i++ {
		if !refIsBase62(tok[i]) {
			return RuleAccountHash
		}
	}
	return 0
}

// refIsBase62 reports whether c is one of the digits of the account hash.
func refIsBase62(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
}

// refParseNumber reads a strict decimal of at most max: no sign, ASCII
// digits only, no leading zero, no overflow.
func refParseNumber(tok string, max uint64) (uint64, Rule) {
	if r := refCheckCommon(tok); r != 0 {
		return 0, r
	}
	if tok[0] == '+' || tok[0] == '-' {
		return 0, RuleSign
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return 0, RuleNotDecimal
		}
	}
	if len(tok) > 1 && tok[0] == '0' {
		return 0, RuleLeadingZero
	}
	var n uint64
	for i := 0; i < len(tok); i++ {
		d := uint64(tok[i] - '0')
		if n > (max-d)/10 {
			return 0, RuleOverflow
		}
		n = n*10 + d
	}
	return n, 0
}

// refParseCount reads a delivery count or sequence: a uint64 of at least 1.
func refParseCount(tok string) (uint64, Rule) {
	n, r := refParseNumber(tok, math.MaxUint64)
	if r == 0 && n == 0 {
		return 0, RuleZero
	}
	return n, r
}

// refParseTimestamp reads Unix nanoseconds: an int64 of at least 0.
func refParseTimestamp(tok string) (int64, Rule) {
	n, r := refParseNumber(tok, math.MaxInt64)
	return int64(n), r
}
