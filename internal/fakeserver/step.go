package fakeserver

import (
	"bytes"
	"fmt"
	"regexp"
)

// StepKind names what a step does.
type StepKind int

const (
	// StepSend writes bytes at the current layer (inside TLS after the
	// handshake).
	StepSend StepKind = iota + 1
	// StepSendRaw writes bytes on the raw socket, outside TLS.
	StepSendRaw
	// StepExpectPrefix reads one line that must start with a prefix.
	StepExpectPrefix
	// StepExpectMatch reads one line that must match a regular expression.
	StepExpectMatch
	// StepHandshake runs the TLS server handshake.
	StepHandshake
	// StepHandshakeCut runs the handshake and cuts the connection after a
	// number of bytes written by the server.
	StepHandshakeCut
	// StepReadClientHello reads the client's first TLS record raw.
	StepReadClientHello
	// StepSendAlert writes a fatal TLS alert record on the raw socket.
	StepSendAlert
	// StepWaitClose reads until the client closes the connection.
	StepWaitClose
	// StepStall does nothing until the server stops.
	StepStall
	// StepHangup closes the connection.
	StepHangup
)

// String returns the kind's name.
func (k StepKind) String() string {
	switch k {
	case StepSend:
		return "send"
	case StepSendRaw:
		return "send-raw"
	case StepExpectPrefix:
		return "expect-prefix"
	case StepExpectMatch:
		return "expect-match"
	case StepHandshake:
		return "handshake"
	case StepHandshakeCut:
		return "handshake-cut"
	case StepReadClientHello:
		return "read-client-hello"
	case StepSendAlert:
		return "send-alert"
	case StepWaitClose:
		return "wait-close"
	case StepStall:
		return "stall"
	case StepHangup:
		return "hangup"
	default:
		return fmt.Sprintf("StepKind(%d)", int(k))
	}
}

// terminal reports whether no step may follow a step of this kind.
func (k StepKind) terminal() bool {
	return k == StepHandshakeCut || k == StepStall || k == StepHangup
}

// Step is one action of a script. Build steps with the functions below.
type Step struct {
	kind   StepKind
	data   []byte
	prefix string
	re     *regexp.Regexp
	n      int
}

// Kind returns what the step does.
func (s Step) Kind() StepKind { return s.kind }

// Send writes b at the current layer: on the socket before Handshake,
// inside TLS after it.
func Send(b []byte) Step { return Step{kind: StepSend, data: bytes.Clone(b)} }

// SendString is Send of a string.
func SendString(s string) Step { return Send([]byte(s)) }

// SendRaw writes b on the raw socket, outside TLS even after Handshake.
func SendRaw(b []byte) Step { return Step{kind: StepSendRaw, data: bytes.Clone(b)} }

// ExpectPrefix reads one line (through LF, at most Config.MaxLine bytes
// with the LF) that must start with prefix.
func ExpectPrefix(prefix string) Step { return Step{kind: StepExpectPrefix, prefix: prefix} }

// ExpectMatch reads one line that, without its trailing CRLF or LF, must
// match re (anchor it as needed).
func ExpectMatch(re *regexp.Regexp) Step { return Step{kind: StepExpectMatch, re: re} }

// Handshake runs the TLS server handshake. At most one per script.
func Handshake() Step { return Step{kind: StepHandshake} }

// HandshakeCut runs the TLS server handshake but closes the connection
// once the server has written n bytes of it (n >= 0; a few hundred bytes is
// inside the server's first flight). It must be the last step; it fails
// with ErrHandshakeNotCut if the handshake completed.
func HandshakeCut(n int) Step { return Step{kind: StepHandshakeCut, n: n} }

// ReadClientHello reads the client's first TLS record from the raw socket
// and checks that it is a handshake record carrying a ClientHello. Only
// before Handshake.
func ReadClientHello() Step { return Step{kind: StepReadClientHello} }

// SendAlert writes a fatal TLS alert record with the given description
// (for example [AlertHandshakeFailure]) on the raw socket.
func SendAlert(description uint8) Step {
	return Step{kind: StepSendAlert, data: AlertRecord(description)}
}

// WaitClose reads, recording, until the client closes the connection.
func WaitClose() Step { return Step{kind: StepWaitClose} }

// Stall does nothing until the server is closed or its context ends; a
// client's close is not noticed. It must be the last step.
func Stall() Step { return Step{kind: StepStall} }

// Hangup closes the connection (with a TLS close_notify after the
// handshake). It must be the last step.
func Hangup() Step { return Step{kind: StepHangup} }

// TLS alert descriptions (RFC 8446 section 6).
const (
	AlertHandshakeFailure   uint8 = 40
	AlertProtocolVersion    uint8 = 70
	AlertInternalError      uint8 = 80
	AlertUnrecognizedName   uint8 = 112
	AlertCertificateUnknown uint8 = 46
)

// AlertRecord returns a TLS 1.2-framed fatal alert record.
func AlertRecord(description uint8) []byte {
	return []byte{21, 3, 3, 0, 2, 2, description}
}

// Info returns an INFO line as nats-server writes it: "INFO ", the JSON,
// a space, CRLF.
func Info(json string) []byte { return []byte("INFO " + json + " \r\n") }

// Greeting returns the steps of a well-behaved handshake-first server up to
// a completed client handshake: TLS handshake, INFO with infoJSON, expect
// CONNECT, expect PING, send PONG.
func Greeting(infoJSON string) []Step {
	return []Step{
		Handshake(),
		Send(Info(infoJSON)),
		ExpectPrefix("CONNECT "),
		ExpectPrefix("PING"),
		SendString("PONG\r\n"),
	}
}

// validateScript checks the ordering rules: at most one handshake, raw
// reads only before it, no step after a terminal one, and a size bound.
func validateScript(steps []Step) error {
	if len(steps) > MaxSteps {
		return fmt.Errorf("%w: more than %d steps", ErrBadConfig, MaxSteps)
	}
	handshake := false
	for i, s := range steps {
		switch s.kind {
		case StepHandshake, StepHandshakeCut:
			if handshake {
				return fmt.Errorf("%w: step %d: second handshake", ErrBadConfig, i)
			}
			handshake = true
			if s.n < 0 {
				return fmt.Errorf("%w: step %d: negative cut", ErrBadConfig, i)
			}
		case StepReadClientHello:
			if handshake {
				return fmt.Errorf("%w: step %d: client hello after the handshake", ErrBadConfig, i)
			}
		case StepExpectMatch:
			if s.re == nil {
				return fmt.Errorf("%w: step %d: nil regexp", ErrBadConfig, i)
			}
		case StepSend, StepSendRaw, StepExpectPrefix, StepSendAlert, StepWaitClose, StepStall, StepHangup:
		default:
			return fmt.Errorf("%w: step %d: zero step", ErrBadConfig, i)
		}
		if s.kind.terminal() && i != len(steps)-1 {
			return fmt.Errorf("%w: step %d (%s) must be last", ErrBadConfig, i, s.kind)
		}
	}
	return nil
}
