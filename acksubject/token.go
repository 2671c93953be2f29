package acksubject

import "math/bits"

// text is a subject as Parse (a string) or ParseBytes (a byte slice)
// reads it.
type text interface{ ~string | ~[]byte }

// Classes of a byte, as bits of byteClass.
const (
	// classNotName marks the bytes that end or break a stream or consumer
	// name: the separator '.' and every byte the asset-name rule (plus NUL)
	// forbids.
	classNotName = 1 << iota
	// classBase62 marks the digits of the account hash: 0-9, A-Z, a-z.
	classBase62
)

// byteClass maps each byte to its classes. It is never written.
var byteClass = [256]uint8{
	0: classNotName, '\t': classNotName, '\n': classNotName, '\f': classNotName, '\r': classNotName,
	' ': classNotName, '*': classNotName, '.': classNotName, '/': classNotName, '>': classNotName,
	'\\': classNotName,

	'0': classBase62, '1': classBase62, '2': classBase62, '3': classBase62, '4': classBase62,
	'5': classBase62, '6': classBase62, '7': classBase62, '8': classBase62, '9': classBase62,

	'A': classBase62, 'B': classBase62, 'C': classBase62, 'D': classBase62, 'E': classBase62,
	'F': classBase62, 'G': classBase62, 'H': classBase62, 'I': classBase62, 'J': classBase62,
	'K': classBase62, 'L': classBase62, 'M': classBase62, 'N': classBase62, 'O': classBase62,
	'P': classBase62, 'Q': classBase62, 'R': classBase62, 'S': classBase62, 'T': classBase62,
	'U': classBase62, 'V': classBase62, 'W': classBase62, 'X': classBase62, 'Y': classBase62,
	'Z': classBase62,

	'a': classBase62, 'b': classBase62, 'c': classBase62, 'd': classBase62, 'e': classBase62,
	'f': classBase62, 'g': classBase62, 'h': classBase62, 'i': classBase62, 'j': classBase62,
	'k': classBase62, 'l': classBase62, 'm': classBase62, 'n': classBase62, 'o': classBase62,
	'p': classBase62, 'q': classBase62, 'r': classBase62, 's': classBase62, 't': classBase62,
	'u': classBase62, 'v': classBase62, 'w': classBase62, 'x': classBase62, 'y': classBase62,
	'z': classBase62,
}

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

// CheckName checks a stream or durable consumer name by the broker's
// asset-name rule (nats-server 2.14.6 isValidAssetName and JSMaxNameLen):
// 1 to MaxNameLen bytes, none of space, TAB, CR, LF, FF, '.', '*', '>',
// '\', '/', and no NUL. It returns nil or the Rule the name breaks
// (RuleEmpty, RuleWildcard, RuleNameTooLong, RuleNameByte). It is the rule
// Parse applies to the stream and consumer tokens, and the one home of the
// asset-name rule: the pull layer's ValidName adds what a configuration may
// not carry.
func CheckName(name string) error {
	if r := checkName(name); r != 0 {
		return r
	}
	return nil
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
	if nameLen(tok, 0) != len(tok) {
		return RuleNameByte
	}
	return 0
}

// nameLen returns the index of the first byte of s at or after i that
// cannot be part of a name ('.' or a forbidden byte), or len(s). It looks
// up eight bytes per step and finds the first such byte among them from
// the word of their classes.
func nameLen[T text](s T, i int) int {
	for ; len(s)-i >= 8; i += 8 {
		w := s[i : i+8]
		c := uint64(byteClass[w[0]]) | uint64(byteClass[w[1]])<<8 |
			uint64(byteClass[w[2]])<<16 | uint64(byteClass[w[3]])<<24 |
			uint64(byteClass[w[4]])<<32 | uint64(byteClass[w[5]])<<40 |
			uint64(byteClass[w[6]])<<48 | uint64(byteClass[w[7]])<<56
		if stop := c & (classNotName * ones); stop != 0 {
			return i + bits.TrailingZeros64(stop)>>3
		}
	}
	for ; i < len(s); i++ {
		if byteClass[s[i]]&classNotName != 0 {
			break
		}
	}
	return i
}

// checkHash requires accountHashLen base62 digits.
func checkHash(tok string) Rule {
	if r := checkCommon(tok); r != 0 {
		return r
	}
	if !isHash(tok) {
		return RuleAccountHash
	}
	return 0
}

// isHash reports whether tok is accountHashLen base62 digits.
func isHash[T text](tok T) bool {
	if len(tok) != accountHashLen {
		return false
	}
	w := tok[:accountHashLen]
	return byteClass[w[0]]&byteClass[w[1]]&byteClass[w[2]]&byteClass[w[3]]&
		byteClass[w[4]]&byteClass[w[5]]&byteClass[w[6]]&byteClass[w[7]]&classBase62 != 0
}

// numberRule names the rule a number token breaks, or returns 0: a
// strict decimal (no sign, ASCII digits only, no leading zero) of at
// least least and at most max. The rules are checked in that order, so
// "-0" breaks RuleSign and "012x" RuleNotDecimal.
func numberRule(tok string, least, max uint64) Rule {
	if r := checkCommon(tok); r != 0 {
		return r
	}
	if tok[0] == '+' || tok[0] == '-' {
		return RuleSign
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return RuleNotDecimal
		}
	}
	if len(tok) > 1 && tok[0] == '0' {
		return RuleLeadingZero
	}
	var n uint64
	for i := 0; i < len(tok); i++ {
		d := uint64(tok[i] - '0')
		if n > (max-d)/10 {
			return RuleOverflow
		}
		n = n*10 + d
	}
	if n < least {
		return RuleZero
	}
	return 0
}

// ones has 1 in every byte of a word; c*ones has c in every byte.
const ones = 0x0101010101010101

// load64 returns the first eight bytes of w as a little-endian word.
func load64[T text](w T) uint64 {
	_ = w[7]
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}

// eightDigits reports whether the eight bytes of the word w are all ASCII
// digits (0x30-0x39): each byte's high nibble is 3, and is still 3 once 6
// is added to the byte. Adding 6 carries into the next byte only from a
// byte of 0xfa or more, which fails the first test anyway.
func eightDigits(w uint64) bool {
	return (w&(0xf0*ones))|((w+6*ones)&(0xf0*ones))>>4 == 0x33*ones
}

// eightDigitsValue returns the value of the eight ASCII digits of the
// little-endian word w (most significant digit in the low byte): it
// combines neighbouring digits, then pairs, then quads.
func eightDigitsValue(w uint64) uint64 {
	w = (w & (0x0f * ones)) * (10<<8 + 1) >> 8
	w = (w & 0x00ff00ff00ff00ff) * (100<<16 + 1) >> 16
	return (w & 0x0000ffff0000ffff) * (10000<<32 + 1) >> 32
}
