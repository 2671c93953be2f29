package broker

import (
	"errors"
	"fmt"
)

var (
	// ErrInvalidOptions is matched by every [*OptionError].
	ErrInvalidOptions = errors.New("broker: invalid options")
	// ErrUnknownTenant is returned when a tenant name was not given to [Start].
	ErrUnknownTenant = errors.New("broker: unknown tenant")
	// ErrClosed is returned by calls on a broker after [Broker.Close].
	ErrClosed = errors.New("broker: closed")
	// ErrNotRunning is returned when an operation needs a running process.
	ErrNotRunning = errors.New("broker: not running")
	// ErrPauseTimeout is returned by [Broker.Pause] when the server's
	// threads were not all stopped within [PauseWait]; the broker counts as
	// paused (SIGSTOP is pending) until [Broker.Resume].
	ErrPauseTimeout = errors.New("broker: server not stopped within the pause wait")
	// ErrExited is returned when the server process ended before it was ready.
	ErrExited = errors.New("broker: server exited before it was ready")
	// ErrNotReady is returned when the server's log never announced the
	// client listener before it announced readiness.
	ErrNotReady = errors.New("broker: server ready without a client listener")
	// ErrWrongVersion is returned when a nats-server binary does not report
	// the pinned version.
	ErrWrongVersion = errors.New("broker: nats-server binary has the wrong version")
	// ErrBuild is returned when building the pinned nats-server failed; the
	// build output is in the file named by [*BuildError].
	ErrBuild = errors.New("broker: building nats-server failed")
	// ErrNoModule is returned when the working directory is not inside the
	// module that pins nats-server, so it cannot be built.
	ErrNoModule = errors.New("broker: not inside the module that pins nats-server")
)

// OptionError reports the [Options] field that is invalid.
type OptionError struct {
	Field string
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("broker: invalid options: %s", e.Field)
}

// Unwrap returns [ErrInvalidOptions].
func (e *OptionError) Unwrap() error { return ErrInvalidOptions }

// BuildError reports a failed build of nats-server and where its output is.
type BuildError struct {
	// Log is the file holding the output of `go build`.
	Log string
	Err error
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("broker: building nats-server failed (output in %s): %v", e.Log, e.Err)
}

// Unwrap returns both [ErrBuild] and the underlying error.
func (e *BuildError) Unwrap() []error { return []error{ErrBuild, e.Err} }
