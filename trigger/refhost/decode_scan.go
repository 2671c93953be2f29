package refhost

import "unicode/utf8"

// The lexical level of the decoder: numbers and strings, exactly as RFC
// 8259 writes them.

// isDigit reports whether c is an ASCII digit.
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number reads a JSON number and returns its text (aliasing the input) and
// whether it has a fraction or an exponent.
func (d *decoder) number() (tok []byte, frac, exp bool, err error) {
	start, i := d.pos, d.pos
	in := d.in
	if i < len(in) && in[i] == '-' {
		i++
	}
	switch {
	case i < len(in) && in[i] == '0':
		i++
	case i < len(in) && isDigit(in[i]):
		for i < len(in) && isDigit(in[i]) {
			i++
		}
	default:
		return nil, false, false, d.failAt(i, RuleSyntax)
	}
	if i < len(in) && in[i] == '.' {
		i++
		if i >= len(in) || !isDigit(in[i]) {
			return nil, false, false, d.failAt(i, RuleSyntax)
		}
		for i < len(in) && isDigit(in[i]) {
			i++
		}
		frac = true
	}
	if i < len(in) && (in[i] == 'e' || in[i] == 'E') {
		i++
		if i < len(in) && (in[i] == '+' || in[i] == '-') {
			i++
		}
		if i >= len(in) || !isDigit(in[i]) {
			return nil, false, false, d.failAt(i, RuleSyntax)
		}
		for i < len(in) && isDigit(in[i]) {
			i++
		}
		exp = true
	}
	d.pos = i
	return in[start:i:i], frac, exp, nil
}

// str reads a JSON string at d.pos (which holds '"') and returns its
// decoded bytes. Without escapes the result aliases the input; callers
// copy what they keep.
func (d *decoder) str() ([]byte, error) {
	in := d.in
	start := d.pos + 1
	i := start
	for i < len(in) {
		c := in[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return in[start:i:i], nil
		case c == '\\':
			return d.strEscaped(start, i)
		case c < 0x20:
			return nil, d.failAt(i, RuleSyntax)
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && size <= 1 {
				return nil, d.failAt(i, RuleInvalidUTF8)
			}
			i += size
		}
	}
	return nil, d.failAt(i, RuleSyntax)
}

// strEscaped continues str from the first escape at i, the text before it
// starting at start.
func (d *decoder) strEscaped(start, i int) ([]byte, error) {
	in := d.in
	buf := make([]byte, i-start, i-start+16)
	copy(buf, in[start:i])
	for i < len(in) {
		c := in[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return buf, nil
		case c == '\\':
			if i+1 >= len(in) {
				return nil, d.failAt(i+1, RuleSyntax)
			}
			var r rune
			n := 2
			switch in[i+1] {
			case '"', '\\', '/':
				r = rune(in[i+1])
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			case 'u':
				var rule Rule
				r, n, rule = unicodeEscape(in[i:])
				if rule != 0 {
					return nil, d.failAt(i, rule)
				}
			default:
				return nil, d.failAt(i, RuleSyntax)
			}
			buf = utf8.AppendRune(buf, r)
			i += n
		case c < 0x20:
			return nil, d.failAt(i, RuleSyntax)
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			i++
		default:
			r, size := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && size <= 1 {
				return nil, d.failAt(i, RuleInvalidUTF8)
			}
			buf = append(buf, in[i:i+size]...)
			i += size
		}
	}
	return nil, d.failAt(i, RuleSyntax)
}

// unicodeEscape reads "\uXXXX" at the start of b, and its low half when
// it is a high surrogate, returning the rune and the bytes used, or the
// rule broken.
func unicodeEscape(b []byte) (rune, int, Rule) {
	r, ok := hex4(b)
	if !ok {
		return 0, 0, RuleSyntax
	}
	switch {
	case r >= 0xDC00 && r <= 0xDFFF:
		return 0, 0, RuleInvalidUTF8 // a low half first
	case r < 0xD800 || r > 0xDBFF:
		return r, 6, 0
	}
	lo, ok := hex4(b[6:])
	if !ok || lo < 0xDC00 || lo > 0xDFFF {
		return 0, 0, RuleInvalidUTF8 // a high half alone
	}
	return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), 12, 0
}

// hex4 reads "\uXXXX" at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range b[2:6] {
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}
