package wire

// AppendSub appends "SUB <subject> <sid>\r\n". subject is one or more
// tokens separated by '.', none empty, with no space, ASCII control byte or
// DEL, a '*' only as a whole token and a '>' only as the whole last token
// (ErrInvalidSubject); sid is one or more bytes, none of them
// space, an ASCII control byte or DEL. On error dst is returned unchanged.
func AppendSub(dst []byte, subject, sid string) ([]byte, error) {
	const op = "SUB"
	if r := subjectReason(subject, true); r != "" {
		return dst, fail(op, "subject", r, ErrInvalidSubject)
	}
	if r := tokenReason(sid); r != "" {
		return dst, fail(op, "sid", r, ErrInvalidSID)
	}
	if len("SUB ")+len(subject)+1+len(sid)+2 > MaxControlLine {
		return dst, fail(op, "line", "over the control line cap", ErrLineTooLong)
	}
	dst = append(dst, "SUB "...)
	dst = append(dst, subject...)
	dst = append(dst, ' ')
	dst = append(dst, sid...)
	return append(dst, "\r\n"...), nil
}
