package wire

import "errors"

// Sentinels for the conditions callers branch on; every error an encoder
// returns is an [*Error] wrapping one of them.
var (
	// ErrInvalidSubject: empty, empty token, forbidden byte, misplaced
	// wildcard, or a wildcard in a publish subject.
	ErrInvalidSubject = errors.New("wire: invalid subject")
	// ErrInvalidReply: a reply subject that is not a valid publish subject.
	ErrInvalidReply = errors.New("wire: invalid reply subject")
	// ErrInvalidSID: an empty subscription id or one with a forbidden byte.
	ErrInvalidSID = errors.New("wire: invalid subscription id")
	// ErrInvalidHeader: a header name that is not a token, a value with a
	// forbidden byte, an odd key/value list, or a block off the grammar.
	ErrInvalidHeader = errors.New("wire: invalid header")
	// ErrHeaderTooLarge: a header block over MaxOutboundHeader.
	ErrHeaderTooLarge = errors.New("wire: header block too large")
	// ErrPayloadTooLarge: payload (with the header block for HPUB) over the
	// negotiated maximum.
	ErrPayloadTooLarge = errors.New("wire: payload too large")
	// ErrInvalidMaxPayload: a maximum payload <= 0.
	ErrInvalidMaxPayload = errors.New("wire: invalid maximum payload")
	// ErrLineTooLong: a control line over MaxControlLine.
	ErrLineTooLong = errors.New("wire: control line too long")
	// ErrInvalidConnect: CONNECT options the server would refuse.
	ErrInvalidConnect = errors.New("wire: invalid connect options")
)

// Error is a refused encoding: which op and which argument, and why. It never
// carries the refused bytes.
type Error struct {
	// Op is the operation being encoded ("PUB", "HPUB", "SUB", ...).
	Op string
	// Field is the argument that failed ("subject", "reply", "sid", ...).
	Field string
	// Reason is a fixed description of the rule that failed.
	Reason string
	// Err is one of the package sentinels.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	s := e.Err.Error() + ": " + e.Op + " " + e.Field
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

func fail(op, field, reason string, err error) *Error {
	return &Error{Op: op, Field: field, Reason: reason, Err: err}
}
