package parser

import (
	"bytes"
	"io"
)

// The Parser's buffer holds unread bytes in buf[start:end]. A frame is parsed
// in place; when the rest of a frame would run past the end of the buffer,
// the unread bytes move to its front (compact). The buffer is sized for the
// largest frame the limits admit, so a frame always fits once compacted.

// compact moves the unread bytes to the front of the buffer. Slices handed
// out in the previous Frame are no longer valid by then (Next was called).
func (p *Parser) compact() {
	if p.start == 0 {
		return
	}
	p.end = copy(p.buf, p.buf[p.start:p.end])
	p.start = 0
}

// fill performs one successful read into the free tail of the buffer, or
// records the reader's error (io.EOF included) in p.rerr. Bytes that come
// with an error are kept. After maxEmptyReads reads returning (0, nil) it
// records io.ErrNoProgress.
func (p *Parser) fill() {
	for range maxEmptyReads {
		n, err := p.rd.Read(p.buf[p.end:])
		if n < 0 || n > len(p.buf)-p.end {
			p.rerr = ErrBadReadCount
			return
		}
		p.end += n
		if err != nil {
			p.rerr = err
			return
		}
		if n > 0 {
			return
		}
	}
	p.rerr = io.ErrNoProgress
}

// ensure makes at least n unread bytes available; n never exceeds the
// buffer. It returns the pending reader error when the input ends first.
func (p *Parser) ensure(n int) error {
	for p.end-p.start < n {
		if p.rerr != nil {
			return p.rerr
		}
		if p.start+n > len(p.buf) {
			p.compact()
		}
		p.fill()
	}
	return nil
}

// readLine returns the length of the control line at p.start, LF included.
// It never looks past MaxControlLine bytes: a line without LF within that
// many bytes is ErrLineTooLong. While the line is incomplete it rejects early
// a first word that cannot be an op name, so that garbage without an LF is
// reported as such instead of as an overlong line.
func (p *Parser) readLine() (int, error) {
	max := p.lim.MaxControlLine
	scanned := 0
	for {
		limit := p.end - p.start
		if limit > max {
			limit = max
		}
		if i := bytes.IndexByte(p.buf[p.start+scanned:p.start+limit], '\n'); i >= 0 {
			return scanned + i + 1, nil
		}
		scanned = limit
		if err := p.earlyOp(limit); err != nil {
			return 0, err
		}
		if scanned >= max {
			return 0, p.fail(0, "no LF within the cap", ErrLineTooLong)
		}
		if p.rerr != nil {
			if scanned == 0 && p.rerr == io.EOF {
				return 0, io.EOF
			}
			return 0, p.readErr(0)
		}
		if p.start+max > len(p.buf) {
			p.compact()
		}
		p.fill()
	}
}

// earlyOp rejects an incomplete line whose first word already cannot be an
// op name: a word ended by a space or CR that is not a name, or five bytes
// without either (no name is longer than four). It looks at the first
// min(5, avail) bytes only, avail being what readLine may look at, so the
// verdict does not depend on how the input was split into reads. Whatever it
// rejects, the complete line would be rejected as an unknown op too.
func (p *Parser) earlyOp(avail int) error {
	b := p.buf[p.start : p.start+min(avail, 5)]
	for i, c := range b {
		if c == ' ' || c == '\r' {
			if lookupOp(b[:i]) == 0 {
				return p.fail(0, unknownReason(p.buf[p.start:p.end]), ErrUnknownOp)
			}
			return nil
		}
	}
	if len(b) == 5 {
		return p.fail(0, unknownReason(p.buf[p.start:p.end]), ErrUnknownOp)
	}
	return nil
}

// unknownReason names what an unknown first line looks like, when it looks
// like something. Only fixed strings: input bytes never reach an error.
func unknownReason(b []byte) string {
	switch {
	case len(b) >= 2 && b[0] == 0x16 && b[1] == 0x03:
		return "input looks like a TLS handshake record"
	case bytes.HasPrefix(b, []byte("HTTP/")):
		return "input looks like HTTP"
	case len(b) > 0 && (b[0] == '\r' || b[0] == '\n'):
		return "empty line"
	}
	w := b
	if i := bytes.IndexAny(w, " \r\n"); i >= 0 {
		w = w[:i]
	}
	if len(w) <= 4 && lookupOp(bytes.ToUpper(w)) != 0 {
		return "op name not upper case"
	}
	return ""
}

// readErr converts the pending reader error met inside a frame.
func (p *Parser) readErr(op Op) error {
	if p.rerr == io.EOF {
		return p.fail(op, "input ended inside a frame", io.ErrUnexpectedEOF)
	}
	return p.fail(op, "read", p.rerr)
}

// fail builds the error for the frame starting at p.start.
func (p *Parser) fail(op Op, reason string, err error) error {
	return &Error{Op: op, Offset: p.off, Reason: reason, Err: err}
}
