package jspull

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/latent-systems/latent-nats/acksubject"
	"github.com/latent-systems/latent-nats/conn"
)

// appendNextBody appends the pull request body for a consumer whose
// max_bytes is maxBytes:
//
//	{"batch":1,"no_wait":true,"expires":100000000,"max_bytes":<maxBytes>}
//
// batch 1 because the consumer's max_batch is 1; no_wait so that the broker
// answers at once when it can; expires 100 ms (RequestExpires) as the
// consumer's max_expires, which also makes the broker answer 408 rather than
// hold a request blocked at max_ack_pending; max_bytes so that the broker,
// not the client, refuses a message over the ceiling.
func appendNextBody(dst []byte, maxBytes int) []byte {
	dst = append(dst, `{"batch":1,"no_wait":true,"expires":`...)
	dst = strconv.AppendInt(dst, int64(RequestExpires), 10)
	dst = append(dst, `,"max_bytes":`...)
	dst = strconv.AppendInt(dst, int64(maxBytes), 10)
	return append(dst, '}')
}

// Delivery is one delivered message's identity and acknowledgement handle.
// It holds no payload.
//
// A Delivery returned by Next is valid until the next call of Next on the
// same Consumer or on any Consumer sharing its Scratch: its ack subject
// lives in the Scratch's buffer, reused for every delivery, so that a pull
// allocates nothing. A Delivery that a later
// Next made stale is never taken for the later one: Ack refuses it with
// ErrInvalidDelivery before sending anything, Subject returns "" and Clone
// returns one that is refused too. To keep a Delivery across later pulls,
// keep its Clone, made before the next Next, which owns its subject. ID,
// AckSubject and AckDeadline are plain values that stay correct in every
// copy, stale or not.
type Delivery struct {
	// ID names the delivery (stream sequence, consumer sequence, delivery
	// count) as its ack subject does.
	ID DeliveryID
	// AckSubject is the ack subject parsed: form, stream, consumer,
	// sequences, timestamp and pending count. Its strings alias no buffer:
	// Stream and Consumer are the binding's, AccountHash is a copy the
	// Consumer keeps (made at the first v2 delivery and again only if the
	// hash changes).
	AckSubject acksubject.Info
	// AckDeadline is the conservative end of the delivery's ack wait: the
	// time the pull was sent plus the binding's AckWait, on the Consumer's
	// clock. The broker started its timer no earlier.
	AckDeadline time.Time

	// subject is the ack subject: a full slice of src's buffer while src
	// is set, or the Delivery's own copy after Clone (src nil).
	subject []byte
	src     *ackBuffer
	gen     uint64 // src.gen when the subject was stored
}

// valid reports whether d's subject is still the one it was given: its own
// copy, or the Scratch's buffer not rewritten since.
func (d *Delivery) valid() bool {
	return len(d.subject) > 0 && (d.src == nil || d.src.gen == d.gen)
}

// Subject returns a copy of the ack subject (it allocates), or "" for a
// zero Delivery or one a later Next made stale.
func (d *Delivery) Subject() string {
	if !d.valid() {
		return ""
	}
	return string(d.subject)
}

// Clone returns a copy of d that owns its ack subject, so that it stays
// valid after later calls of Next (it allocates the subject once). A stale
// Delivery clones into one that Ack still refuses.
func (d *Delivery) Clone() Delivery {
	out := *d
	if d.valid() && d.src != nil {
		out.subject = bytes.Clone(d.subject)
		out.src, out.gen = nil, 0
	}
	return out
}

// Result is the classified reply to a pull request.
type Result struct {
	// Kind is the classification; KindMessage when a message arrived.
	Kind Kind
	// Delivery identifies the message (KindMessage only). Its ack subject
	// is valid until the next Next of a Consumer sharing the Scratch,
	// this one included (see Delivery).
	Delivery Delivery
	// Header is the message's raw header block, possibly empty, and Payload
	// its body, at most the payload ceiling (KindMessage only). Both alias
	// the connection's read buffer and are valid only until the next call
	// on the connection, the acknowledgement included: copy them first.
	Header  []byte
	Payload []byte
}

// classifyNext turns the reply to a pull request into a Result, or into a
// *ReplyError when the frame is not one the profile allows. sentAt is when
// the request was sent.
func (c *Consumer) classifyNext(r *conn.Reply, sentAt time.Time) (Result, error) {
	if r.Status != 0 {
		if r.Forwarded || len(r.ReplyTo) != 0 || len(r.Payload) != 0 {
			return Result{}, &ReplyError{op: opNext, Err: ErrUnexpectedReply}
		}
		k := statusKind(r.Status, r.Description)
		if k == 0 {
			return Result{}, &ReplyError{op: opNext, Err: ErrUnknownStatus}
		}
		return Result{Kind: k}, nil
	}
	if !r.Forwarded || len(r.ReplyTo) == 0 {
		return Result{}, &ReplyError{op: opNext, Err: ErrUnexpectedReply}
	}
	if string(r.Subject) != c.b.FilterSubject {
		return Result{}, &ReplyError{op: opNext, Err: ErrWrongConsumer}
	}
	if len(r.Payload) > c.b.PayloadCeiling {
		return Result{}, &ReplyError{op: opNext, Err: ErrOverCeiling}
	}
	if len(r.ReplyTo) > acksubject.MaxLen {
		return Result{}, &ReplyError{op: opNext, Err: ErrBadAckSubject}
	}
	// The ack subject is copied into the Scratch's buffer and parsed
	// there: the exact bytes Ack will publish to are the ones checked.
	// Binding.ParseBytes reads the bytes during the call only: the Info's
	// Stream and Consumer are the binding's, and its AccountHash the
	// Consumer's copy of the last one seen (a v2 subject with another hash
	// is parsed again without it, and its hash copied once). Nothing of the
	// Info aliases the buffer the next delivery rewrites.
	n := copy(c.s.ack.buf[:], r.ReplyTo)
	stored := c.s.ack.buf[:n:n]
	ab := c.ack
	ab.AccountHash = c.accountHash
	info, err := ab.ParseBytes(stored)
	if err != nil && c.accountHash != "" {
		var me *acksubject.MismatchError
		if errors.As(err, &me) && me.Field == acksubject.FieldAccountHash {
			info, err = c.ack.ParseBytes(stored)
		}
	}
	if err != nil {
		if errors.Is(err, acksubject.ErrMismatch) {
			return Result{}, &ReplyError{op: opNext, Err: ErrWrongConsumer}
		}
		if unsupportedAck(err) {
			return Result{}, ErrUnsupportedAck
		}
		return Result{}, &ReplyError{op: opNext, Err: fmt.Errorf("%w: %w", ErrBadAckSubject, err)}
	}
	if info.AccountHash != "" {
		c.accountHash = info.AccountHash
	}
	return Result{
		Kind: KindMessage,
		Delivery: Delivery{
			ID:          DeliveryID{StreamSeq: info.StreamSeq, ConsumerSeq: info.ConsumerSeq, Delivered: info.Delivered},
			AckSubject:  info,
			AckDeadline: sentAt.Add(c.b.AckWait),
			subject:     stored,
			src:         &c.s.ack,
			gen:         c.s.ack.gen,
		},
		Header:  r.Header,
		Payload: r.Payload,
	}, nil
}

// unsupportedAck reports whether err, the refusal of an ack subject,
// names a form the broker may send that this grammar does not read: the
// v2 form with a domain other than "_", or extended past its eleven
// tokens (acksubject.RuleDomain, RuleExtended).
func unsupportedAck(err error) bool {
	return errors.Is(err, acksubject.RuleDomain) || errors.Is(err, acksubject.RuleExtended)
}
