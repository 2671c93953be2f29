package jsonlex

import "unicode/utf8"

// String reads the string whose opening quote is b[i]. It returns its
// contents (the bytes between the quotes, aliasing b, capacity cut so an
// append cannot reach b), whether they hold escapes, and the offset past
// the closing quote.
//
// On a fault, end is its offset and err is ErrString (a control
// character, an unknown or malformed escape: at the control character or
// the escape's backslash; the input ending inside the string: len(b)),
// ErrUTF8 (at the first byte of an invalid UTF-8 sequence, or at the
// backslash of an unpaired surrogate), or ErrSyntax when b[i] is not '"'.
func String(b []byte, i int) (raw []byte, esc bool, end int, err error) {
	if i >= len(b) || b[i] != '"' {
		return nil, false, i, ErrSyntax
	}
	start := i + 1
	for j := start; j < len(b); {
		c := b[j]
		switch {
		case c == '"':
			return b[start:j:j], esc, j + 1, nil
		case c == '\\':
			esc = true
			_, n, err := unescape(b, j)
			if err != nil {
				if j+1 == len(b) {
					return nil, false, len(b), ErrString
				}
				return nil, false, j, err
			}
			j += n
		case c < 0x20:
			return nil, false, j, ErrString
		case c < utf8.RuneSelf:
			j++
		default:
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size == 1 {
				return nil, false, j, ErrUTF8
			}
			j += size
		}
	}
	return nil, false, len(b), ErrString
}

// unescape decodes the escape whose backslash is b[i]: the rune and the
// bytes it takes. A \u escape of a high surrogate takes the escaped low
// half after it too; a surrogate alone, or a low half first, is ErrUTF8.
// Any other fault is ErrString.
func unescape(b []byte, i int) (r rune, n int, err error) {
	if i+1 >= len(b) {
		return 0, 0, ErrString
	}
	switch b[i+1] {
	case '"', '\\', '/':
		return rune(b[i+1]), 2, nil
	case 'b':
		return '\b', 2, nil
	case 'f':
		return '\f', 2, nil
	case 'n':
		return '\n', 2, nil
	case 'r':
		return '\r', 2, nil
	case 't':
		return '\t', 2, nil
	case 'u':
	default:
		return 0, 0, ErrString
	}
	hi, ok := hex4(b, i+2)
	switch {
	case !ok:
		return 0, 0, ErrString
	case hi >= 0xDC00 && hi <= 0xDFFF:
		return 0, 0, ErrUTF8 // a low half first
	case hi < 0xD800 || hi > 0xDBFF:
		return hi, 6, nil
	}
	if i+7 >= len(b) || b[i+6] != '\\' || b[i+7] != 'u' {
		return 0, 0, ErrUTF8 // a high half alone
	}
	lo, ok := hex4(b, i+8)
	if !ok || lo < 0xDC00 || lo > 0xDFFF {
		return 0, 0, ErrUTF8
	}
	return 0x10000 + (hi-0xD800)<<10 + (lo - 0xDC00), 12, nil
}

// hex4 reads the four hexadecimal digits at b[i].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// Rune decodes the character at raw[i] of contents String accepted (an
// escape or a UTF-8 sequence) and returns it with the bytes it takes.
func Rune(raw []byte, i int) (r rune, n int) {
	if raw[i] == '\\' {
		r, n, _ = unescape(raw, i)
		return r, n
	}
	if raw[i] < utf8.RuneSelf {
		return rune(raw[i]), 1
	}
	return utf8.DecodeRune(raw[i:])
}

// AppendUnescaped appends the decoded text of contents String accepted to
// dst. The text is never longer than raw, so a dst with len(raw) bytes of
// spare capacity does not grow.
func AppendUnescaped(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			dst = append(dst, raw[i])
			i++
			continue
		}
		r, n, _ := unescape(raw, i)
		dst = utf8.AppendRune(dst, r)
		i += n
	}
	return dst
}

// Equal reports whether contents String accepted (esc: whether they hold
// escapes) decode to want, byte for byte, without allocating.
func Equal(raw []byte, esc bool, want string) bool {
	if !esc {
		return string(raw) == want
	}
	j := 0
	var rb [utf8.UTFMax]byte
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			if j >= len(want) || want[j] != raw[i] {
				return false
			}
			i++
			j++
			continue
		}
		r, n, _ := unescape(raw, i)
		m := utf8.EncodeRune(rb[:], r)
		if j+m > len(want) || string(rb[:m]) != want[j:j+m] {
			return false
		}
		i += n
		j += m
	}
	return j == len(want)
}

// EqualRaw reports whether two contents String accepted decode to the same
// text, without allocating.
func EqualRaw(a []byte, aesc bool, b []byte, besc bool) bool {
	if !aesc && !besc {
		return string(a) == string(b)
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ra, na := Rune(a, i)
		rb, nb := Rune(b, j)
		if ra != rb {
			return false
		}
		i += na
		j += nb
	}
	return i == len(a) && j == len(b)
}
