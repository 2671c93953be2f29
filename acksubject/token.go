package acksubject

import "math"

// checkCommon applies the rules every token shares: not empty, not a
// wildcard. It returns 0 when the token passes.
func checkCommon(tok string) Rule {
	switch tok {
	case "":
		return RuleEmpty
	case "*", ">":
		return RuleWildcard
	}
	return 0
}

// checkLiteral requires tok to be exactly want; rule is the rule reported
// otherwise.
func checkLiteral(tok, want string, rule Rule) Rule {
	if r := checkCommon(tok); r != 0 {
		return r
	}
	if tok != want {
		return rule
	}
	return 0
}

// checkName applies the broker's asset-name rule (isValidAssetName) plus
// the MaxNameLen cap and NUL. '.' cannot reach it from Parse but can from an
// Info.
func checkName(tok string) Rule {
	if r := checkCommon(tok); r != 0 {
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

// checkHash requires AccountHashLen base62 digits.
func checkHash(tok string) Rule {
	if r := checkCommon(tok); r != 0 {
		return r
	}
	if len(tok) != AccountHashLen {
		return RuleAccountHash
	}
	for i := 0; i < len(tok); i++ {
		if !isBase62(tok[i]) {
			return RuleAccountHash
		}
	}
	return 0
}

// isBase62 reports whether c is one of the digits of the account hash.
func isBase62(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
}

// parseNumber reads a strict decimal of at most max: no sign, ASCII digits
// only, no leading zero, no overflow.
func parseNumber(tok string, max uint64) (uint64, Rule) {
	if r := checkCommon(tok); r != 0 {
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

// parseCount reads a delivery count or sequence: a uint64 of at least 1.
func parseCount(tok string) (uint64, Rule) {
	n, r := parseNumber(tok, math.MaxUint64)
	if r == 0 && n == 0 {
		return 0, RuleZero
	}
	return n, r
}

// parseTimestamp reads Unix nanoseconds: an int64 of at least 0.
func parseTimestamp(tok string) (int64, Rule) {
	n, r := parseNumber(tok, math.MaxInt64)
	return int64(n), r
}
