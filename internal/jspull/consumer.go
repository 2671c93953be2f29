package jspull

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/latent-systems/latent-nats/acksubject"
	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/pull"
)

// Requester is what the operations need from a connection: strictly
// sequential request/reply, bounded by the deadline given and interrupted
// by the end of ctx. *conn.Conn implements it. The call's Subject is read
// during the call only and must not be retained (the acknowledgement's is
// kept in the Consumer's Scratch); Delivery marks the pull, whose answer
// may be a message delivered under its own subject (Reply.Forwarded).
//
// The deadline passed is the operation's bound: the caller's context's
// deadline when it is earlier, else the bound of the operation (the
// operation timeout, or the pull's expiry and margin). A Requester must not
// block past it, as *conn.Conn does with socket deadlines.
//
// Errors are read as *conn.Conn reports them: conn.ErrNoDeadline,
// conn.ErrTooLarge, conn.ErrInvalidRequest, the bare conn.ErrClosed sentinel
// and a context error that is not inside a *conn.ClosedError or
// conn.ErrUnanswered mean nothing was written; any other error means the
// request may have been written (an acknowledgement given up unanswered on
// a kept connection is as uncertain as one whose connection closed).
//
// A Requester that also has the method
//
//	Await(ctx context.Context, deadline time.Time) (conn.Reply, error)
//
// as *conn.Conn does, reading one more message answering the request it
// answered last, lets Next read a message that a replicated consumer sends
// after "409 Batch Completed" (see follower); without it Next returns
// KindBatchCompleted and the message arrives during the next request.
type Requester interface {
	Exchange(ctx context.Context, deadline time.Time, call conn.Call) (conn.Reply, error)
}

// clusterReporter is what Inspect asks of a Requester that can tell
// whether its server is in a cluster (*conn.Conn's Clustered): a reply
// of such a server without "cluster" state is not the consumer leader's
// (see Pending.Leader). A Requester without the method is taken as a
// server outside a cluster.
type clusterReporter interface {
	Clustered() bool
}

// follower is a Requester that can also read one more message answering
// the request it answered last (conn.Conn's Await; see Requester). Next uses it when the
// first reply to a pull is "409 Batch Completed": nats-server 2.14.6 sends
// that status only after delivering a message to the request (consumer.go,
// getNextMsg's loop: the batch filled while max_bytes had room left), and
// for a consumer replicated in a cluster it sends the status at once but
// the message only once the consumer's delivered state has a quorum
// (deliverMsg, replicateDeliveries), so the message follows the status. A
// Requester that is no follower gets KindBatchCompleted, and the message
// arrives during its next request.
type follower interface {
	Requester
	Await(ctx context.Context, deadline time.Time) (conn.Reply, error)
}

// Bounds of Options.
const (
	// DefaultNextMargin is Options.NextMargin when zero: the time allowed
	// beyond the pull's 100 ms expiry for the broker's 408 to arrive.
	DefaultNextMargin = 150 * time.Millisecond
	// MinNextMargin and MaxNextMargin bound Options.NextMargin.
	MinNextMargin = 10 * time.Millisecond
	MaxNextMargin = time.Second

	// DefaultOpTimeout is Options.OpTimeout when zero.
	DefaultOpTimeout = time.Second
	// MinOpTimeout and MaxOpTimeout bound Options.OpTimeout, the delivery
	// operation timeout range of the profile.
	MinOpTimeout = 100 * time.Millisecond
	MaxOpTimeout = 10 * time.Second
)

// Options tune a Consumer. The zero value is valid.
type Options struct {
	// Now is the clock for ack-wait deadlines and receipt times; nil means
	// time.Now.
	Now func() time.Time
	// NextMargin is added to the pull's expiry (RequestExpires) to bound
	// Next; zero means DefaultNextMargin.
	NextMargin time.Duration
	// OpTimeout bounds Inspect and Ack when the caller's context allows
	// longer; zero means DefaultOpTimeout.
	OpTimeout time.Duration
	// Scratch is the working memory the Consumer shares with the other
	// Consumers given the same one (see Scratch); nil means the Consumer
	// allocates its own.
	Scratch *Scratch
}

// Consumer runs the operations of one binding. It holds no connection and
// no goroutine; it is not safe for concurrent use, nor for use concurrent
// with another Consumer sharing its Scratch (which holds the buffers for
// acknowledgement payloads and for the ack subject of the latest delivery,
// see Delivery).
type Consumer struct {
	b           Binding
	ack         acksubject.Binding
	infoSubject []byte
	nextSubject []byte
	nextBody    []byte
	now         func() time.Time
	nextBound   time.Duration
	opTimeout   time.Duration
	s           *Scratch
	accountHash string // the v2 account hash last seen, see Delivery
}

// NewConsumer validates b and opts and prepares the subjects and the pull
// body once. It allocates a Scratch unless opts.Scratch is set.
func NewConsumer(b Binding, opts Options) (*Consumer, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	margin := opts.NextMargin
	if margin == 0 {
		margin = DefaultNextMargin
	}
	if margin < MinNextMargin || margin > MaxNextMargin {
		return nil, &BindingError{Field: "next_margin", Err: errOutOfRange}
	}
	op := opts.OpTimeout
	if op == 0 {
		op = DefaultOpTimeout
	}
	if op < MinOpTimeout || op > MaxOpTimeout {
		return nil, &BindingError{Field: "op_timeout", Err: errOutOfRange}
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	s := opts.Scratch
	if s == nil {
		s = new(Scratch)
	}
	return &Consumer{
		b:           b,
		ack:         acksubject.Binding{Stream: b.Stream, Consumer: b.Consumer},
		infoSubject: []byte(b.InfoSubject()),
		nextSubject: []byte(b.NextSubject()),
		nextBody:    appendNextBody(nil, b.MaxBytes()),
		now:         now,
		nextBound:   RequestExpires + margin,
		opTimeout:   op,
		s:           s,
	}, nil
}

// Binding returns the consumer's binding.
func (c *Consumer) Binding() Binding { return c.b }

// Scratch returns the Scratch the consumer uses: Options.Scratch, or its
// own.
func (c *Consumer) Scratch() *Scratch { return c.s }

// NextBody returns a copy of the pull request body.
func (c *Consumer) NextBody() []byte { return append([]byte(nil), c.nextBody...) }

// bound is the deadline of an operation bounded by d: d from now, or ctx's
// deadline when it is earlier.
func bound(ctx context.Context, d time.Duration) time.Time {
	limit := time.Now().Add(d)
	if dl, ok := ctx.Deadline(); ok && dl.Before(limit) {
		return dl
	}
	return limit
}

// Inspect requests consumer info and checks it against the profile. It
// returns the pending counts whenever the reply decoded, also with a
// *ProfileError or ErrConsumerPaused (the caller must not pull then).
// Errors: the connection's (wrapped), ErrNoResponders, ErrStreamNotFound,
// ErrConsumerNotFound, *APIError, ErrInfoTooLarge, *InfoError,
// *ProfileError, ErrConsumerPaused (a consumer matching the profile but
// paused), and a *ReplyError for a reply that is not a plain message.
func (c *Consumer) Inspect(ctx context.Context, r Requester) (Pending, error) {
	rep, err := r.Exchange(ctx, bound(ctx, c.opTimeout), conn.Call{Subject: c.infoSubject})
	if err != nil {
		return Pending{}, fmt.Errorf("pull: inspect: %w", err)
	}
	if rep.Status != 0 {
		if noRespondersReply(&rep) {
			return Pending{}, ErrNoResponders
		}
		return Pending{}, &ReplyError{op: opInspect, Err: ErrUnknownStatus}
	}
	if rep.Forwarded || len(rep.ReplyTo) != 0 || len(rep.Header) != 0 {
		return Pending{}, &ReplyError{op: opInspect, Err: ErrUnexpectedReply}
	}
	var ci consumerInfo
	if err := decodeInfo(rep.Payload, &ci); err != nil {
		return Pending{}, err
	}
	if ci.apiErr {
		return Pending{}, ci.infoError()
	}
	if cr, ok := r.(clusterReporter); ok && cr.Clustered() && !ci.clustered {
		ci.pending.Leader = false
	}
	if ms := checkProfile(&c.b, &ci); ms != nil {
		return ci.pending, &ProfileError{Mismatches: ms}
	}
	if ci.paused {
		return ci.pending, ErrConsumerPaused
	}
	return ci.pending, nil
}

// Next sends one no-wait pull and classifies the reply. The operation is
// bounded by RequestExpires plus the margin, or ctx if that ends sooner;
// missing the bound closes the connection (the connection's rule) and
// returns its error. A *ReplyError means the connection must be closed.
//
// Every call, whatever its outcome, ends the validity of the Delivery the
// previous call returned, and of any Delivery of a Consumer sharing the
// Scratch (see Delivery): acknowledge it first, or keep its Clone. A pull allocates nothing in this package but the one copy of
// a v2 account hash (see Delivery).
func (c *Consumer) Next(ctx context.Context, r Requester) (Result, error) {
	c.s.ack.gen++
	sentAt := c.now()
	deadline := bound(ctx, c.nextBound)
	rep, err := r.Exchange(ctx, deadline, conn.Call{Subject: c.nextSubject, Payload: c.nextBody, Delivery: true})
	if err != nil {
		return Result{}, fmt.Errorf("pull: next: %w", err)
	}
	res, err := c.classifyNext(&rep, sentAt)
	f, ok := r.(follower)
	if err != nil || res.Kind != KindBatchCompleted || !ok {
		return res, err
	}
	// "409 Batch Completed" as the first reply: the broker delivered a
	// message to this request and sends it after the status (a replicated
	// consumer, see follower). It is read within the same bound. The same
	// status again is skipped, at most maxRepeatedCompleted times:
	// nats-server 2.14.6 sent it twice to one pull, then the message, as
	// a cluster's cut routes healed (TestClusterSoakPartitionMinority;
	// most likely the consumer leader about to step down and the one
	// elected meanwhile both took the request).
	for range maxRepeatedCompleted + 1 {
		rep, err = f.Await(ctx, deadline)
		if err != nil {
			return Result{}, fmt.Errorf("pull: next: %w", err)
		}
		res, err = c.classifyNext(&rep, sentAt)
		switch {
		case err != nil, res.Kind == KindMessage:
			return res, err
		case res.Kind.Class() == ClassUnavailable:
			// The leader stepped down or shut down before it sent the
			// message: the broker redelivers it after the ack wait.
			return res, nil
		case res.Kind != KindBatchCompleted:
			return Result{}, &ReplyError{op: opNext, Err: ErrUnexpectedReply}
		}
	}
	return Result{}, &ReplyError{op: opNext, Err: ErrUnexpectedReply}
}

// maxRepeatedCompleted is how many more times Next reads "409 Batch
// Completed" for one pull before it takes the reply for a fault: one per
// consumer leader beside the current one that a replica set of five
// (JetStream's largest) can briefly count.
const maxRepeatedCompleted = 4

// Ack sends cmd for the delivery d and waits for the broker's receipt,
// bounded by ctx and the operation timeout. It never retries.
//
// An invalid cmd, or a d not delivered for this binding or made stale by a
// later Next of a Consumer sharing the Scratch (see Delivery), is refused before anything is sent: a zero
// Receipt and ErrInvalidAction, ErrInvalidNakDelay, ErrInvalidTermReason
// or ErrInvalidDelivery. A request
// the connection refused before writing returns a zero Receipt and the
// connection's error. Otherwise the Receipt's Outcome is set: pull.AckVerified or
// pull.AckVerifiedLate with a nil error, or pull.AckUncertain with a *ReceiptError whose
// cause may itself match ErrCloseConnection.
func (c *Consumer) Ack(ctx context.Context, r Requester, d *Delivery, cmd Command) (Receipt, error) {
	payload, err := appendCommand(c.s.cmd[:0], cmd)
	if err != nil {
		return Receipt{}, err
	}
	if d == nil || !d.valid() || d.AckSubject.Stream != c.b.Stream || d.AckSubject.Consumer != c.b.Consumer {
		return Receipt{}, ErrInvalidDelivery
	}
	rec := Receipt{Action: cmd.Action, Delivery: d.ID}
	rep, err := r.Exchange(ctx, bound(ctx, c.opTimeout), conn.Call{Subject: d.subject, Payload: payload})
	at := c.now()
	if err != nil {
		if notWritten(err) {
			return Receipt{}, fmt.Errorf("pull: ack: %w", err)
		}
		rec.Outcome = pull.AckUncertain
		return rec, &ReceiptError{Err: err}
	}
	switch {
	case rep.Status == 0 && !rep.Forwarded && len(rep.ReplyTo) == 0 && len(rep.Header) == 0 && len(rep.Payload) == 0:
		rec.Outcome, rec.Late = receiptOutcome(at, d.AckDeadline)
		return rec, nil
	case noRespondersReply(&rep):
		rec.Outcome = pull.AckUncertain
		return rec, &ReceiptError{Err: ErrNoResponders}
	}
	rec.Outcome = pull.AckUncertain
	return rec, &ReceiptError{Err: &ReplyError{op: opAck, Err: ErrUnexpectedReply}}
}

// notWritten reports whether a Requester error proves that nothing was
// written (see Requester).
func notWritten(err error) bool {
	var closed *conn.ClosedError
	switch {
	case errors.As(err, &closed), errors.Is(err, conn.ErrUnanswered):
		// Written, then closed or given up unanswered: the server may
		// have acted on it.
		return false
	case errors.Is(err, conn.ErrClosed),
		errors.Is(err, conn.ErrNoDeadline),
		errors.Is(err, conn.ErrTooLarge),
		errors.Is(err, conn.ErrInvalidRequest),
		errors.Is(err, context.Canceled),
		errors.Is(err, context.DeadlineExceeded):
		return true
	}
	return false
}
