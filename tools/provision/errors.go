package provision

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
)

// Sentinels. Match them with errors.Is. No message carries broker text,
// payload bytes or secrets.
var (
	// ErrScopeSubject: a tenant's grants hold a subject a signing key's
	// scope cannot carry as written: "{{" (the server expands scope
	// templates in it) or, in the nsc commands, ',' (nsc splits a flag's
	// value on it). Such a tenant's grants go in its user JWT instead.
	ErrScopeSubject = errors.New("provision: subject cannot be written into a signing key scope")
	// ErrInvalidOptions reports Options or arguments refused before any
	// connection is opened.
	ErrInvalidOptions = errors.New("provision: invalid options")
	// ErrNoJetStream reports a broker or account without JetStream: the
	// server's INFO did not announce it, or a JetStream API request found
	// no responder (a bare status 503: no description, no payload).
	ErrNoJetStream = errors.New("provision: jetstream not available")
	// ErrNoStream reports a publish that no stream captured (a bare status
	// 503): nothing stored it.
	ErrNoStream = errors.New("provision: no stream captures the subject")
	// ErrMalformedReply reports a JetStream API reply or publish
	// acknowledgement that is not the JSON nats-server 2.14.6 sends.
	ErrMalformedReply = errors.New("provision: malformed jetstream reply")
	// ErrUnexpectedStatus reports a reply carrying a status other than the
	// ones a request of this package can get.
	ErrUnexpectedStatus = errors.New("provision: unexpected reply status")
	// ErrAPI is matched by every *APIError.
	ErrAPI = errors.New("provision: jetstream api error")
	// ErrMismatch reports a stream or consumer that exists and differs
	// from what the configuration requires; it was left unchanged.
	ErrMismatch = errors.New("provision: existing resource differs; left unchanged")
	// ErrCreatedMismatch reports a consumer this package created that the
	// profile check or the replica count then refused (the differences are
	// in Result.Mismatches): a disagreement between the desired
	// configuration and the check, never expected.
	ErrCreatedMismatch = errors.New("provision: created consumer fails the profile check")
	// ErrSkipped reports a resource not attempted because its tenant could
	// not be reached or its stream could not be had.
	ErrSkipped = errors.New("provision: not attempted")
	// ErrInboxDenied reports a connection the broker refused at the connect
	// step with a permission violation: the user may not subscribe the
	// connection's inbox (its prefix is named after the sentinel's text).
	// The error also matches the *conn.HandshakeError and *conn.ServerError.
	ErrInboxDenied = errors.New("provision: permission violation at connect: the user may not subscribe the inbox")
	// ErrRequestDenied reports a request the broker refused with a
	// permission violation: the user may not publish to that subject (named
	// after the sentinel's text). The trigger runtime's own user may not
	// read or create streams, by design: with its credentials, -assert ends
	// here, past the handshake. The error also matches the
	// *conn.ServerError.
	ErrRequestDenied = errors.New("provision: permission violation: the user may not publish to")
)

// troubleshooting is the row of the documentation that explains
// ErrInboxDenied and ErrRequestDenied.
const troubleshooting = "(see docs/TROUBLESHOOTING.md#provisioning)"

// denied returns err wrapped with ErrRequestDenied when it is the broker's
// permission violation of a request to subject, else err.
func denied(err error, subject string) error {
	if isPermission(err) {
		return fmt.Errorf("%w %q %s: %w", ErrRequestDenied, subject, troubleshooting, err)
	}
	return err
}

// isPermission reports whether err is the broker's permission violation.
func isPermission(err error) bool {
	var se *conn.ServerError
	return errors.As(err, &se) && se.Kind == conn.KindPermission
}

// JetStream API error codes (err_code) this package names. Their
// descriptions are this package's own words, not the broker's text.
const (
	errCodeInsufficientRes     = 10023
	errCodeMaxConsumers        = 10026
	errCodeMaxStreams          = 10027
	errCodeNotEnabled          = 10039
	errCodeStreamConfig        = 10052
	errCodeMsgTooLarge         = 10054
	errCodeStreamExists        = 10058
	errCodeSubjectsOverlap     = 10065
	errCodeStoreFailed         = 10077
	errCodeFilterNotSubset     = 10093
	errCodeWQConsumerNotUnique = 10100
	errCodeMaxBytesRequired    = 10113
	errCodeConsumerExists      = 10148
)

// APIError is a JetStream API error reply. The broker's description text is
// deliberately not kept; Error names the code and, for the codes this
// package knows, what they mean.
type APIError struct {
	// Code is the HTTP-like code, ErrCode the JetStream error code.
	Code, ErrCode int
}

// Error returns the codes and this package's description of ErrCode.
func (e *APIError) Error() string {
	s := "provision: jetstream api error " + strconv.Itoa(e.Code) + "/" + strconv.Itoa(e.ErrCode)
	if d := describeErrCode(e.ErrCode); d != "" {
		s += ": " + d
	}
	return s
}

// Unwrap returns ErrAPI.
func (e *APIError) Unwrap() error { return ErrAPI }

// describeErrCode returns this package's description of a JetStream error
// code, "" for a code it does not name.
func describeErrCode(code int) string {
	switch code {
	case jspull.CodeConsumerNotFound:
		return "consumer not found"
	case errCodeInsufficientRes:
		return "insufficient jetstream resources for the account"
	case errCodeMaxConsumers:
		return "consumer limit reached"
	case errCodeMaxStreams:
		return "account stream limit reached"
	case errCodeNotEnabled:
		return "jetstream not enabled for the account"
	case errCodeStreamConfig:
		return "stream configuration refused"
	case errCodeMsgTooLarge:
		return "message larger than the stream's max_msg_size"
	case errCodeStreamExists:
		return "a stream of this name exists with another configuration"
	case jspull.CodeStreamNotFound:
		return "stream not found"
	case errCodeSubjectsOverlap:
		return "the stream's subjects overlap another stream's"
	case errCodeStoreFailed:
		return "the stream refused to store the message (a limit reached with discard new)"
	case errCodeFilterNotSubset:
		return "the filter subject is not captured by the stream"
	case errCodeWQConsumerNotUnique:
		return "the work-queue stream already has a consumer with an overlapping filter"
	case errCodeMaxBytesRequired:
		return "the account requires streams to set max_bytes"
	case errCodeConsumerExists:
		return "a consumer of this name exists with another configuration"
	default:
		return ""
	}
}
