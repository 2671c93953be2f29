package parser

import (
	"errors"
	"strconv"
)

// Sentinels for the conditions callers branch on. Every error returned by
// [Parser.Next] other than io.EOF is an [*Error] wrapping one of these,
// io.ErrUnexpectedEOF or the reader's own error.
var (
	// ErrLineTooLong: no LF within the control-line cap (CRLF included).
	ErrLineTooLong = errors.New("parser: control line too long")
	// ErrHeaderTooLarge: an HMSG announced a header block over the cap.
	ErrHeaderTooLarge = errors.New("parser: header block too large")
	// ErrPayloadTooLarge: a MSG or HMSG announced a payload over the cap.
	ErrPayloadTooLarge = errors.New("parser: payload too large")
	// ErrUnknownOp: the control line does not start with a known op name.
	ErrUnknownOp = errors.New("parser: unknown operation")
	// ErrMalformed: a known op whose line, sizes, header block or framing
	// break the grammar.
	ErrMalformed = errors.New("parser: malformed frame")
	// ErrInvalidLimits: the Limits given to New or the header cap given to
	// ParseHeader are out of range.
	ErrInvalidLimits = errors.New("parser: invalid limits")
	// ErrBadReadCount: the reader returned a count outside its buffer. (A
	// reader that returns no data and no error too many times in a row is
	// io.ErrNoProgress, the standard library's word for it.)
	ErrBadReadCount = errors.New("parser: reader returned an invalid count")
)

// Error is a grammar or limit failure. It carries the frame being decoded and
// where it started, never bytes of the input.
type Error struct {
	// Op is the frame being decoded, 0 when the op itself was not recognised.
	Op Op
	// Offset is the stream offset of the first byte of that frame.
	Offset int64
	// Reason is a fixed description of the rule that failed.
	Reason string
	// Err is one of the package sentinels, io.ErrUnexpectedEOF when the input
	// ended inside the frame, or the reader's own error.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	s := e.Err.Error()
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Op != 0 {
		s += " in " + e.Op.String()
	}
	return s + " frame at offset " + strconv.FormatInt(e.Offset, 10)
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }
