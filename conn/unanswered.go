package conn

import (
	"context"
	"errors"
	"fmt"
)

// maxUnanswered is how many requests kept unanswered (Config.KeepUnanswered)
// a connection remembers: a late reply to one of them is read and
// discarded. Past that the oldest is forgotten, and a reply to it, should
// one still come, is foreign (ErrForeignFrame: the connection is closed).
const maxUnanswered = 4

// unanswered is the ring of reply sequence numbers (see inbox) of the
// requests a connection gave up waiting for while keeping the connection.
type unanswered struct {
	seqs [maxUnanswered]uint64 // 0: empty
	next int
}

func (u *unanswered) add(seq uint64) {
	u.seqs[u.next] = seq
	u.next = (u.next + 1) % maxUnanswered
}

func (u *unanswered) has(seq uint64) bool {
	for _, s := range u.seqs {
		if s != 0 && s == seq {
			return true
		}
	}
	return false
}

// lateReply reports a message on the inbox subscription addressed to the
// reply subject of a request given up unanswered: its answer arriving
// after the request's deadline, to be read and discarded. A reply subject
// is never reused on a connection, so it can answer nothing else.
func lateReply(c *Conn, sid, subject []byte) bool {
	if string(sid) != inboxSID {
		return false
	}
	n, ok := c.inbox.seqOf(subject)
	return ok && c.unanswered.has(n)
}

// giveUp decides what a read error ends while a request of this
// connection awaits its answer (reply subject sequence seq; delivery for a
// request that accepts a forwarded message). The connection is kept, and
// ErrUnanswered returned, only when all of these hold: KeepUnanswered is
// set; the request is not a delivery request (a message JetStream delivers
// to a pull is forwarded under the stream's own subject, nats-server 2.14.6
// stream.go internalLoop setting the delivered subject, so a late one
// could not be told from the answer to a later pull); the error is the
// request's deadline (its own, or ctx's end by its deadline, not ctx's
// cancellation); and the parser holds no byte of a frame (a frame cut
// short by the deadline would leave the stream mid-message). The request
// was written in full before any read (a write cut short closes the
// connection: crypto/tls refuses every later write), and a read timeout
// leaves crypto/tls able to read on (net.Error Timeout is not sticky
// there), so the parser is reset and the reply subject remembered as
// given up. Otherwise the connection is closed as before.
func (c *Conn) giveUp(ctx context.Context, err error, seq uint64, delivery bool) error {
	if cerr := ctx.Err(); !c.keepUnanswered || delivery || !isTimeout(err) || c.p.Buffered() != 0 ||
		(cerr != nil && !errors.Is(cerr, context.DeadlineExceeded)) {
		return c.failCtx(ctx, err)
	}
	c.p.Reset(&c.rd)
	c.unanswered.add(seq)
	c.answered = false
	return fmt.Errorf("%w: %w", ErrUnanswered, context.DeadlineExceeded)
}
