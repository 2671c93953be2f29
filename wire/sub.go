package wire

import "strconv"

// AppendSub appends "SUB <subject> <sid>\r\n". subject is one or more
// tokens separated by '.', none empty, with no space, ASCII control byte or
// DEL, a '*' only as a whole token and a '>' only as the whole last token
// (ErrInvalidSubject); sid is one or more bytes, none of them
// space, an ASCII control byte or DEL. On error dst is returned unchanged.
func AppendSub(dst []byte, subject, sid string) ([]byte, error) {
	return appendSub(dst, "SUB", subject, "", sid)
}

// appendQueueSub appends "SUB <subject> <queue> <sid>\r\n"; queue follows
// the sid rules (errInvalidQueue). On error dst is returned unchanged.
func appendQueueSub(dst []byte, subject, queue, sid string) ([]byte, error) {
	if r := tokenReason(queue); r != "" {
		return dst, fail("SUB", "queue", r, errInvalidQueue)
	}
	return appendSub(dst, "SUB", subject, queue, sid)
}

func appendSub(dst []byte, op, subject, queue, sid string) ([]byte, error) {
	if r := subjectReason(subject, true); r != "" {
		return dst, fail(op, "subject", r, ErrInvalidSubject)
	}
	if r := tokenReason(sid); r != "" {
		return dst, fail(op, "sid", r, ErrInvalidSID)
	}
	line := len("SUB ") + len(subject) + 1 + len(sid) + 2
	if queue != "" {
		line += len(queue) + 1
	}
	if line > MaxControlLine {
		return dst, fail(op, "line", "over the control line cap", ErrLineTooLong)
	}
	dst = append(dst, "SUB "...)
	dst = append(dst, subject...)
	dst = append(dst, ' ')
	if queue != "" {
		dst = append(dst, queue...)
		dst = append(dst, ' ')
	}
	dst = append(dst, sid...)
	return append(dst, "\r\n"...), nil
}

// appendUnsub appends "UNSUB <sid>\r\n" when max is 0, or
// "UNSUB <sid> <max>\r\n" (unsubscribe after max messages in total) when max
// is positive. A negative max is errInvalidUnsubMax. On error dst is
// returned unchanged.
func appendUnsub(dst []byte, sid string, max int) ([]byte, error) {
	const op = "UNSUB"
	if r := tokenReason(sid); r != "" {
		return dst, fail(op, "sid", r, ErrInvalidSID)
	}
	if max < 0 {
		return dst, fail(op, "max", "negative", errInvalidUnsubMax)
	}
	line := len("UNSUB ") + len(sid) + 2
	if max > 0 {
		line += 1 + digits(max)
	}
	if line > MaxControlLine {
		return dst, fail(op, "line", "over the control line cap", ErrLineTooLong)
	}
	dst = append(dst, "UNSUB "...)
	dst = append(dst, sid...)
	if max > 0 {
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(max), 10)
	}
	return append(dst, "\r\n"...), nil
}
