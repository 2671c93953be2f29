package conn

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/latent-systems/latent-nats/parser"
)

// Conn is one established connection. It is not safe for concurrent use:
// the caller makes one call at a time (the run loop's goroutine owns it).
type Conn struct {
	raw   net.Conn // the one TCP socket
	tls   *tls.Conn
	rd    sockReader
	p     *parser.Parser
	wbuf  []byte // fixed capacity, see writeBufferSize
	inbox inbox
	// cancel makes a caller's context interrupt the socket (see canceller).
	cancel canceller

	maxPayload int // Config.MaxPayload, message bytes of a request or reply
	serverMax  int // INFO max_payload: header block and payload of a publish
	jetStream  bool
	clustered  bool
	lameDuck   bool
	closed     bool
	// answered is set when the last request got its answer, for Await;
	// answeredDelivery when that request accepted a forwarded message.
	answered         bool
	answeredDelivery bool
	// keepUnanswered is Config.KeepUnanswered; unanswered the requests
	// given up while keeping the connection (see giveUp).
	keepUnanswered bool
	unanswered     unanswered
}

// Close closes the socket. It sends nothing (no TLS close_notify either,
// which could block on a full send buffer) and is idempotent: later calls
// return nil. Slices of a Reply are invalid afterwards.
func (c *Conn) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	c.cancel.unwatch()
	clear(c.wbuf[:cap(c.wbuf)])
	c.wbuf = nil
	c.p, c.rd.p = nil, nil
	if err := c.raw.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// Detach stops the cancellation registration the last call left on the
// connection (see the package documentation, Deadlines), so that ending
// that call's context later runs nothing. A caller that ends its context
// right after a call, on a connection it keeps for later calls under other
// contexts, calls Detach first; otherwise that end runs one short function
// of the context package, on a goroutine of its own, that sets a passed
// deadline on the idle socket (which the next call replaces). Close
// detaches too.
func (c *Conn) Detach() { c.cancel.unwatch() }

// Closed reports whether the connection is closed, by Close or by an error
// (every such error matches ErrClosed).
func (c *Conn) Closed() bool { return c.closed }

// LameDuck reports whether the server announced lame-duck mode (INFO
// "ldm") in any INFO read so far. The connection still works, but the
// server will close it soon: a pool should not hand it out again.
func (c *Conn) LameDuck() bool { return c.lameDuck }

// JetStream reports whether the server's INFO announced JetStream.
func (c *Conn) JetStream() bool { return c.jetStream }

// Clustered reports whether the server's first INFO named a cluster
// ("cluster"): nats-server 2.14.6 names one whenever it has a cluster
// block (server.go, NewServer), so its JetStream assets are replicated
// groups whose consumer info comes from their leader (the pull layer's
// Pending.Leader reads it).
func (c *Conn) Clustered() bool { return c.clustered }

// MaxPayload is the largest request payload accepted: Config.MaxPayload,
// further capped by the server's max_payload.
func (c *Conn) MaxPayload() int { return min(c.maxPayload, c.serverMax) }

// Inbox returns the connection's inbox subject prefix "<prefix>.<token>"
// (without the trailing ".*" of its subscription).
func (c *Conn) Inbox() string { return c.inbox.base[:len(c.inbox.base)-1] }

// fail closes the connection because of cause and returns the error that
// reports it.
func (c *Conn) fail(cause error) error {
	_ = c.Close()
	return &ClosedError{Err: normalise(cause)}
}

// failCtx is fail for a call under ctx: a timeout caused by ctx's end (see
// canceller) is reported as ctx's error.
func (c *Conn) failCtx(ctx context.Context, cause error) error {
	return c.fail(interrupted(ctx, cause))
}

// normalise maps socket-level causes onto what callers match: a deadline
// onto context.DeadlineExceeded, an end of input or a lost connection onto
// ErrServerClosed, a parser's refusal of the server's bytes onto
// ErrFraming (keeping the parser's error). A classified TLS failure and a
// refused dial are kept as they are.
func normalise(err error) error {
	var tf *tlsFailure
	switch {
	case errors.As(err, &tf), errors.Is(err, ErrFraming), errors.Is(err, ErrRefused):
		return err
	case isFraming(err):
		return &framingError{err: err}
	case errors.Is(err, syscall.ETIMEDOUT):
		// The connection's own timeout (keepalive or retransmission), which
		// an errno reports as a Timeout like a passed deadline: lost.
		return ErrServerClosed
	case isTimeout(err):
		return context.DeadlineExceeded
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return ErrServerClosed
	default:
		return err
	}
}

func isTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// sockReader is what the parser reads: the TLS connection, plus a probe
// mode for Check that returns what has already arrived without waiting
// for more, and reports running out of it as a clean end of input.
type sockReader struct {
	c   *tls.Conn
	raw net.Conn
	pk  peeker         // looks at raw in probe mode
	p   *parser.Parser // the parser reading it, to know whether it is inside a frame

	probe    bool
	limit    time.Time // probe mode: the caller's deadline, zero when none
	until    time.Time // probe mode: the bound for input that has begun to arrive, zero until then
	timedOut bool      // probe mode: the last read found no more input
	waits    uint64    // probe mode: reads that had to wait for input, for tests

	// pause, when set (by tests only), runs at the start of every probe
	// read and before a PING's answer in Check: a goroutine descheduled
	// there must not use up a bound meant for input or for the answer.
	pause func()
}

// bound is checkDrainWait from now, never past the caller's deadline.
func (r *sockReader) bound() time.Time {
	b := time.Now().Add(checkDrainWait)
	if !r.limit.IsZero() && r.limit.Before(b) {
		return r.limit
	}
	return b
}

func (r *sockReader) Read(p []byte) (int, error) {
	if !r.probe {
		return r.c.Read(p)
	}
	if r.pause != nil {
		r.pause()
	}
	// First what crypto/tls already holds: with a deadline in the past a
	// read returns buffered records and never touches the socket. The
	// timeout does not break the TLS connection.
	if err := r.c.SetReadDeadline(time.Unix(1, 0)); err != nil {
		return 0, err
	}
	n, err := r.c.Read(p)
	if n > 0 || err != nil && !isTimeout(err) {
		return n, err
	}
	// Clear the deadline: through the runtime's poller a peek is refused
	// at once while the socket's deadline lies in the past (the thread
	// socket peeks regardless). The peek never blocks (MSG_DONTWAIT), so
	// it needs no deadline.
	if err := r.c.SetReadDeadline(time.Time{}); err != nil {
		return 0, err
	}
	if r.p.Buffered() == 0 && r.pk.peek(r.raw) == peekQuiet {
		r.timedOut = true
		return 0, io.EOF
	}
	// Input is waiting on the socket, the socket cannot be peeked at, it
	// ended, or the parser is inside a frame: the bounded read says which.
	// The bound starts here, once per Check, so a pause of this goroutine
	// before the input was seen cannot use it up.
	if r.until.IsZero() {
		r.until = r.bound()
	}
	if err := r.c.SetReadDeadline(r.until); err != nil {
		return 0, err
	}
	r.waits++
	n, err = r.c.Read(p)
	if err != nil && isTimeout(err) {
		r.timedOut = true
		return n, io.EOF
	}
	return n, err
}
