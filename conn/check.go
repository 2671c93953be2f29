package conn

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/latent-systems/latent-nats/parser"
)

// checkDrainWait bounds how long Check waits for the rest of input that had
// already begun to arrive on an idle connection (or, on a socket it cannot
// peek at, for any input at all).
const checkDrainWait = 5 * time.Millisecond

// peekResult is what a non-blocking look at the socket found.
type peekResult uint8

const (
	peekQuiet   peekResult = iota + 1 // nothing to read
	peekPending                       // bytes waiting
	peekClosed                        // end of stream or a socket error
	peekUnknown                       // the socket cannot be peeked at
)

// Check reports whether an idle connection is still usable, without
// writing anything (but the answer to a server PING), so that a pool can
// replace a connection the server closed before a command is sent on it.
//
// It reads only what has already arrived: the frames crypto/tls and the
// parser hold, then, if a non-blocking peek at the socket (one system call
// on Linux and the BSDs) finds input, that input, waiting at most
// 5 ms (checkDrainWait, and never past ctx's deadline) for the rest of a
// frame that has begun to arrive. On a socket that cannot be peeked at it
// waits those 5 ms for any input. PINGs are answered and INFOs read as during
// a request, and so is a status-only message to the reply subject of a
// request already made (a trailing status such as 2.14.6's "409 Batch
// Completed" after a delivery) and the late answer to a request given up
// unanswered (Config.KeepUnanswered), each counted as a control frame and
// discarded. Nothing more to
// read: nil. The server closed the connection, any other message, an
// -ERR, a frame cut short or too many control frames: the connection is
// closed and a *ClosedError returned (ErrServerClosed, ErrForeignFrame,
// *ServerError, context.DeadlineExceeded, ErrControlFlood); an idle
// connection has no business receiving any of those.
//
// ctx need not carry a deadline. Check on a closed connection returns
// ErrClosed.
func (c *Conn) Check(ctx context.Context) error {
	if c.closed {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// ctx's end interrupts a wait of the probe (see canceller), which
	// otherwise lasts at most checkDrainWait.
	c.cancel.watch(ctx, c.raw)
	c.rd.limit, _ = ctx.Deadline()
	c.rd.until = time.Time{}
	var ctl control
	for range MaxControlFramesPerExchange + 1 {
		f, err := c.probeNext()
		switch {
		case err == errQuiet:
			return nil
		case err != nil:
			return c.fail(err)
		case f.Op == parser.OpErr:
			return c.fail(&ServerError{Kind: classify(f.ErrText)})
		case idleStatus(c, f), lateReply(c, f.SID, f.Subject):
			// The trailing status of a request already answered (2.14.6
			// follows a delivery whose pull carried max_bytes with "409
			// Batch Completed"); when no request followed it, it is still
			// unread. Or the late answer to a request given up unanswered
			// (see giveUp), discarded. Either is counted as a control
			// frame.
			ctl.frames++
			if ctl.frames > MaxControlFramesPerExchange {
				return c.fail(ErrControlFlood)
			}
			continue
		case f.Op == parser.OpMsg || f.Op == parser.OpHMsg:
			return c.fail(ErrForeignFrame)
		}
		// A PING's answer gets its own bound, so the time spent reading
		// cannot leave none for the write.
		if c.rd.pause != nil {
			c.rd.pause()
		}
		if err := c.tls.SetWriteDeadline(c.rd.bound()); err != nil {
			return c.fail(err)
		}
		if err := ctl.handle(c, f); err != nil {
			return c.fail(err)
		}
	}
	return c.fail(ErrControlFlood)
}

// errQuiet reports that probeNext found no further input.
var errQuiet = errors.New("conn: no input")

// probeNext reads one frame in probe mode: if the input that has arrived
// ends cleanly between frames before the deadline, it resets the parser
// (which lost nothing) and returns errQuiet; input that stops inside a
// frame is a timeout.
func (c *Conn) probeNext() (parser.Frame, error) {
	c.rd.probe, c.rd.timedOut = true, false
	f, err := c.p.Next()
	c.rd.probe = false
	switch {
	case err == nil:
		return f, nil
	case c.rd.timedOut && errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF):
		c.p.Reset(&c.rd)
		return parser.Frame{}, errQuiet
	case c.rd.timedOut:
		return parser.Frame{}, context.DeadlineExceeded
	default:
		return parser.Frame{}, err
	}
}
