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
	// ErrUnknownRole is returned when a tenant's account has no scoped
	// signing key of the role asked for ([Options.SigningKeys]).
	ErrUnknownRole = errors.New("broker: unknown signing key role")
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
	// ErrPortTaken is returned with [ErrExited] when the server exited
	// because another socket held the port of one of its listeners.
	ErrPortTaken = errors.New("broker: a listener's port is taken")
	// ErrServerExited is returned by [Broker.Wait] when the server process
	// exited; the error carries its exit status.
	ErrServerExited = errors.New("broker: server process exited")
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
	// ErrNotFormed is returned by [Cluster.WaitFormed] when its bound ended
	// before the running nodes agreed on a JetStream meta leader that
	// counts each of them as a current peer.
	ErrNotFormed = errors.New("broker: cluster not formed")
	// ErrNotHealthy is returned by [Cluster.WaitHealthy] when its bound
	// ended before the node's health check passed.
	ErrNotHealthy = errors.New("broker: node not healthy")
	// ErrDirectRoutes is returned by the route fault calls of a [Cluster]
	// started without [Options.ProxyRoutes].
	ErrDirectRoutes = errors.New("broker: the cluster's routes do not go through fault proxies")
	// ErrNoLeader is returned when a stream or consumer reply names no
	// leader, or a wait for a leader ended without one.
	ErrNoLeader = errors.New("broker: no leader")
	// ErrUnknownNode is returned when the server a reply names is not a
	// node of the cluster, or a node given is not one of its nodes.
	ErrUnknownNode = errors.New("broker: not a node of this cluster")
	// ErrMalformedReply is returned for a monitor or JetStream API reply
	// that is not the JSON nats-server v2.14.6 sends.
	ErrMalformedReply = errors.New("broker: malformed reply")
	// ErrAPI is matched by every [*APIError].
	ErrAPI = errors.New("broker: jetstream api error")
	// ErrInvalidUser is returned by [Broker.RevokeUser] for a key that is
	// not a user's public nkey.
	ErrInvalidUser = errors.New("broker: not a user public key")
	// ErrClaimsUpdate is matched by every [*ClaimsUpdateError].
	ErrClaimsUpdate = errors.New("broker: account jwt update refused")
)

// ClaimsUpdateError is the server's refusal of an account JWT
// ([Broker.RevokeUser]); the server's text is not kept.
type ClaimsUpdateError struct {
	// Code is the reply's HTTP-like code.
	Code int
}

func (e *ClaimsUpdateError) Error() string {
	return fmt.Sprintf("broker: account jwt update refused: %d", e.Code)
}

// Unwrap returns [ErrClaimsUpdate].
func (e *ClaimsUpdateError) Unwrap() error { return ErrClaimsUpdate }

// APIError is a JetStream API error reply; the server's description text
// is not kept.
type APIError struct {
	// Code is the HTTP-like code, ErrCode the JetStream error code.
	Code, ErrCode int
}

func (e *APIError) Error() string {
	return fmt.Sprintf("broker: jetstream api error %d/%d", e.Code, e.ErrCode)
}

// Unwrap returns [ErrAPI].
func (e *APIError) Unwrap() error { return ErrAPI }

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
