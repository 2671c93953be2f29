package conn

import (
	"errors"
	"net/netip"
	"strings"

	"github.com/latent-systems/latent-nats/parser"
)

// Sentinels. Match them with errors.Is.
var (
	// ErrInvalidConfig reports a Config that Dial refuses before opening any
	// socket.
	ErrInvalidConfig = errors.New("conn: invalid config")
	// ErrNotIPv4 reports an address that is not a plain IPv4 address
	// (IPv6, IPv4-mapped IPv6, or invalid).
	ErrNotIPv4 = errors.New("conn: address is not ipv4")
	// ErrNonPublicAddress reports a non-public address the configuration
	// does not name as allowed, or one that is never allowed (unspecified,
	// multicast, broadcast).
	ErrNonPublicAddress = errors.New("conn: non-public address not allowed")
	// ErrNoDeadline reports a context without a deadline passed to a call
	// that blocks on the network.
	ErrNoDeadline = errors.New("conn: context has no deadline")
	// ErrClosed reports use of a closed connection; every error that closes
	// the connection also matches it (see ClosedError).
	ErrClosed = errors.New("conn: connection closed")
	// ErrServerClosed reports that the server ended the connection, or
	// that it was lost under it: reset, aborted, the peer's keepalive
	// timing out, the peer unreachable.
	ErrServerClosed = errors.New("conn: server closed the connection")
	// ErrRefused reports a TCP connection refused or reset at StepDial:
	// nothing listens on the address (a broker that is down), or a
	// firewall rejects it. The errno stays reachable with errors.Is.
	ErrRefused = errors.New("conn: connection refused")
	// ErrPlaintext reports a server that answered the TLS ClientHello with
	// something other than TLS, such as a plaintext INFO.
	ErrPlaintext = errors.New("conn: server did not speak tls first")
	// ErrTLS reports a failed TLS handshake other than a certificate
	// failure (alert, close, protocol error).
	ErrTLS = errors.New("conn: tls handshake failed")
	// ErrCertificate reports a server certificate that the configured roots,
	// server name or pin do not accept.
	ErrCertificate = errors.New("conn: server certificate not accepted")
	// ErrClientCertificate reports a server that refused the client
	// certificate at StepTLS: none was presented where the server requires
	// one (verify), or the one presented is expired, revoked or not signed
	// by an authority the server trusts. The server says only that, in a
	// TLS alert, and says it after the handshake under TLS 1.3; Dial
	// reports both at StepTLS. The alert stays reachable with errors.As.
	ErrClientCertificate = errors.New("conn: client certificate refused")
	// ErrPinMismatch reports a server certificate whose SPKI SHA-256 is not
	// the configured pin; it is also an ErrCertificate.
	ErrPinMismatch = errors.New("conn: server certificate pin mismatch")
	// ErrMalformedInfo reports an INFO that is not valid JSON or lacks what
	// the connection needs.
	ErrMalformedInfo = errors.New("conn: malformed info")
	// ErrUnsupportedServer reports a server without protocol 1 or headers.
	ErrUnsupportedServer = errors.New("conn: server lacks protocol 1 or headers")
	// ErrUnexpectedFrame reports a frame the server may not send at that
	// point (a message before the handshake ends, an unsolicited PONG or
	// +OK).
	ErrUnexpectedFrame = errors.New("conn: unexpected frame")
	// ErrNoRequest reports an Await with no answered request to follow.
	ErrNoRequest = errors.New("conn: no answered request to await")
	// ErrUnanswered reports a request whose deadline passed unanswered on
	// a connection kept open (Config.KeepUnanswered); it comes with
	// context.DeadlineExceeded. The request was written: the server may
	// have acted on it.
	ErrUnanswered = errors.New("conn: request unanswered by its deadline")
	// ErrForeignFrame reports a message for another subscription or for a
	// reply subject other than the current request's.
	ErrForeignFrame = errors.New("conn: foreign frame")
	// ErrFraming reports server bytes the connection's parser refused: a
	// control line, header block or payload over its cap, an unknown
	// operation or a frame that breaks the grammar. The parser's own
	// sentinel (parser.ErrLineTooLong, ErrHeaderTooLarge,
	// ErrPayloadTooLarge, ErrUnknownOp, ErrMalformed) and its *parser.Error
	// stay reachable with errors.Is and errors.As; a frame cut short by the
	// end of the connection is ErrServerClosed instead.
	ErrFraming = errors.New("conn: server broke the framing")
	// ErrControlFlood reports more server PINGs or INFOs within one request
	// or handshake than the limits allow (MaxPingsPerExchange,
	// MaxControlFramesPerExchange).
	ErrControlFlood = errors.New("conn: too many control frames")
	// ErrTooLarge reports an outbound request that does not fit the limits:
	// subject, header block or payload.
	ErrTooLarge = errors.New("conn: request too large")
	// ErrInvalidRequest reports a subject or header block refused before any
	// byte is written.
	ErrInvalidRequest = errors.New("conn: invalid request")
	// ErrWrongPeer reports a socket from Config.Dialer connected to an
	// address other than Config.Addr.
	ErrWrongPeer = errors.New("conn: socket connected to another address")
	// ErrRandom reports a failure of the configured random source.
	ErrRandom = errors.New("conn: random source failed")
)

// ErrKind classifies a server -ERR without carrying its text.
type ErrKind uint8

// ErrKind values.
const (
	// KindAuthorization is 'Authorization Violation': bad or unknown
	// credentials, expired JWT at connect, unknown account.
	KindAuthorization ErrKind = iota + 1
	// KindAuthenticationExpired is 'User Authentication Expired' or
	// 'Account Authentication Expired' on a connected client.
	KindAuthenticationExpired
	// KindAuthenticationRevoked is 'User Authentication Revoked'.
	KindAuthenticationRevoked
	// KindAuthenticationTimeout is 'Authentication Timeout'.
	KindAuthenticationTimeout
	// KindPermission is a publish or subscribe 'Permissions Violation'; the
	// only kind after which the server keeps the connection open.
	KindPermission
	// KindMaxPayload is 'Maximum Payload Violation'.
	KindMaxPayload
	// KindMaxConnections is a server or account connection limit.
	KindMaxConnections
	// KindMaxSubscriptions is 'maximum subscriptions exceeded'.
	KindMaxSubscriptions
	// KindStaleConnection is 'Stale Connection'.
	KindStaleConnection
	// KindProtocol is a protocol complaint (unknown operation, control line
	// too long, invalid subject, invalid protocol, headers required).
	KindProtocol
	// KindOther is any other text.
	KindOther
)

// String returns the kind's name.
func (k ErrKind) String() string {
	switch k {
	case KindAuthorization:
		return "authorization violation"
	case KindAuthenticationExpired:
		return "authentication expired"
	case KindAuthenticationRevoked:
		return "authentication revoked"
	case KindAuthenticationTimeout:
		return "authentication timeout"
	case KindPermission:
		return "permission violation"
	case KindMaxPayload:
		return "maximum payload violation"
	case KindMaxConnections:
		return "maximum connections exceeded"
	case KindMaxSubscriptions:
		return "maximum subscriptions exceeded"
	case KindStaleConnection:
		return "stale connection"
	case KindProtocol:
		return "protocol violation"
	case KindOther:
		return "other"
	default:
		return "unknown"
	}
}

// Fatal reports whether an -ERR of this kind ends the connection. Only
// permission violations leave it usable; any other -ERR closes it, also
// those the server itself would survive, because this client never
// provokes them.
func (k ErrKind) Fatal() bool { return k != KindPermission }

// ServerError is a server -ERR. It carries the kind only, never the text.
type ServerError struct {
	Kind ErrKind
}

func (e *ServerError) Error() string { return "conn: server error: " + e.Kind.String() }

// Step names a step of the handshake.
type Step uint8

// Step values, in handshake order.
const (
	// StepDial opens the TCP socket.
	StepDial Step = iota + 1
	// StepTLS runs the TLS client handshake on it.
	StepTLS
	// StepInfo reads and checks the server's INFO.
	StepInfo
	// StepAuthenticate asks the credential for the CONNECT fields.
	StepAuthenticate
	// StepConnect writes CONNECT, SUB and PING and waits for PONG (and the
	// second INFO of servers since 2.12).
	StepConnect
)

// String returns the step's name.
func (s Step) String() string {
	switch s {
	case StepDial:
		return "dial"
	case StepTLS:
		return "tls"
	case StepInfo:
		return "info"
	case StepAuthenticate:
		return "authenticate"
	case StepConnect:
		return "connect"
	default:
		return "unknown"
	}
}

// HandshakeError reports the step at which Dial failed. The socket, if any,
// is closed.
type HandshakeError struct {
	Step Step
	Err  error
}

func (e *HandshakeError) Error() string {
	return "conn: handshake failed at " + e.Step.String() + ": " + trimPrefix(e.Err)
}

func (e *HandshakeError) Unwrap() error { return e.Err }

// AddressError reports an address the policy refuses; no socket was opened.
// It matches ErrNotIPv4, ErrNonPublicAddress, or ErrInvalidConfig for a
// zero port. Its message names the address's IANA special-purpose class
// (loopback, private, shared, link-local, documentation, benchmark,
// reserved, unspecified, multicast, broadcast).
type AddressError struct {
	Addr netip.AddrPort
	// Range is the special-purpose range (RFC 6890 and its updates)
	// holding Addr; the zero Prefix for a public address or one that is
	// not IPv4.
	Range netip.Prefix
	Err   error

	class addrClass // zero when the address is not IPv4
}

func (e *AddressError) Error() string {
	class := ""
	if e.class != 0 {
		class = " (" + e.class.String() + ")"
	}
	return "conn: address " + e.Addr.String() + class + ": " + trimPrefix(e.Err)
}

func (e *AddressError) Unwrap() error { return e.Err }

// ClosedError is returned by a call that failed in a way that closed the
// connection. It matches ErrClosed and unwraps to the cause
// (context.DeadlineExceeded, ErrForeignFrame, ErrFraming with the parser's
// sentinel, a *ServerError, ErrServerClosed, ...).
type ClosedError struct {
	Err error
}

func (e *ClosedError) Error() string {
	return "conn: connection closed: " + strings.TrimPrefix(e.Err.Error(), "conn: ")
}

func (e *ClosedError) Unwrap() error { return e.Err }

// Is reports whether target is ErrClosed.
func (e *ClosedError) Is(target error) bool { return target == ErrClosed }

// framingError is a parser failure on the server's bytes: it matches
// ErrFraming and unwraps to the parser's error, whose text it keeps (the
// parser's messages carry no input bytes).
type framingError struct {
	err error
}

func (e *framingError) Error() string   { return e.err.Error() }
func (e *framingError) Unwrap() []error { return []error{ErrFraming, e.err} }

// isFraming reports whether err is the parser refusing the server's bytes,
// as opposed to the reader failing under it.
func isFraming(err error) bool {
	return errors.Is(err, parser.ErrLineTooLong) || errors.Is(err, parser.ErrHeaderTooLarge) ||
		errors.Is(err, parser.ErrPayloadTooLarge) || errors.Is(err, parser.ErrUnknownOp) ||
		errors.Is(err, parser.ErrMalformed)
}

// tlsFailure keeps crypto/tls and x509 text out of Error while leaving the
// original error reachable through errors.As.
type tlsFailure struct {
	kind error // ErrPlaintext, ErrTLS, ErrCertificate or ErrClientCertificate
	err  error
}

func (e *tlsFailure) Error() string   { return e.kind.Error() }
func (e *tlsFailure) Unwrap() []error { return []error{e.kind, e.err} }

// refusedError is a socket the server's host refused or reset at
// StepDial: it matches ErrRefused and keeps the errno reachable, out of
// the message.
type refusedError struct{ err error }

func (e *refusedError) Error() string   { return ErrRefused.Error() }
func (e *refusedError) Unwrap() []error { return []error{ErrRefused, e.err} }

// trimPrefix returns err's text without a leading "conn: ".
func trimPrefix(err error) string {
	if err == nil {
		return "<nil>"
	}
	return strings.TrimPrefix(err.Error(), "conn: ")
}
