package pull

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
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
	// accepts (JSMaxNameLen in nats-server 2.14.6), in bytes.
	MaxNameLen = 255

	// MaxSubjectLen bounds [Binding.FilterSubject], in bytes.
	MaxSubjectLen = 512

	// MinAckWait and MaxAckWait bound [Binding.AckWait]. The lower bound is
	// the smallest delivery operation timeout (100 ms) plus one second; the
	// caller that knows its operation timeout checks the tighter relation.
	MinAckWait = 1100 * time.Millisecond
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
	// no wildcard, at most [MaxSubjectLen] bytes.
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
	if err := validLiteralSubject(b.FilterSubject, MaxSubjectLen); err != nil {
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
// by the rules of nats-server 2.14.6 (isValidAssetName and JSMaxNameLen):
// non-empty, at most [MaxNameLen] bytes, and none of space, tab, CR, LF, FF,
// '.', '*', '>', '\' or '/'. A dot is the dangerous one: the broker would
// split the name across ack-subject tokens, so acknowledgements would
// silently stop matching the grant. Stricter than the server, it also
// refuses every other control byte (0x00-0x1f, 0x7f) and invalid UTF-8,
// which no configuration of this project may carry. The error wraps
// [ErrInvalidName].
func ValidName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty", ErrInvalidName)
	case len(name) > MaxNameLen:
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidName, MaxNameLen)
	case strings.ContainsAny(name, ".*>\\/"):
		return fmt.Errorf("%w: contains a forbidden character", ErrInvalidName)
	case hasControlOrSpace(name):
		return fmt.Errorf("%w: contains white space or a control byte", ErrInvalidName)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: invalid utf-8", ErrInvalidName)
	}
	return nil
}

// hasControlOrSpace reports whether s holds a space or a control byte.
func hasControlOrSpace(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// validLiteralSubject checks a subject a client may publish to or filter on
// exactly: dot-separated non-empty tokens, no wildcard, no space or control
// byte, valid UTF-8, at most max bytes. '*' and '>' inside a longer token are literal
// characters for the server, but they are refused here as well: a binding's
// subject is never meant to look like a wildcard.
func validLiteralSubject(s string, max int) error {
	if s == "" {
		return fmt.Errorf("%w: empty", ErrInvalidSubject)
	}
	if len(s) > max {
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidSubject, max)
	}
	if hasControlOrSpace(s) {
		return fmt.Errorf("%w: contains white space or a control byte", ErrInvalidSubject)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: invalid utf-8", ErrInvalidSubject)
	}
	tokenStart := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '*', '>':
				return fmt.Errorf("%w: contains a wildcard", ErrInvalidSubject)
			}
			if s[i] != '.' {
				continue
			}
		}
		if i == tokenStart {
			return fmt.Errorf("%w: empty token", ErrInvalidSubject)
		}
		tokenStart = i + 1
	}
	return nil
}
