package jspull

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sentinels for the conditions callers branch on. Typed errors below match
// them with errors.Is.
var (
	// ErrInvalidBinding is matched by every *BindingError.
	ErrInvalidBinding = errors.New("pull: invalid binding")
	// ErrInvalidName: a stream or consumer name breaks the server's
	// asset-name rules.
	ErrInvalidName = errors.New("pull: invalid stream or consumer name")
	// ErrInvalidSubject: a filter subject or inbox prefix is not a literal
	// subject.
	ErrInvalidSubject = errors.New("pull: invalid subject")
	// ErrWildcardSubject: a filter subject or inbox prefix within its
	// length, of valid UTF-8 and without white space or control bytes,
	// holds '*' or '>'. It matches ErrInvalidSubject.
	ErrWildcardSubject = fmt.Errorf("%w: holds '*' or '>'", ErrInvalidSubject)

	// ErrInfoTooLarge: the consumer-info reply exceeds MaxInfoSize.
	ErrInfoTooLarge = errors.New("pull: consumer info reply too large")
	// ErrMalformedInfo is matched by every *InfoError: the consumer-info
	// reply is not the strict JSON of nats-server 2.14.6.
	ErrMalformedInfo = errors.New("pull: malformed consumer info")
	// ErrStreamNotFound: the broker answered consumer info with JetStream
	// error 10059.
	ErrStreamNotFound = errors.New("pull: stream not found")
	// ErrConsumerNotFound: the broker answered consumer info with JetStream
	// error 10014.
	ErrConsumerNotFound = errors.New("pull: consumer not found")
	// ErrAPI is matched by every *APIError: any other JetStream API error.
	ErrAPI = errors.New("pull: jetstream api error")
	// ErrProfileMismatch is matched by every *ProfileError.
	ErrProfileMismatch = errors.New("pull: consumer does not match the profile")
	// ErrConsumerPaused: consumer info says the consumer is paused (its
	// pause_until lies ahead; nats-server delivers nothing until then, and
	// would hold a pull for its whole expiry). Nothing is pulled; the
	// consumer resumes by itself at pause_until or when an operator resumes
	// it ($JS.API.CONSUMER.PAUSE.<stream>.<consumer>).
	ErrConsumerPaused = errors.New("pull: consumer is paused")
	// ErrNoResponders: the broker answered with status 503, nothing listens
	// on the request subject (JetStream off for the account, or no such
	// consumer behind a pull or ack subject).
	ErrNoResponders = errors.New("pull: no responders")

	// ErrCloseConnection is matched by every *ReplyError: the connection
	// delivered a frame this package cannot account for (a foreign or
	// malformed reply, an oversize payload, an ack subject naming another
	// consumer, an unknown status). The caller must close the connection;
	// nothing of it may be drained or reused.
	ErrCloseConnection = errors.New("pull: reply requires closing the connection")
	// ErrUnexpectedReply: a reply neither a message nor a status.
	ErrUnexpectedReply = errors.New("pull: unexpected reply")
	// ErrUnknownStatus: a status code or description nats-server 2.14.6
	// does not send for this request.
	ErrUnknownStatus = errors.New("pull: unknown status")
	// ErrBadAckSubject: a message's reply is not an acknowledgement subject
	// of the classic or v2 form.
	ErrBadAckSubject = errors.New("pull: message reply is not an ack subject")
	// ErrUnsupportedAck: a message's reply is an acknowledgement subject of
	// a form the broker sends but the profile does not support: the v2
	// form naming a JetStream domain (a server with a jetstream domain and
	// the v2 ack format), or the v2 form with more tokens than 2.14.6
	// writes. Nothing of the delivery is read and the connection is kept:
	// the broker redelivers the message after its ack wait, and gives it
	// up after max_deliver.
	ErrUnsupportedAck = errors.New("pull: ack subject of an unsupported form (jetstream domain)")
	// ErrWrongConsumer: a message's subject, or the stream or consumer its
	// ack subject names, is not this binding's.
	ErrWrongConsumer = errors.New("pull: message is not for this binding")
	// ErrOverCeiling: a message payload exceeds the binding's ceiling.
	ErrOverCeiling = errors.New("pull: payload over the ceiling")

	// ErrInvalidNakDelay: a NAK delay outside MinNakDelay..MaxNakDelay.
	ErrInvalidNakDelay = errors.New("pull: nak delay out of range")
	// ErrInvalidTermReason: a TERM reason too long or with bytes other than
	// printable ASCII.
	ErrInvalidTermReason = errors.New("pull: invalid term reason")
	// ErrInvalidAction: an Action that is no command (pull.ActionExhausted,
	// pull.ActionNone, or one outside the enumeration), or a delay or reason
	// the action does not take.
	ErrInvalidAction = errors.New("pull: invalid ack action")
	// ErrInvalidDelivery: a Delivery not returned by Next for this
	// binding, or one a later Next made stale (of its Consumer or of
	// one sharing its Scratch).
	ErrInvalidDelivery = errors.New("pull: invalid delivery")
	// ErrNotVerified is wrapped by every *ReceiptError: the broker's receipt
	// for an acknowledgement was not seen.
	ErrNotVerified = errors.New("pull: acknowledgement receipt not verified")
)

// errOutOfRange is the cause inside a *BindingError for a numeric field.
var errOutOfRange = errors.New("out of range")

// BindingError reports the first invalid field of a Binding, of Options
// or of the arguments of DerivePermissions.
type BindingError struct {
	// Field is the field's name: stream, consumer, filter_subject,
	// payload_ceiling, ack_wait, max_deliver (Binding); next_margin,
	// op_timeout (Options); inbox_prefix, bindings (DerivePermissions).
	Field string
	Err   error
}

func (e *BindingError) Error() string {
	return "pull: invalid binding " + e.Field + ": " + trimPrefix(e.Err.Error())
}

// Unwrap returns ErrInvalidBinding and the cause.
func (e *BindingError) Unwrap() []error { return []error{ErrInvalidBinding, e.Err} }

// InfoError reports where a consumer-info reply broke the strict grammar.
// It carries no byte of the reply.
type InfoError struct {
	// Offset is the byte offset in the reply body where decoding stopped.
	Offset int
	err    error
}

func (e *InfoError) Error() string {
	return "pull: malformed consumer info at offset " + strconv.Itoa(e.Offset) + ": " + e.err.Error()
}

// Unwrap returns ErrMalformedInfo.
func (e *InfoError) Unwrap() error { return ErrMalformedInfo }

// APIError is a JetStream API error other than stream or consumer not found.
// The broker's description text is deliberately not kept.
type APIError struct {
	// Code is the HTTP-like code, ErrCode the JetStream error code (0 when
	// the reply had none).
	Code, ErrCode int
}

func (e *APIError) Error() string {
	return "pull: jetstream api error " + strconv.Itoa(e.Code) + "/" + strconv.Itoa(e.ErrCode)
}

// Unwrap returns ErrAPI.
func (e *APIError) Unwrap() error { return ErrAPI }

// codeUnavailable is the code of the API error a cluster answers when the
// asset's group has no leader (nats-server 2.14.6 JSClusterNotAvailError).
const codeUnavailable = 503

// Leaderless reports the API error a cluster answers when the asset's
// group has no leader to answer (code 503, JSClusterNotAvailError).
func (e *APIError) Leaderless() bool { return e.Code == codeUnavailable }

// ProfileError lists every consumer setting that differs from the profile.
type ProfileError struct {
	Mismatches []Mismatch
}

// Error names the mismatching fields; the values stay in Mismatches.
func (e *ProfileError) Error() string {
	var b strings.Builder
	b.WriteString("pull: consumer does not match the profile:")
	for i, m := range e.Mismatches {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte(' ')
		b.WriteString(m.Field)
	}
	return b.String()
}

// Unwrap returns ErrProfileMismatch.
func (e *ProfileError) Unwrap() error { return ErrProfileMismatch }

// ReplyError reports a reply after which the connection must be closed.
// Its message names the operation that received the reply.
type ReplyError struct {
	// Err is the reason: ErrUnexpectedReply, ErrUnknownStatus,
	// ErrBadAckSubject (wrapping the acksubject error), ErrWrongConsumer or
	// ErrOverCeiling.
	Err error

	op operation
}

func (e *ReplyError) Error() string {
	op := ""
	if e.op != 0 {
		op = e.op.String() + ": "
	}
	return "pull: " + op + trimPrefix(e.Err.Error()) + "; connection must be closed"
}

// Unwrap returns ErrCloseConnection and the reason.
func (e *ReplyError) Unwrap() []error { return []error{ErrCloseConnection, e.Err} }

// ReceiptError explains why an acknowledgement is Uncertain.
type ReceiptError struct {
	// Err is the cause: the connection's error (a deadline, a lost or
	// closed connection, a failed write), ErrNoResponders, or a
	// *ReplyError for a reply that is not the empty receipt.
	Err error
}

func (e *ReceiptError) Error() string {
	return "pull: acknowledgement uncertain: " + trimPrefix(e.Err.Error())
}

// Unwrap returns ErrNotVerified and the cause.
func (e *ReceiptError) Unwrap() []error { return []error{ErrNotVerified, e.Err} }

// trimPrefix drops this package's "pull: " prefix from a wrapped message so
// it is not repeated.
func trimPrefix(s string) string { return strings.TrimPrefix(s, "pull: ") }
