package parser

import (
	"bytes"
	"io"
)

// Parser decodes server frames from one reader into Frames that alias its
// fixed buffer. A Parser is not safe for concurrent use.
type Parser struct {
	rd  io.Reader
	lim Limits
	buf []byte
	// start and end delimit the unread bytes buf[start:end].
	start, end int
	// off is the stream offset of buf[start].
	off int64
	// rerr is the reader's error, reported once the buffered bytes run out.
	rerr error
	// err is final: once set, every Next returns it.
	err  error
	args [maxArgs]span
}

// New returns a Parser reading r under lim. Its buffer is allocated here,
// once, with lim.BufferSize() bytes. When lim is invalid (see Limits) nothing
// is allocated and the first Next returns an error wrapping ErrInvalidLimits.
func New(r io.Reader, lim Limits) *Parser {
	p := &Parser{rd: r, lim: lim}
	if err := lim.Validate(); err != nil {
		p.err = err
		return p
	}
	p.buf = make([]byte, lim.BufferSize())
	return p
}

// Reset discards buffered input and any error (other than invalid limits)
// and makes the Parser read r from offset 0, reusing its buffer.
func (p *Parser) Reset(r io.Reader) {
	p.rd = r
	p.start, p.end, p.off = 0, 0, 0
	p.rerr = nil
	p.err = p.lim.Validate()
}

// Next reads and returns the next frame. The frame's slices are valid until
// the next call to Next or Reset.
//
// It returns io.EOF when the input ends cleanly between frames. Every other
// failure is an [*Error]: a grammar or cap violation (matching ErrMalformed,
// ErrUnknownOp, ErrLineTooLong, ErrHeaderTooLarge or ErrPayloadTooLarge),
// an input that ends inside a frame (io.ErrUnexpectedEOF) or the reader's
// own error. Every error, io.EOF included, is final: later calls return it
// again without reading.
//
// Sizes are checked against the limits as soon as the control line is
// complete, before any of the frame's body is read.
func (p *Parser) Next() (f Frame, err error) {
	if p.err != nil {
		return Frame{}, p.err
	}
	if err := p.next(&f); err != nil {
		p.err = err
		return Frame{}, err
	}
	return f, nil
}

// Buffered returns the number of bytes read from the reader but not yet
// returned in a frame.
func (p *Parser) Buffered() int { return p.end - p.start }

// Offset returns the stream offset of the next frame.
func (p *Parser) Offset() int64 { return p.off }

func (p *Parser) next(f *Frame) error {
	if p.start == p.end {
		p.start, p.end = 0, 0
	}
	n, err := p.readLine()
	if err != nil {
		return err
	}
	line := p.buf[p.start : p.start+n-1]
	bareLF := len(line) == 0 || line[len(line)-1] != '\r'
	if !bareLF {
		line = line[:len(line)-1]
		// Fast paths for the frames that carry messages.
		if len(line) > 4 && string(line[:4]) == "MSG " {
			return p.msg(f, line, n)
		}
		if len(line) > 5 && string(line[:5]) == "HMSG " {
			return p.hmsg(f, line, n)
		}
	}
	word := line
	if i := bytes.IndexByte(line, ' '); i >= 0 {
		word = line[:i]
	}
	op := lookupOp(word)
	if op == 0 {
		return p.fail(0, unknownReason(p.buf[p.start:p.start+n]), ErrUnknownOp)
	}
	if bareLF {
		return p.fail(op, "control line ended by a bare LF", ErrMalformed)
	}
	switch op {
	case OpMsg:
		return p.msg(f, line, n)
	case OpHMsg:
		return p.hmsg(f, line, n)
	case OpInfo:
		return p.info(f, line, n)
	case OpErr:
		return p.errFrame(f, line, n)
	}
	if len(line) != len(word) {
		return p.fail(op, "arguments after an op that takes none", ErrMalformed)
	}
	p.consume(n)
	f.Op = op
	return nil
}

// lookupOp maps an op name, exactly as the server spells it, to its Op.
func lookupOp(word []byte) Op {
	switch string(word) {
	case "MSG":
		return OpMsg
	case "HMSG":
		return OpHMsg
	case "PING":
		return OpPing
	case "PONG":
		return OpPong
	case "+OK":
		return OpOK
	case "-ERR":
		return OpErr
	case "INFO":
		return OpInfo
	}
	return 0
}

func (p *Parser) consume(n int) {
	p.start += n
	p.off += int64(n)
}

// msg decodes "MSG <subject> <sid> [<reply>] <size>" (line without CRLF, n
// bytes with it) and its payload. splitArgs skips an empty reply token (two
// spaces before the size), so it leaves f.Reply nil as an absent one does.
func (p *Parser) msg(f *Frame, line []byte, n int) error {
	if len(line) < len("MSG ") {
		return p.fail(OpMsg, "missing arguments", ErrMalformed)
	}
	na, reason := splitArgs(line[len("MSG "):], len("MSG "), maxMsgArgs, &p.args)
	if na < 0 {
		return p.fail(OpMsg, reason, ErrMalformed)
	}
	if na != 3 && na != 4 {
		return p.fail(OpMsg, "want 3 or 4 arguments", ErrMalformed)
	}
	a := &p.args
	sz := a[na-1]
	size := parseSize(line[sz.start:sz.end])
	if size < 0 {
		return p.fail(OpMsg, msgSizeDigits, ErrMalformed)
	}
	if size > p.lim.MaxPayload {
		return p.fail(OpMsg, "payload over cap", ErrPayloadTooLarge)
	}
	total := n + size + 2
	if err := p.ensure(total); err != nil {
		return p.readErr(OpMsg)
	}
	b := p.buf[p.start : p.start+total]
	if b[total-2] != '\r' || b[total-1] != '\n' {
		return p.fail(OpMsg, "payload not followed by CRLF", ErrMalformed)
	}
	*f = Frame{
		Op:      OpMsg,
		Subject: b[a[0].start:a[0].end:a[0].end],
		SID:     b[a[1].start:a[1].end:a[1].end],
		Payload: b[n : n+size : n+size],
	}
	if na == 4 {
		f.Reply = b[a[2].start:a[2].end:a[2].end]
	}
	p.consume(total)
	return nil
}

// hmsg decodes "HMSG <subject> <sid> [<reply>] <hdr> <total>", its header
// block and its payload. The reply token may be empty as in msg.
func (p *Parser) hmsg(f *Frame, line []byte, n int) error {
	if len(line) < len("HMSG ") {
		return p.fail(OpHMsg, "missing arguments", ErrMalformed)
	}
	na, reason := splitArgs(line[len("HMSG "):], len("HMSG "), maxArgs, &p.args)
	if na < 0 {
		return p.fail(OpHMsg, reason, ErrMalformed)
	}
	if na != 4 && na != 5 {
		return p.fail(OpHMsg, "want 4 or 5 arguments", ErrMalformed)
	}
	a := &p.args
	hs, ts := a[na-2], a[na-1]
	hdr := parseSize(line[hs.start:hs.end])
	size := parseSize(line[ts.start:ts.end])
	switch {
	case hdr < 0 || size < 0:
		return p.fail(OpHMsg, msgSizeDigits, ErrMalformed)
	case hdr > size:
		return p.fail(OpHMsg, "header size over total size", ErrMalformed)
	case hdr > p.lim.MaxHeader:
		return p.fail(OpHMsg, "header block over cap", ErrHeaderTooLarge)
	case size-hdr > p.lim.MaxPayload:
		return p.fail(OpHMsg, "payload over cap", ErrPayloadTooLarge)
	case hdr < minHeaderBlock:
		return p.fail(OpHMsg, "header size below the shortest block", ErrMalformed)
	}
	total := n + size + 2
	if err := p.ensure(total); err != nil {
		return p.readErr(OpHMsg)
	}
	b := p.buf[p.start : p.start+total]
	if b[total-2] != '\r' || b[total-1] != '\n' {
		return p.fail(OpHMsg, "payload not followed by CRLF", ErrMalformed)
	}
	header := b[n : n+hdr : n+hdr]
	status, desc, reason := parseHeader(header)
	if reason != "" {
		return p.fail(OpHMsg, reason, ErrMalformed)
	}
	*f = Frame{
		Op:          OpHMsg,
		Subject:     b[a[0].start:a[0].end:a[0].end],
		SID:         b[a[1].start:a[1].end:a[1].end],
		Header:      header,
		Status:      status,
		Description: desc,
		Payload:     b[n+hdr : n+size : n+size],
	}
	if na == 5 {
		f.Reply = b[a[2].start:a[2].end:a[2].end]
	}
	p.consume(total)
	return nil
}

// info decodes "INFO {json} ": the object is not decoded here, only framed:
// it must start with '{', end with '}' followed by the single space the
// server always writes, and hold no CR.
func (p *Parser) info(f *Frame, line []byte, n int) error {
	const pre = "INFO "
	if len(line) < len(pre)+3 || line[len(pre)] != '{' || line[len(line)-1] != ' ' || line[len(line)-2] != '}' {
		return p.fail(OpInfo, "want INFO {json} with a space before CRLF", ErrMalformed)
	}
	js := line[len(pre) : len(line)-1 : len(line)-1]
	if bytes.IndexByte(js, '\r') >= 0 {
		return p.fail(OpInfo, "carriage return in INFO", ErrMalformed)
	}
	p.consume(n)
	*f = Frame{Op: OpInfo, Info: js}
	return nil
}

// errFrame decodes "-ERR '<text>'"; the text holds no CR.
func (p *Parser) errFrame(f *Frame, line []byte, n int) error {
	const pre = "-ERR '"
	if len(line) < len(pre)+1 || string(line[:len(pre)]) != pre || line[len(line)-1] != '\'' {
		return p.fail(OpErr, "want -ERR '<text>'", ErrMalformed)
	}
	text := line[len(pre) : len(line)-1 : len(line)-1]
	if bytes.IndexByte(text, '\r') >= 0 {
		return p.fail(OpErr, "carriage return in -ERR text", ErrMalformed)
	}
	p.consume(n)
	*f = Frame{Op: OpErr, ErrText: text}
	return nil
}
