package jsonlex

// isDigit reports whether c is an ASCII digit.
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// NumberStart reports whether c can start a number: '-' or a digit.
func NumberStart(c byte) bool { return c == '-' || isDigit(c) }

// Number reads the number that starts at b[i]: an optional '-', an integer
// part without leading zeros, an optional fraction and an optional
// exponent. It returns the offset past it and whether it has a fraction
// or an exponent; the number's text is b[i:end]. A number ends at the
// first byte that cannot continue it ("01" is the number 0, then 1): the
// caller's grammar refuses what follows. On a fault, end is the offset
// where a digit was wanted and err is ErrSyntax.
func Number(b []byte, i int) (end int, frac, exp bool, err error) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && isDigit(b[i]):
		i = digits(b, i)
	default:
		return i, false, false, ErrSyntax
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return i, false, false, ErrSyntax
		}
		i = digits(b, i)
		frac = true
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return i, false, false, ErrSyntax
		}
		i = digits(b, i)
		exp = true
	}
	return i, frac, exp, nil
}

// digits returns the offset past the run of digits at b[i].
func digits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

// Integer returns the sign and the magnitude of a number that Number
// read without fraction or exponent; ok is false when the magnitude does
// not fit in a uint64. "-0" is negative with magnitude 0: whether that is
// an integer is the caller's rule.
func Integer(tok []byte) (neg bool, mag uint64, ok bool) {
	if len(tok) > 0 && tok[0] == '-' {
		neg = true
		tok = tok[1:]
	}
	for _, c := range tok {
		d := uint64(c - '0')
		if mag > (^uint64(0)-d)/10 {
			return neg, 0, false
		}
		mag = mag*10 + d
	}
	return neg, mag, true
}
