package wire

const (
	headerLine = "NATS/1.0\r\n"
	// minHeaderBlock is "NATS/1.0\r\n\r\n".
	minHeaderBlock = len(headerLine) + 2
)

// AppendHeader appends a header block built from name, value pairs:
// "NATS/1.0\r\n", then "Name: Value\r\n" for each pair in order (names may
// repeat), then "\r\n". With no pairs it appends the minimal 12-byte block.
//
// A name is one or more bytes from '!' to '~' other than ':' (an HTTP-style
// token, case preserved). A value is one or more bytes, none of them space,
// an ASCII control byte or DEL: values are validated, never trimmed or
// escaped. The block may be at most MaxOutboundHeader bytes. On error dst is
// returned unchanged.
func AppendHeader(dst []byte, kv ...string) ([]byte, error) {
	const op = "HEADER"
	if len(kv)%2 != 0 {
		return dst, fail(op, "pairs", "odd number of names and values", ErrInvalidHeader)
	}
	size := minHeaderBlock
	for i := 0; i < len(kv); i += 2 {
		if r := nameReason(kv[i]); r != "" {
			return dst, fail(op, "name", r, ErrInvalidHeader)
		}
		if r := valueReason(kv[i+1]); r != "" {
			return dst, fail(op, "value", r, ErrInvalidHeader)
		}
		size += len(kv[i]) + 2 + len(kv[i+1]) + 2
		if size > MaxOutboundHeader {
			return dst, fail(op, "block", "over the header cap", ErrHeaderTooLarge)
		}
	}
	dst = append(dst, headerLine...)
	for i := 0; i < len(kv); i += 2 {
		dst = append(dst, kv[i]...)
		dst = append(dst, ": "...)
		dst = append(dst, kv[i+1]...)
		dst = append(dst, "\r\n"...)
	}
	return append(dst, "\r\n"...), nil
}

// nameReason checks a header name.
func nameReason(s string) string {
	if s == "" {
		return "empty"
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < '!' || c > '~' || c == ':' {
			return "not a token"
		}
	}
	return ""
}

// valueReason checks a header value.
func valueReason(s string) string {
	if s == "" {
		return "empty"
	}
	for i := 0; i < len(s); i++ {
		if forbidden(s[i]) {
			return "forbidden byte"
		}
	}
	return ""
}

// checkHeaderBlock accepts exactly what AppendHeader produces.
func checkHeaderBlock(op string, b []byte) error {
	if len(b) > MaxOutboundHeader {
		return fail(op, "header", "over the header cap", ErrHeaderTooLarge)
	}
	if len(b) < minHeaderBlock || string(b[:len(headerLine)]) != headerLine ||
		string(b[len(b)-2:]) != "\r\n" {
		return fail(op, "header", "not a NATS/1.0 block ended by a blank line", ErrInvalidHeader)
	}
	rest := b[len(headerLine) : len(b)-2]
	for len(rest) > 0 {
		end := -1
		for i := 0; i+1 < len(rest); i++ {
			if rest[i] == '\r' && rest[i+1] == '\n' {
				end = i
				break
			}
		}
		if end < 0 {
			return fail(op, "header", "line not ended by CRLF", ErrInvalidHeader)
		}
		line := string(rest[:end])
		rest = rest[end+2:]
		colon := -1
		for i := 0; i+1 < len(line); i++ {
			if line[i] == ':' && line[i+1] == ' ' {
				colon = i
				break
			}
		}
		if colon < 0 {
			return fail(op, "header", "line not Name: Value", ErrInvalidHeader)
		}
		if r := nameReason(line[:colon]); r != "" {
			return fail(op, "header name", r, ErrInvalidHeader)
		}
		if r := valueReason(line[colon+2:]); r != "" {
			return fail(op, "header value", r, ErrInvalidHeader)
		}
	}
	return nil
}
