package jspull

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/latent-systems/latent-nats/acksubject"
	"github.com/latent-systems/latent-nats/internal/wire"
)

// Limits of a [Binding]. Each is inclusive and has a test at the limit and
// one past it.
const (
	// MinPayloadCeiling and MaxPayloadCeiling bound [Binding.PayloadCeiling]:
	// the largest message payload, in bytes, a binding accepts (headers not
	// counted).
	MinPayloadCeiling = 1
	MaxPayloadCeiling = 32768

	// MaxBytesOverhead is added to the payload ceiling to form the consumer's
	// max_bytes and the pull request's max_bytes. The broker counts subject,
	// ack reply, headers and payload against max_bytes; the overhead leaves
	// room for an 8 KiB header block plus subject and ack subject, so that the
	// broker itself refuses an oversize message (409 Message Size Exceeds
	// MaxBytes) before a byte of it is sent.
	MaxBytesOverhead = 9216

	// MaxNameLen is the longest stream or durable consumer name the broker
	// accepts (JSMaxNameLen in nats-server 2.14.6), in bytes: the bound of
	// the asset-name rule acksubject owns ([acksubject.MaxNameLen]).
	MaxNameLen = acksubject.MaxNameLen

	// MaxFilterSubjectLen bounds [Binding.FilterSubject], in bytes. With it
	// the longest MSG line a delivery can bring (this subject, a v2 ack
	// subject naming two names of MaxNameLen bytes, a sid and a size:
	// about 920 bytes, CRLF counted) fits in conn.MinReadCap, the smallest
	// control-line cap a connection may have.
	MaxFilterSubjectLen = 256

	// AckWaitMargin is how much the consumer's ack_wait must exceed the
	// delivery operation timeout at least: time for the acknowledgement to
	// reach the broker after the operation's deadline.
	AckWaitMargin = time.Second

	// MinAckWait and MaxAckWait bound [Binding.AckWait]. The lower bound is
	// the smallest delivery operation timeout ([MinOpTimeout]) plus
	// [AckWaitMargin]; the caller that knows its operation timeout checks
	// the tighter relation.
	MinAckWait = MinOpTimeout + AckWaitMargin
	MaxAckWait = 60 * time.Second

	// MinMaxDeliver and MaxMaxDeliver bound [Binding.MaxDeliver], the
	// broker's delivery count.
	MinMaxDeliver = 1
	MaxMaxDeliver = 16

	// RequestExpires is the expiry of every pull request and the consumer's
	// required max_expires.
	RequestExpires = 100 * time.Millisecond
)

// Binding is the part of a trigger binding the pull operations need: which
// durable pull consumer of which stream, the one exact subject it filters on,
// and the settings the operator provisioned it with. It holds no secret.
type Binding struct {
	// Stream is the stream name (server asset-name rules, at most
	// [MaxNameLen] bytes).
	Stream string
	// Consumer is the durable consumer name (same rules as Stream).
	Consumer string
	// FilterSubject is the consumer's one filter subject: a literal subject,
	// no wildcard, at most [MaxFilterSubjectLen] bytes (see
	// [ValidFilterSubject]).
	FilterSubject string
	// PayloadCeiling is the largest payload accepted, in bytes
	// ([MinPayloadCeiling] to [MaxPayloadCeiling]).
	PayloadCeiling int
	// AckWait is the consumer's ack_wait ([MinAckWait] to [MaxAckWait]).
	AckWait time.Duration
	// MaxDeliver is the consumer's max_deliver ([MinMaxDeliver] to
	// [MaxMaxDeliver]).
	MaxDeliver int
}

// MaxBytes is the consumer max_bytes and pull request max_bytes the binding
// requires: PayloadCeiling + [MaxBytesOverhead].
func (b Binding) MaxBytes() int { return b.PayloadCeiling + MaxBytesOverhead }

// Validate checks every field against its bound and the server's naming
// rules. The error is a *[BindingError] wrapping [ErrInvalidBinding].
func (b Binding) Validate() error {
	if err := ValidName(b.Stream); err != nil {
		return &BindingError{Field: "stream", Err: err}
	}
	if err := ValidName(b.Consumer); err != nil {
		return &BindingError{Field: "consumer", Err: err}
	}
	if err := ValidFilterSubject(b.FilterSubject); err != nil {
		return &BindingError{Field: "filter_subject", Err: err}
	}
	if b.PayloadCeiling < MinPayloadCeiling || b.PayloadCeiling > MaxPayloadCeiling {
		return &BindingError{Field: "payload_ceiling", Err: errOutOfRange}
	}
	if b.AckWait < MinAckWait || b.AckWait > MaxAckWait {
		return &BindingError{Field: "ack_wait", Err: errOutOfRange}
	}
	if b.MaxDeliver < MinMaxDeliver || b.MaxDeliver > MaxMaxDeliver {
		return &BindingError{Field: "max_deliver", Err: errOutOfRange}
	}
	return nil
}

// ValidName reports whether name is a valid stream or durable consumer name
// for a binding: the broker's asset-name rule ([acksubject.CheckName]:
// non-empty, at most [MaxNameLen] bytes, none of space, tab, CR, LF, FF,
// '.', '*', '>', '\' or '/'), and, stricter than the broker, valid UTF-8
// with no control character (C0, DEL or C1), which no configuration of
// this project may carry. A dot is the dangerous one: the broker would
// split the name across ack-subject tokens, so acknowledgements would
// silently stop matching the grant. The error wraps [ErrInvalidName].
func ValidName(name string) error {
	if err := acksubject.CheckName(name); err != nil {
		switch {
		case errors.Is(err, acksubject.RuleEmpty):
			return fmt.Errorf("%w: empty", ErrInvalidName)
		case errors.Is(err, acksubject.RuleNameTooLong):
			return fmt.Errorf("%w: longer than %d bytes", ErrInvalidName, MaxNameLen)
		default:
			return fmt.Errorf("%w: contains a forbidden character", ErrInvalidName)
		}
	}
	switch {
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: invalid utf-8", ErrInvalidName)
	case hasControlOrSpace(name):
		return fmt.Errorf("%w: contains white space or a control byte", ErrInvalidName)
	}
	return nil
}

// hasControlOrSpace reports whether s holds a space or a control
// character: C0, DEL, or, encoded in UTF-8, C1 (U+0080 to U+009F).
func hasControlOrSpace(s string) bool {
	for _, r := range s {
		if r <= ' ' || r >= 0x7f && r < 0xa0 {
			return true
		}
	}
	return false
}

// ValidFilterSubject checks a binding's filter subject: a subject one may
// publish to (wire's rules: dot-separated non-empty tokens, no space or
// control byte), and, stricter, at most [MaxFilterSubjectLen] bytes of
// valid UTF-8 without a C1 control character or any '*' or '>'. '*' and
// '>' inside a longer token are literal characters for the server, but
// they are refused here as well: a binding's subject is never meant to
// look like a wildcard. A subject within its length, of valid UTF-8
// without white space or control bytes, that holds '*' or '>' is
// [ErrWildcardSubject]; every error wraps [ErrInvalidSubject].
func ValidFilterSubject(s string) error { return validLiteralSubject(s, MaxFilterSubjectLen) }

// validLiteralSubject applies ValidFilterSubject's rules with the length
// bound max.
func validLiteralSubject(s string, max int) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty", ErrInvalidSubject)
	case len(s) > max:
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidSubject, max)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: invalid utf-8", ErrInvalidSubject)
	case hasControlOrSpace(s):
		return fmt.Errorf("%w: contains white space or a control byte", ErrInvalidSubject)
	case strings.ContainsAny(s, "*>"):
		return ErrWildcardSubject
	case wire.ValidPublishSubject(s) != nil:
		// Nothing but an empty token is left for wire to refuse.
		return fmt.Errorf("%w: empty token", ErrInvalidSubject)
	}
	return nil
}
