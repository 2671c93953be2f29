package main

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinels. Match them with errors.Is. No message carries payload bytes,
// broker text or secrets.
var (
	// errUsage: bad flags or arguments; nothing was started.
	errUsage = errors.New("demo: usage")
	// errConnectTooLong: a runtime user's CONNECT would exceed the
	// broker's max_control_line, so the broker would close the
	// connection before authenticating it.
	errConnectTooLong = errors.New("demo: runtime user's connect line exceeds the broker's max_control_line")
	// errProvision: provisioning left a stream or consumer that is not as
	// the configuration requires.
	errProvision = errors.New("demo: provisioning failed")
	// errPublish: an event was not stored with a verified acknowledgement.
	errPublish = errors.New("demo: publishing an event failed")
	// errRuntime: the runtime's Run returned an error.
	errRuntime = errors.New("demo: runtime stopped with an error")
	// errUnexpected is matched by every *outcomeError.
	errUnexpected = errors.New("demo: outcomes differ from the expected ones")
	// errInterrupted: a signal (or the caller's context) stopped the demo.
	errInterrupted = errors.New("demo: interrupted")
	// errGuest: the guest module (-guest) could not be read; nothing was
	// started.
	errGuest = errors.New("demo: guest module unavailable")
)

// problem is one expectation the run did not meet: what (a binding's
// column, a consumer's counter, a pool's usage) and the two values.
type problem struct {
	What      string
	Want, Got uint64
}

// String returns "what: want N, got M".
func (p problem) String() string {
	return fmt.Sprintf("%s: want %d, got %d", p.What, p.Want, p.Got)
}

// outcomeError lists every expectation the run did not meet.
type outcomeError struct {
	Problems []problem
}

// maxListedProblems bounds the problems Error spells out; the rest are
// counted.
const maxListedProblems = 8

// Error lists the first few problems.
func (e *outcomeError) Error() string {
	var b strings.Builder
	b.WriteString(errUnexpected.Error())
	for i, p := range e.Problems {
		if i == maxListedProblems {
			fmt.Fprintf(&b, "; and %d more", len(e.Problems)-i)
			break
		}
		b.WriteString("; ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Unwrap returns errUnexpected.
func (e *outcomeError) Unwrap() error { return errUnexpected }
