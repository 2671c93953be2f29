package fakeserver

import (
	"errors"
	"fmt"
)

var (
	// ErrBadConfig is returned by Start for an invalid configuration or
	// script.
	ErrBadConfig = errors.New("fakeserver: invalid configuration")
	// ErrLineTooLong: an expected line exceeded Config.MaxLine.
	ErrLineTooLong = errors.New("fakeserver: line too long")
	// ErrUnexpectedLine: a line did not have the expected prefix or match.
	ErrUnexpectedLine = errors.New("fakeserver: unexpected line")
	// ErrNotTLS: the client's first record was not a TLS ClientHello.
	ErrNotTLS = errors.New("fakeserver: not a TLS client hello")
	// ErrHandshake: the TLS handshake failed.
	ErrHandshake = errors.New("fakeserver: tls handshake failed")
	// ErrHandshakeNotCut: HandshakeCut's limit was not reached, so the
	// handshake completed.
	ErrHandshakeNotCut = errors.New("fakeserver: handshake completed before the cut")
	// ErrClientClosed: the client closed (or reset) the connection while a
	// step needed it.
	ErrClientClosed = errors.New("fakeserver: client closed the connection")
	// ErrIO: another read or write error.
	ErrIO = errors.New("fakeserver: i/o error")
	// ErrStopped: the server was closed or its context ended during a
	// step, or before the connection was accepted.
	ErrStopped = errors.New("fakeserver: server stopped")
	// ErrNoSession: Session was asked for a connection index past
	// Config.MaxConns.
	ErrNoSession = errors.New("fakeserver: no such session")
)

// StepError is the first step of a session that failed.
type StepError struct {
	Index int      // index in the script
	Kind  StepKind // the failed step's kind
	Err   error    // one of the sentinels, possibly wrapping a cause
}

func (e *StepError) Error() string {
	return fmt.Sprintf("fakeserver: step %d (%s): %v", e.Index, e.Kind, e.Err)
}

// Unwrap returns the step's error.
func (e *StepError) Unwrap() error { return e.Err }
