package deadletter

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/latent-systems/latent-nats/conn"
)

// Sentinels. Match them with errors.Is. No message carries broker text,
// payload bytes, header values or secrets.
var (
	// ErrInvalidArgument reports an argument refused before any request:
	// a name, sequence, limit or timeout out of its rule.
	ErrInvalidArgument = errors.New("deadletter: invalid argument")
	// ErrNoJetStream reports a broker or account without JetStream: the
	// server's INFO did not announce it, or a JetStream API request found
	// no responder (a bare status 503: no description, no payload).
	ErrNoJetStream = errors.New("deadletter: jetstream not available")
	// ErrNoCapture reports an account without the dead-letter capture
	// stream (provision.DeadLetterStream): nothing kept the broker's
	// give-up advisories. Run provision with its dead-letter capture.
	ErrNoCapture = errors.New("deadletter: no dead-letter capture stream in the account (run provision)")
	// ErrStreamNotFound reports a binding's stream that does not exist.
	ErrStreamNotFound = errors.New("deadletter: stream not found")
	// ErrGone reports a message that neither its stream nor the copy
	// capture (provision.CopyStream) holds: a work-queue or interest
	// stream removed it when it was terminated, a limit removed it, or
	// its copy aged out or was never made.
	ErrGone = errors.New("deadletter: message held neither by its stream nor by the copy capture")
	// ErrNoStream reports a replay that no stream captured (a bare status
	// 503): nothing was stored.
	ErrNoStream = errors.New("deadletter: no stream captures the subject")
	// ErrHeaderNotReplayable reports a header field of the message that
	// this client cannot send as it is (a value holding a space or a
	// control byte: the project validates values, never rewrites them).
	// Nothing was sent; ReplayOptions.NoHeaders replays without them.
	ErrHeaderNotReplayable = errors.New("deadletter: a header field cannot be sent as it is")
	// ErrMalformedReply reports a JetStream API reply that is not the JSON
	// nats-server 2.14.6 sends.
	ErrMalformedReply = errors.New("deadletter: malformed jetstream reply")
	// ErrUnexpectedStatus reports a reply with a status a request of this
	// package cannot get.
	ErrUnexpectedStatus = errors.New("deadletter: unexpected reply status")
	// ErrRequestDenied reports a request the broker refused with a
	// permission violation: the user may not publish to that subject
	// (named after the sentinel's text). The trigger runtime's own user
	// may not read streams, by design: use the account administrator's.
	// The error also matches the *conn.ServerError.
	ErrRequestDenied = errors.New("deadletter: permission violation: the user may not publish to")
	// ErrStoredElsewhere reports a replay that a stream other than the
	// binding's stored (the command's check): the subject is now captured
	// by another stream. It was stored, and is not undone.
	ErrStoredElsewhere = errors.New("deadletter: the replay was stored by another stream than the binding's")
	// ErrAPI is matched by every *APIError.
	ErrAPI = errors.New("deadletter: jetstream api error")
)

// errCodeNoMessageFound is the JetStream API error code (err_code) of a
// stream that holds no message at the sequence asked for (nats-server
// 2.14.6 server/errors.json); a stream that does not exist is
// jspull.CodeStreamNotFound.
const errCodeNoMessageFound = 10037

// APIError is a JetStream API error reply other than the ones this package
// maps to a sentinel. The broker's description text is not kept.
type APIError struct {
	// Code is the HTTP-like code, ErrCode the JetStream error code.
	Code, ErrCode int
}

// Error names the codes.
func (e *APIError) Error() string {
	return "deadletter: jetstream api error " + strconv.Itoa(e.Code) + "/" + strconv.Itoa(e.ErrCode)
}

// Unwrap returns ErrAPI.
func (e *APIError) Unwrap() error { return ErrAPI }

// denied returns err wrapped with ErrRequestDenied when it is the broker's
// permission violation of a request to subject, else err.
func denied(err error, subject string) error {
	var se *conn.ServerError
	if errors.As(err, &se) && se.Kind == conn.KindPermission {
		return fmt.Errorf("%w %q: %w", ErrRequestDenied, subject, err)
	}
	return err
}
