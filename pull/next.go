package pull

import (
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
// It holds no payload and stays valid after the connection moves on.
type Delivery struct {
	// ID names the delivery (stream sequence, consumer sequence, delivery
	// count) as its ack subject does.
	ID DeliveryID
	// AckSubject is the ack subject parsed: form, stream, consumer,
	// sequences, timestamp and pending count. Its strings alias the
	// Delivery's own copy of the subject.
	AckSubject acksubject.Info
	// AckDeadline is the conservative end of the delivery's ack wait: the
	// time the pull was sent plus the binding's AckWait, on the Consumer's
	// clock. The broker started its timer no earlier.
	AckDeadline time.Time

	subject string // the ack subject, the one allocation of a delivery
}

// Subject returns the ack subject.
func (d *Delivery) Subject() string { return d.subject }

// Result is the classified reply to a pull request.
type Result struct {
	// Kind is the classification; KindMessage when a message arrived.
	Kind Kind
	// Delivery identifies the message (KindMessage only).
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
			return Result{}, &ReplyError{Op: OpNext, Err: ErrUnexpectedReply}
		}
		k := statusKind(r.Status, r.Description)
		if k == 0 {
			return Result{}, &ReplyError{Op: OpNext, Err: ErrUnknownStatus}
		}
		return Result{Kind: k}, nil
	}
	if !r.Forwarded || len(r.ReplyTo) == 0 {
		return Result{}, &ReplyError{Op: OpNext, Err: ErrUnexpectedReply}
	}
	if string(r.Subject) != c.b.FilterSubject {
		return Result{}, &ReplyError{Op: OpNext, Err: ErrWrongConsumer}
	}
	if len(r.Payload) > c.b.PayloadCeiling {
		return Result{}, &ReplyError{Op: OpNext, Err: ErrOverCeiling}
	}
	if len(r.ReplyTo) > acksubject.MaxLen {
		return Result{}, &ReplyError{Op: OpNext, Err: ErrBadAckSubject}
	}
	subject := string(r.ReplyTo)
	info, err := c.ack.Parse(subject)
	if err != nil {
		if errors.Is(err, acksubject.ErrMismatch) {
			return Result{}, &ReplyError{Op: OpNext, Err: ErrWrongConsumer}
		}
		return Result{}, &ReplyError{Op: OpNext, Err: fmt.Errorf("%w: %w", ErrBadAckSubject, err)}
	}
	return Result{
		Kind: KindMessage,
		Delivery: Delivery{
			ID:          DeliveryID{StreamSeq: info.StreamSeq, ConsumerSeq: info.ConsumerSeq, Delivered: info.Delivered},
			AckSubject:  info,
			AckDeadline: sentAt.Add(c.b.AckWait),
			subject:     subject,
		},
		Header:  r.Header,
		Payload: r.Payload,
	}, nil
}
