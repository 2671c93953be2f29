package conn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/latent-systems/latent-nats/internal/wire"
	"github.com/latent-systems/latent-nats/parser"
)

// Reply is the message that answered a request. Its slices alias the
// connection's read buffer and are valid until the next call on the Conn
// (Request, Exchange, Await, Check or Close); copy what must outlive that.
type Reply struct {
	// Subject is the subject the message was published to: the request's
	// reply subject, or for a forwarded delivery the delivered message's
	// own subject.
	Subject []byte
	// ReplyTo is the message's own reply subject (a $JS.ACK subject for a
	// JetStream delivery), empty when absent.
	ReplyTo []byte
	// Header is the raw header block, empty for a message without one.
	Header []byte
	// Status is the header's status code (404, 408, 503, ...), 0 when none.
	Status int
	// Description is the status description, possibly empty.
	Description []byte
	// Payload is the message body, possibly empty.
	Payload []byte
	// Forwarded reports a message that reached the reply subject under its
	// own subject (Call.Delivery only).
	Forwarded bool
}

// HeaderValue returns the first value of the header field named exactly
// key, without allocating.
func (r *Reply) HeaderValue(key string) ([]byte, bool) {
	if len(r.Header) == 0 {
		return nil, false
	}
	return parser.HeaderValue(r.Header, key)
}

// Request publishes payload (with header, when not empty, as HPUB) to
// subject with a fresh reply subject under the connection's inbox and
// returns the one message delivered to that reply subject.
//
// While it waits, server PINGs are answered and INFOs read (at most
// MaxPingsPerExchange and MaxControlFramesPerExchange). Outcomes:
//
//   - the reply: nil error;
//   - a permission -ERR (the server dropped the publish): *ServerError of
//     KindPermission at once, and the connection stays usable;
//   - a refused subject, header or size: an error matching
//     ErrInvalidRequest or ErrTooLarge before any byte is written; the
//     connection stays usable;
//   - ctx already done before any byte is written: ctx's error, and the
//     connection stays usable;
//   - anything else closes the connection and returns a *ClosedError:
//     the deadline (context.DeadlineExceeded), ctx's end while the request
//     is written or awaited (ctx's error: it interrupts a blocked read or
//     write at once, see the package documentation, Deadlines), a message
//     for another subscription or reply subject (ErrForeignFrame), any
//     other -ERR (*ServerError), a malformed or oversized frame (the
//     parser's sentinels), too many control frames (ErrControlFlood), the
//     server closing (ErrServerClosed).
//
// ctx must carry a deadline (ErrNoDeadline).
func (c *Conn) Request(ctx context.Context, subject string, header, payload []byte) (Reply, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return Reply{}, ErrNoDeadline
	}
	return exchange(ctx, c, deadline, subject, header, payload, false)
}

// Call is one request for Exchange.
type Call struct {
	// Subject is where the request is published. Its bytes are read
	// during the call only, copied into the write buffer before anything
	// is written, and never retained.
	Subject []byte
	// Header, when not empty, is the raw header block (the request is an
	// HPUB); Payload is the body.
	Header  []byte
	Payload []byte
	// Delivery marks a request whose answer may also be a message the
	// server forwards to the reply subject under that message's own
	// subject, as JetStream delivers a pulled message: such a message, on
	// the inbox subscription but not under the inbox prefix, is returned
	// with Reply.Forwarded set. A message under the inbox for another
	// reply subject is still foreign. Only one request is ever outstanding
	// on a connection (strictly sequential calls, a missed deadline closes
	// it), so a forwarded message can only answer this one.
	Delivery bool
}

// Exchange is Request for a caller on a hot path (the pull operations):
// its bound is given explicitly, so a caller bounds each operation without
// a context of its own (the request ends by deadline, or by ctx's deadline
// when ctx has an earlier one, and ctx's end interrupts it as it does
// Request; ctx need not carry a deadline, a zero deadline is
// ErrNoDeadline); the subject is given as bytes a caller keeps in a reused
// buffer (an acknowledgement subject: read during the call only, copied
// into the write buffer before anything is written, never retained); and
// Call.Delivery accepts a forwarded delivery as the answer. Outcomes are
// Request's. Under one context for many calls it allocates nothing of
// conn's own, where Request under a context per call costs that context
// and its registration (docs/BENCHMARKS.md, "Request entry points").
func (c *Conn) Exchange(ctx context.Context, deadline time.Time, call Call) (Reply, error) {
	if deadline.IsZero() {
		return Reply{}, ErrNoDeadline
	}
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	return exchange(ctx, c, deadline, call.Subject, call.Header, call.Payload, call.Delivery)
}

// exchange is the one request/reply of Request and Exchange, for a
// subject given as a string or as bytes, bounded by deadline and
// interrupted by ctx's end.
func exchange[S wire.Text](ctx context.Context, c *Conn, deadline time.Time, subject S, header, payload []byte, forwarded bool) (Reply, error) {
	if c.closed {
		return Reply{}, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return Reply{}, err
	}
	if len(subject) > maxRequestSubjectLen || len(payload) > c.maxPayload || len(header) > wire.MaxOutboundHeader {
		return Reply{}, ErrTooLarge
	}
	c.answered = false
	reply := c.inbox.next()
	out, err := appendPub(c, subject, reply, header, payload)
	if err != nil {
		c.inbox.unnext() // never written: the token stays unused
		return Reply{}, err
	}
	// ctx's end sets a passed deadline on the socket (see canceller). It
	// is registered before the request's own deadline is set and ctx is
	// checked after it: an end before the check is seen here, one after it
	// interrupts the write or the wait for the reply.
	c.cancel.watch(ctx, c.raw)
	if err := c.tls.SetDeadline(deadline); err != nil {
		return Reply{}, c.fail(err)
	}
	if err := ctx.Err(); err != nil {
		c.inbox.unnext()
		return Reply{}, err
	}
	if _, err := c.tls.Write(out); err != nil {
		return Reply{}, c.failCtx(ctx, err)
	}
	r, err := c.awaitReply(ctx, reply, forwarded)
	if err == nil {
		c.answered, c.answeredDelivery = true, forwarded
	}
	return r, err
}

// Await waits for one more message answering the request the connection
// made last, once that request was answered: a message to its reply
// subject or, for a delivery request (Call.Delivery), a
// message forwarded to it. It is for a server that sends the real answer
// after a first reply: a JetStream consumer replicated in a cluster
// answers a pull with "409 Batch Completed" at once and sends the message
// it delivered only once its delivered state has a quorum (nats-server
// 2.14.6, consumer.go deliverMsg), so the message follows the status
// (the pull layer's Consumer.Next). The wait ends by deadline, or by
// ctx's deadline when ctx has an earlier one, and ctx's end interrupts it,
// as Exchange's does; a zero deadline is ErrNoDeadline. Outcomes are
// Request's but for the write: without an answered request to follow it
// returns ErrNoRequest and reads nothing. The previous Reply's slices are
// invalid once Await is called.
func (c *Conn) Await(ctx context.Context, deadline time.Time) (Reply, error) {
	if c.closed {
		return Reply{}, ErrClosed
	}
	if !c.answered {
		return Reply{}, ErrNoRequest
	}
	if deadline.IsZero() {
		return Reply{}, ErrNoDeadline
	}
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	if err := ctx.Err(); err != nil {
		return Reply{}, err
	}
	c.cancel.watch(ctx, c.raw)
	if err := c.tls.SetDeadline(deadline); err != nil {
		return Reply{}, c.fail(err)
	}
	if err := ctx.Err(); err != nil {
		return Reply{}, err
	}
	return c.awaitReply(ctx, c.inbox.current(), c.answeredDelivery)
}

// awaitReply reads frames until the message answering the request whose
// reply subject is reply (or, with forwarded, a message forwarded to it),
// answering PINGs and reading INFOs on the way.
func (c *Conn) awaitReply(ctx context.Context, reply []byte, forwarded bool) (Reply, error) {
	var ctl control
	for range MaxControlFramesPerExchange + 1 {
		f, err := c.p.Next()
		if err != nil {
			return Reply{}, c.giveUp(ctx, err, c.inbox.seq, forwarded)
		}
		switch f.Op {
		case parser.OpMsg, parser.OpHMsg:
			if string(f.SID) != inboxSID {
				return Reply{}, c.fail(ErrForeignFrame)
			}
			if string(f.Subject) == string(reply) {
				return replyOf(f, false), nil
			}
			if forwarded && !c.inbox.under(f.Subject) {
				return replyOf(f, true), nil
			}
			if !trailingStatus(c, f) && !lateReply(c, f.SID, f.Subject) {
				return Reply{}, c.fail(ErrForeignFrame)
			}
			// A status the server sends after an earlier request was
			// answered (2.14.6 follows a pull that carried max_bytes with
			// "409 Batch Completed"), or the late answer to a request
			// given up unanswered (see giveUp): it answers nothing now and
			// is counted as a control frame.
			ctl.frames++
			if ctl.frames > MaxControlFramesPerExchange {
				return Reply{}, c.fail(ErrControlFlood)
			}
			continue
		case parser.OpErr:
			kind := classify(f.ErrText)
			if kind.Fatal() {
				return Reply{}, c.fail(&ServerError{Kind: kind})
			}
			return Reply{}, &ServerError{Kind: kind}
		}
		if err := ctl.handle(c, f); err != nil {
			return Reply{}, c.failCtx(ctx, err)
		}
		if err := ctx.Err(); err != nil {
			return Reply{}, c.fail(err)
		}
	}
	return Reply{}, c.fail(ErrControlFlood)
}

// appendPub encodes the request into the write buffer, which never grows:
// the size checks above and wire's caps keep it within its capacity. The
// reply subject stays bytes (the inbox's buffer), so nothing is converted.
func appendPub[S wire.Text](c *Conn, subject S, reply, header, payload []byte) ([]byte, error) {
	var out []byte
	var err error
	if len(header) > 0 {
		out, err = wire.AppendHPubText(c.wbuf[:0], subject, reply, header, payload, c.serverMax)
	} else {
		out, err = wire.AppendPubText(c.wbuf[:0], subject, reply, payload, c.serverMax)
	}
	switch {
	case err == nil:
		return out, nil
	case errors.Is(err, wire.ErrPayloadTooLarge), errors.Is(err, wire.ErrLineTooLong), errors.Is(err, wire.ErrHeaderTooLarge):
		return nil, fmt.Errorf("%w: %w", ErrTooLarge, err)
	default:
		return nil, fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
}

// trailingStatus reports a status-only message addressed to the reply
// subject of an earlier request of this connection, during a request.
func trailingStatus(c *Conn, f parser.Frame) bool {
	return statusOnly(f) && c.inbox.earlier(f.Subject)
}

// idleStatus reports a status-only message on the inbox subscription
// addressed to the reply subject of any request made so far, between
// requests (the last one's trailing status may arrive after its reply).
func idleStatus(c *Conn, f parser.Frame) bool {
	return string(f.SID) == inboxSID && statusOnly(f) && c.inbox.issued(f.Subject)
}

// statusOnly reports a message with a status and nothing else: no reply
// subject, no payload.
func statusOnly(f parser.Frame) bool {
	return f.Op == parser.OpHMsg && f.Status != 0 && len(f.Payload) == 0 && len(f.Reply) == 0
}

func replyOf(f parser.Frame, forwarded bool) Reply {
	return Reply{
		Subject:     f.Subject,
		ReplyTo:     f.Reply,
		Header:      f.Header,
		Status:      f.Status,
		Description: f.Description,
		Payload:     f.Payload,
		Forwarded:   forwarded,
	}
}
