package trigger

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
)

// link is one physical broker connection as a step uses it. The
// production link is a *conn.Conn driven by the bindings' jspull.Consumers;
// tests put a scripted one in its place, so that the step's state machine
// runs without sockets.
type link interface {
	// check probes an idle connection without writing anything; an error
	// means it is unusable (and closed).
	check(ctx context.Context) error
	// usable reports whether the link may be used again: not closed and
	// not in lame-duck mode.
	usable() bool
	// open reports whether the link is not closed (it may be in lame-duck
	// mode, and still carries the step that found it so).
	open() bool
	close()
	// detach stops the connection's cancellation registration (see
	// conn.Conn.Detach), before the step ends a context it used.
	detach()
	// inspect asks for consumer info, ending by by at the latest.
	inspect(ctx context.Context, by time.Time, b *bindingState) (jspull.Pending, error)
	// next pulls at most one message. The payload of a message aliases
	// the link's read buffer and is valid until its next call.
	next(ctx context.Context, b *bindingState) (pulled, error)
	// ack acknowledges the message the last next delivered for b.
	ack(ctx context.Context, b *bindingState, cmd jspull.Command) (jspull.Receipt, error)
}

// pulled is the reply to a pull.
type pulled struct {
	kind jspull.Kind
	id   jspull.DeliveryID
	// header and payload alias the link's read buffer, like the payload
	// of next.
	header  []byte
	payload []byte
}

// dialFunc opens a link for a tenant.
type dialFunc func(ctx context.Context, ts *tenantState) (link, error)

// dialError marks a failure to open a link.
type dialError struct{ err error }

func (e *dialError) Error() string { return "trigger: dial: " + e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// dialFailure says why a dial failed, by conn's typed errors: err is the
// dial's own error (inside the runtime's dialError).
func dialFailure(err error) DialFailure {
	var se *conn.ServerError
	switch {
	case errors.Is(err, conn.ErrRefused):
		return DialRefused
	case errors.Is(err, conn.ErrCertificate), errors.Is(err, conn.ErrClientCertificate),
		errors.Is(err, conn.ErrPlaintext), errors.Is(err, conn.ErrTLS):
		return DialTLS
	case errors.As(err, &se) && authorizationKind(se.Kind):
		return DialAuthorization
	}
	return DialOther
}

// authorizationKind reports the -ERR kinds by which a broker refuses a
// credential.
func authorizationKind(k conn.ErrKind) bool {
	switch k {
	case conn.KindAuthorization, conn.KindAuthenticationExpired, conn.KindAuthenticationRevoked:
		return true
	}
	return false
}

// client is one tenant client: created lazily at the tenant's first visit
// that needs the broker, holding at most one connection shared by the
// tenant's bindings. Its pool reservations (the client, and the connection
// while one is open) are taken before any dial and returned when it is
// released.
type client struct {
	created  bool
	link     link
	lastUsed time.Time
	failures int
	retryAt  time.Time
	// replaced counts idle connections found unusable and replaced.
	replaced uint64
	dials    uint64
	// retired says the last link was dropped on purpose (lame-duck mode,
	// idle past MaxIdleAge), not lost: the next dial that succeeds is
	// logged as its replacement (msgReplaced) rather than msgDialled.
	retired bool
	// log is the installation's logger (set by Install; nil in tests
	// that build a client alone, and silent).
	log *logger
}

// acquire returns a usable link, before any command of the step is written.
// A pooled connection is probed; one the broker closed while idle is lost
// (logged as msgLost, as a loss in an exchange is); one that turned out to
// be in lame-duck mode (an INFO read by the probe), or one idle past
// MaxIdleAge, or one authenticated with a secret Rotate replaced, is
// retired. Either is closed and replaced by one dial within
// this call. A probe that did not run because owner (the owner's context,
// whose cancellation ends the step) was already done leaves the connection
// pooled and returns owner's error. A new dial ends by by; it needs the
// backoff elapsed, the client and connection reservations, and succeeds or
// fails once; a failure sets the backoff unless owner was done, whatever
// cut the dial short otherwise (by included). now is the clock; rnd
// jitters the backoff.
func (c *client) acquire(owner context.Context, by time.Time, p *Pools, ts *tenantState, now func() time.Time, rnd io.Reader, dial dialFunc) (link, error) {
	if c.link != nil {
		switch {
		case !c.link.open():
			c.lose(p, ts, nil)
		case !c.link.usable() || now().Sub(c.lastUsed) > p.lim.MaxIdleAge || ts.cred.stale():
			c.replace(p, ts)
		default:
			err := c.link.check(owner)
			switch {
			case err == nil && c.link.usable():
				return c.link, nil
			case err == nil:
				// The probe read a lame-duck INFO.
				c.replace(p, ts)
			case unprobed(c.link, err):
				return nil, err
			default:
				c.lose(p, ts, err)
			}
		}
	}
	if now().Before(c.retryAt) {
		return nil, ErrDialBackoff
	}
	if !c.created {
		if err := p.reserveClient(); err != nil {
			return nil, err
		}
		c.created = true
	}
	if err := p.reserveConnection(ts.usage, ts.provider); err != nil {
		return nil, err
	}
	c.dials++
	ts.cred.checkout()
	// The one context of its own the phase before the pull makes: a
	// dial is rare, and conn.Dial leaves no registration on it.
	dctx, cancel := context.WithDeadline(owner, by)
	l, err := dial(dctx, ts)
	cancel()
	if err != nil {
		ts.cred.release()
		p.releaseConnection(ts.usage, ts.provider)
		if owner.Err() == nil {
			c.failures++
			wait := jitter(backoff(p.lim, c.failures), rnd)
			c.retryAt = now().Add(wait)
			c.log.backoff(ts, c.failures, wait, err)
		}
		return nil, &dialError{err: err}
	}
	c.log.dialled(ts, c.retired, c.failures > 0)
	c.retired = false
	c.failures = 0
	c.retryAt = time.Time{}
	c.link = l
	c.lastUsed = now()
	return l, nil
}

// unprobed reports a probe that did not run: ctx was done before it
// started, and the link is still open (a context error that closed the
// connection comes as a *conn.ClosedError).
func unprobed(l link, err error) bool {
	var ce *conn.ClosedError
	return l.open() && !errors.As(err, &ce) &&
		(errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

// jitter returns a wait drawn uniformly from [d/2, d] with rnd, so that a
// fleet of runtimes that lost one broker at the same moment does not dial
// it again in lockstep; the schedule's upper bounds are unchanged. A
// failing rnd leaves d.
func jitter(d time.Duration, rnd io.Reader) time.Duration {
	var b [8]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return d
	}
	half := d / 2
	return d - half + time.Duration(binary.LittleEndian.Uint64(b[:])%uint64(half+1))
}

// backoff returns the longest wait after the n-th consecutive failed dial
// (before jitter).
func backoff(lim PoolLimits, n int) time.Duration {
	d := lim.DialBackoff
	for i := 1; i < n && d < lim.MaxDialBackoff; i++ {
		d *= 2
	}
	return min(d, lim.MaxDialBackoff)
}

// settle is called after every exchange on the link: a link the exchange
// closed, or one the error says must be closed, is dropped with its
// reservation; otherwise its idle clock restarts. A link in lame-duck mode
// is kept: the step goes on using it (an activation that ran is still
// acknowledged on it), and retire drops it when the step ends.
func (c *client) settle(p *Pools, ts *tenantState, err error, now time.Time) {
	if c.link == nil {
		return
	}
	if (err != nil && closes(err)) || !c.link.open() {
		c.drop(p, ts)
		c.retired = false
		c.log.lost(ts, err)
		return
	}
	c.lastUsed = now
}

// lose drops a pooled link found closed (err is the probe's, nil when the
// link was already closed) and logs the loss.
func (c *client) lose(p *Pools, ts *tenantState, err error) {
	c.drop(p, ts)
	c.replaced++
	c.retired = false
	c.log.lost(ts, err)
}

// closes reports whether err leaves the link closed or to be closed. It
// is called with a non-nil err only: the target of errors.As escapes, and
// an exchange that succeeded allocates nothing here.
func closes(err error) bool {
	var ce *conn.ClosedError
	return errors.Is(err, jspull.ErrCloseConnection) || errors.As(err, &ce)
}

// replace drops a pooled link retired at checkout (lame-duck mode, idle
// past MaxIdleAge); the next dial is logged as its replacement.
func (c *client) replace(p *Pools, ts *tenantState) {
	c.drop(p, ts)
	c.replaced++
	c.retired = true
}

// retire drops, at the end of a step, a link that may not be used again
// (lame-duck mode) or that is idle past MaxIdleAge; the next dial is
// logged as its replacement.
func (c *client) retire(p *Pools, ts *tenantState, now time.Time) {
	if c.link != nil && (!c.link.usable() || now.Sub(c.lastUsed) > p.lim.MaxIdleAge) {
		c.retired = c.link.open()
		c.drop(p, ts)
	}
}

// detach stops the link's cancellation registration, if there is a link.
func (c *client) detach() {
	if c.link != nil {
		c.link.detach()
	}
}

// drop closes the link and returns its connection reservation.
func (c *client) drop(p *Pools, ts *tenantState) {
	if c.link == nil {
		return
	}
	c.link.close()
	c.link = nil
	ts.cred.release()
	p.releaseConnection(ts.usage, ts.provider)
}

// release drops the link and the client reservation. The dial backoff is
// kept.
func (c *client) release(p *Pools, ts *tenantState) {
	c.drop(p, ts)
	c.retired = false
	if c.created {
		c.created = false
		p.releaseClient()
	}
}

// sweep drops a link idle past MaxIdleAge; the next dial is logged as its
// replacement.
func (c *client) sweep(p *Pools, ts *tenantState, now time.Time) {
	if c.link != nil && now.Sub(c.lastUsed) > p.lim.MaxIdleAge {
		c.drop(p, ts)
		c.retired = true
	}
}

// ClientName is the client name sent in CONNECT.
const ClientName = "latent-nats-trigger"

// dialConn opens the production link: one handshake-first TLS connection
// to the tenant's exact destination with its credential.
func (t *Triggers) dialConn(ctx context.Context, ts *tenantState) (link, error) {
	cfg := t.connConfig(ts)
	c, err := conn.Dial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return t.newConnLink(c, ts), nil
}

// newConnLink drives c for tenant ts: the pull consumers it makes use the
// tenant's scratch, made here at the tenant's first link.
func (t *Triggers) newConnLink(c *conn.Conn, ts *tenantState) *connLink {
	if ts.scratch == nil {
		ts.scratch = new(jspull.Scratch)
	}
	return &connLink{c: c, now: t.now, scratch: ts.scratch, bounded: boundedConn{c: c}}
}

// connConfig is the connection configuration of a tenant: its exact
// destination and the secret of its dial (see credSlot.dialling), the installation's read caps, and the
// largest payload any of its bindings or the consumer info can carry.
func (t *Triggers) connConfig(ts *tenantState) conn.Config {
	d := ts.cfg.Destination
	cfg := conn.Config{
		Addr:           d.Address,
		ServerName:     d.ServerName,
		Roots:          ts.roots,
		SPKIPin:        ts.pin,
		Credential:     ts.cred.dialling(),
		Name:           ClientName,
		InboxPrefix:    InboxPrefix(ts.cfg.ID),
		MaxPayload:     ts.maxPayload,
		MaxControlLine: t.cfg.MaxControlLineBytes,
		MaxHeader:      t.cfg.MaxHeaderBytes,
		Dialer:         t.pools.dialer,
		ThreadSocket:   t.pools.thread,
		// A consumer that does not answer costs its binding a backoff,
		// not the tenant's other bindings their connection.
		KeepUnanswered: true,
	}
	if d.AllowNonPublic {
		cfg.AllowNonPublic = d.Address.Addr()
	}
	return cfg
}

// connLink is a *conn.Conn driven by jspull.Consumers.
type connLink struct {
	c   *conn.Conn
	now func() time.Time
	// scratch is the tenant's, shared by the consumers of its bindings.
	scratch *jspull.Scratch
	// last is the delivery of the last pull, for its acknowledgement.
	last    jspull.Delivery
	lastFor *bindingState
	// bounded is c for inspect.
	bounded boundedConn
}

func (l *connLink) check(ctx context.Context) error { return l.c.Check(ctx) }
func (l *connLink) usable() bool                    { return !l.c.Closed() && !l.c.LameDuck() }
func (l *connLink) open() bool                      { return !l.c.Closed() }
func (l *connLink) close()                          { _ = l.c.Close() }
func (l *connLink) detach()                         { l.c.Detach() }

// consumer returns the binding's pull consumer, made at its first use with
// the tenant's scratch.
func (l *connLink) consumer(b *bindingState) (*jspull.Consumer, error) {
	if b.consumer == nil {
		timeout := b.cfg.OperationTimeout()
		pc, err := jspull.NewConsumer(b.pullBinding(), jspull.Options{
			Now: l.now, OpTimeout: timeout, NextMargin: pullMargin(timeout), Scratch: l.scratch,
		})
		if err != nil {
			return nil, err
		}
		b.consumer = pc
	}
	return b.consumer, nil
}

func (l *connLink) inspect(ctx context.Context, by time.Time, b *bindingState) (jspull.Pending, error) {
	pc, err := l.consumer(b)
	if err != nil {
		return jspull.Pending{}, err
	}
	l.bounded.by = by
	return pc.Inspect(ctx, &l.bounded)
}

// boundedConn is a connection as a jspull.Requester whose exchanges end by
// by at the latest: a phase's bound without a context of its own (one
// per step would cost the step a timer, its context and the connection's
// cancellation registration on it, about seven allocations).
type boundedConn struct {
	c  *conn.Conn
	by time.Time
}

// The connection's Clustered must show through: jspull's Inspect asks its
// Requester whether the server is in a cluster, to tell a replica's
// empty answer from the leader's.
var _ interface{ Clustered() bool } = (*boundedConn)(nil)

// Clustered reports whether the connection's server is in a cluster.
func (b *boundedConn) Clustered() bool { return b.c.Clustered() }

func (b *boundedConn) Exchange(ctx context.Context, deadline time.Time, call conn.Call) (conn.Reply, error) {
	if b.by.Before(deadline) {
		deadline = b.by
	}
	return b.c.Exchange(ctx, deadline, call)
}

func (l *connLink) next(ctx context.Context, b *bindingState) (pulled, error) {
	pc, err := l.consumer(b)
	if err != nil {
		return pulled{}, err
	}
	l.lastFor = nil
	r, err := pc.Next(ctx, l.c)
	if err != nil {
		return pulled{}, err
	}
	if r.Kind == jspull.KindMessage {
		l.last = r.Delivery
		l.lastFor = b
	}
	return pulled{kind: r.Kind, id: r.Delivery.ID, header: r.Header, payload: r.Payload}, nil
}

func (l *connLink) ack(ctx context.Context, b *bindingState, cmd jspull.Command) (jspull.Receipt, error) {
	if l.lastFor != b || b.consumer == nil {
		return jspull.Receipt{}, jspull.ErrInvalidDelivery
	}
	l.lastFor = nil
	return b.consumer.Ack(ctx, l.c, &l.last, cmd)
}
