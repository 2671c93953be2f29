package wire

import "strconv"

// Text is the type of the subject and reply arguments of AppendPubText and
// AppendHPubText: a string or a byte slice. The bytes are read during the
// call only and never retained.
type Text interface{ ~string | ~[]byte }

// AppendPubText appends "PUB <subject> [<reply>] <size>\r\n<payload>\r\n".
// subject must pass ValidPublishSubject; reply, when not empty, too
// (ErrInvalidReply); maxPayload is the server's max_payload and must be > 0;
// len(payload) may be at most maxPayload; the control line may be at most
// MaxControlLine bytes. On error dst is returned unchanged. The subject and
// the reply are each a string or a byte slice, so that a caller holding
// either in a reused buffer needs no conversion; it does not allocate when
// dst has room.
func AppendPubText[S, R Text](dst []byte, subject S, reply R, payload []byte, maxPayload int) ([]byte, error) {
	const op = "PUB"
	if err := checkPub(op, subject, reply, len(payload), maxPayload); err != nil {
		return dst, err
	}
	line := len("PUB ") + len(subject) + 1 + digits(len(payload)) + 2
	if len(reply) > 0 {
		line += len(reply) + 1
	}
	if line > MaxControlLine {
		return dst, fail(op, "line", "over the control line cap", ErrLineTooLong)
	}
	dst = append(dst, "PUB "...)
	dst = append(dst, subject...)
	dst = append(dst, ' ')
	if len(reply) > 0 {
		dst = append(dst, reply...)
		dst = append(dst, ' ')
	}
	dst = strconv.AppendInt(dst, int64(len(payload)), 10)
	dst = append(dst, "\r\n"...)
	dst = append(dst, payload...)
	return append(dst, "\r\n"...), nil
}

// AppendHPubText appends "HPUB <subject> [<reply>] <hdr> <total>\r\n<header><payload>\r\n".
// header must be a complete block as AppendHeader builds it ("NATS/1.0\r\n",
// "Name: Value\r\n" lines, "\r\n"), at most MaxOutboundHeader bytes; the header
// block and payload together may be at most maxPayload, as the server counts
// them. Other rules, and the subject and reply as strings or byte slices, as
// AppendPubText. On error dst is returned unchanged.
func AppendHPubText[S, R Text](dst []byte, subject S, reply R, header, payload []byte, maxPayload int) ([]byte, error) {
	const op = "HPUB"
	total := len(header) + len(payload)
	if err := checkPub(op, subject, reply, total, maxPayload); err != nil {
		return dst, err
	}
	if err := checkHeaderBlock(op, header); err != nil {
		return dst, err
	}
	line := len("HPUB ") + len(subject) + 1 + digits(len(header)) + 1 + digits(total) + 2
	if len(reply) > 0 {
		line += len(reply) + 1
	}
	if line > MaxControlLine {
		return dst, fail(op, "line", "over the control line cap", ErrLineTooLong)
	}
	dst = append(dst, "HPUB "...)
	dst = append(dst, subject...)
	dst = append(dst, ' ')
	if len(reply) > 0 {
		dst = append(dst, reply...)
		dst = append(dst, ' ')
	}
	dst = strconv.AppendInt(dst, int64(len(header)), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(total), 10)
	dst = append(dst, "\r\n"...)
	dst = append(dst, header...)
	dst = append(dst, payload...)
	return append(dst, "\r\n"...), nil
}

// checkPub applies the rules PUB and HPUB share; size is what the server
// compares with max_payload.
func checkPub[S, R Text](op string, subject S, reply R, size, maxPayload int) error {
	if r := subjectReason(subject, false); r != "" {
		return fail(op, "subject", r, ErrInvalidSubject)
	}
	if len(reply) > 0 {
		if r := subjectReason(reply, false); r != "" {
			return fail(op, "reply", r, ErrInvalidReply)
		}
	}
	if maxPayload <= 0 {
		return fail(op, "max payload", "not positive", ErrInvalidMaxPayload)
	}
	if size > maxPayload || size > MaxSize {
		return fail(op, "payload", "over the maximum", ErrPayloadTooLarge)
	}
	return nil
}

// digits is the length of the decimal form of n >= 0.
func digits(n int) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}
