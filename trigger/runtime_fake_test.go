package trigger

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/pull"
)

// events is the ordered log of what a step asked of the host and the
// broker, shared by the fake host and the fake network.
type events struct {
	mu  sync.Mutex
	log []string
}

func (e *events) add(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.log = append(e.log, fmt.Sprintf(format, args...))
}

// take returns the log and empties it.
func (e *events) take() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	l := e.log
	e.log = nil
	return l
}

// fakeHost is a Host whose every answer a test can script.
type fakeHost struct {
	ev *events

	mu          sync.Mutex
	eligible    func(b BindingRef, call int) error
	credential  func(tenant string, call int) error
	reserve     func(r InboundRequest) error
	activate    func(ctx context.Context, a Activation) Outcome
	cause       error // Result.Err of every activation
	generation  uint64
	eligCalls   int
	credCalls   int
	outstanding int
	requests    []InboundRequest
	activations []Activation
	payloads    []string
}

func newFakeHost(ev *events) *fakeHost { return &fakeHost{ev: ev, generation: 1} }

func (h *fakeHost) PublicationEligible(b BindingRef) error {
	h.mu.Lock()
	h.eligCalls++
	f, n := h.eligible, h.eligCalls
	h.mu.Unlock()
	h.ev.add("eligible %s", b.ID)
	if f == nil {
		return nil
	}
	return f(b, n)
}

func (h *fakeHost) CredentialCurrent(tenant string) error {
	h.mu.Lock()
	h.credCalls++
	f, n := h.credential, h.credCalls
	h.mu.Unlock()
	h.ev.add("credential %s", tenant)
	if f == nil {
		return nil
	}
	return f(tenant, n)
}

func (h *fakeHost) ReserveInbound(ctx context.Context, r InboundRequest) (Inbound, error) {
	h.ev.add("reserve %s", r.Binding.ID)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.requests = append(h.requests, r)
	if h.reserve != nil {
		if err := h.reserve(r); err != nil {
			return nil, err
		}
	}
	h.outstanding++
	return &fakeInbound{h: h, id: r.Binding.ID, gen: h.generation}, nil
}

func (h *fakeHost) setGeneration(g uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.generation = g
}

func (h *fakeHost) held() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.outstanding
}

func (h *fakeHost) acts() ([]Activation, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Activation(nil), h.activations...), append([]string(nil), h.payloads...)
}

type fakeInbound struct {
	h        *fakeHost
	id       string
	gen      uint64
	released bool
}

func (in *fakeInbound) RouteGeneration() uint64 { return in.gen }

func (in *fakeInbound) Activate(ctx context.Context, a Activation) Result {
	in.h.ev.add("activate %s", in.id)
	in.h.mu.Lock()
	f, cause := in.h.activate, in.h.cause
	p := string(a.Payload)
	a.Payload = nil
	in.h.activations = append(in.h.activations, a)
	in.h.payloads = append(in.h.payloads, p)
	in.h.mu.Unlock()
	if f == nil {
		return Result{Outcome: OutcomeSuccess, Err: cause}
	}
	return Result{Outcome: f(ctx, a), Err: cause}
}

func (in *fakeInbound) Release() {
	in.h.ev.add("release %s", in.id)
	in.h.mu.Lock()
	defer in.h.mu.Unlock()
	if in.released {
		panic("released twice")
	}
	in.released = true
	in.h.outstanding--
}

// fakeMsg is one stream message of a fake consumer.
type fakeMsg struct {
	seq       uint64
	delivered uint64
	payload   string
	at        time.Time // of the last delivery
}

// fakePending is a delivery awaiting redelivery in the timed model: the
// broker can redeliver it from at on.
type fakePending struct {
	m  *fakeMsg
	at time.Time
}

// fakeNet stands for the brokers of every tenant: one queue per binding
// index, links that a test can make stale, and hooks for failures.
type fakeNet struct {
	ev *events

	mu      sync.Mutex
	queues  map[int][]*fakeMsg
	seq     uint64
	links   []*fakeLink
	dials   int
	rtt     time.Duration
	dialErr func(tenant string) error
	// dialWait runs first in a dial, with the dial's context (a stalled
	// handshake waits there).
	dialWait func(ctx context.Context) error
	// inspectErr, nextReply and ackReply replace the normal answers when
	// they return ok. An inspectErr that is jspull.ErrConsumerPaused or a
	// profile mismatch comes with the counters, as jspull.Inspect's does.
	inspectErr func(b int) error
	// counters, when set, replaces the counters consumer info reports
	// (called with mu held; by value, so that the fake allocates no more
	// than without it).
	counters  func(b int, p jspull.Pending) jspull.Pending
	nextReply func(b int) (jspull.Kind, bool, error)
	ackReply  func(b int, cmd jspull.Command) (jspull.Receipt, bool, error)
	// onNext runs after a message was taken (tests cancel there).
	onNext func()
	// onClose runs when a link is closed, outside mu (tests sample the
	// pools' usage there).
	onClose     func()
	ackDeadline []time.Duration // time left on each ack's context
	acks        []string
	// timed is the broker's redelivery timing of the profile's
	// max_ack_pending 1: a NAKed delivery, or one not acknowledged, stays
	// pending (consumer info counts it in NumAckPending) until its NAK
	// delay or ackWait has passed; meanwhile the consumer delivers
	// nothing and a pull is held for its expiry, then answers 408.
	timed   bool
	ackWait time.Duration
	waiting map[int]fakePending
	pulls   int // pulls sent
}

func newFakeNet(ev *events) *fakeNet {
	return &fakeNet{ev: ev, queues: map[int][]*fakeMsg{}, waiting: map[int]fakePending{}}
}

// pullCount returns the pulls sent so far.
func (n *fakeNet) pullCount() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.pulls
}

// publish appends a message to binding b's consumer.
func (n *fakeNet) publish(b int, payload string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seq++
	n.queues[b] = append(n.queues[b], &fakeMsg{seq: n.seq, payload: payload})
}

func (n *fakeNet) pending(b int) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.queues[b])
}

func (n *fakeNet) dialCount() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.dials
}

func (n *fakeNet) openLinks() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 0
	for _, l := range n.links {
		if !l.closed {
			c++
		}
	}
	return c
}

func (n *fakeNet) ackLog() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.acks...)
}

// install replaces the runtime's dialer.
func (n *fakeNet) install(t *Triggers) {
	t.dial = func(ctx context.Context, ts *tenantState) (link, error) {
		n.ev.add("dial %s", ts.cfg.ID)
		n.mu.Lock()
		n.dials++
		f, w := n.dialErr, n.dialWait
		n.mu.Unlock()
		if w != nil {
			if err := w(ctx); err != nil {
				return nil, err
			}
		}
		if f != nil {
			if err := f(ts.cfg.ID); err != nil {
				return nil, err
			}
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		l := &fakeLink{n: n, id: len(n.links), tenant: ts.cfg.ID, inflight: map[int]*fakeMsg{}}
		n.links = append(n.links, l)
		return l, nil
	}
}

// fakeLink is one fake connection.
type fakeLink struct {
	n      *fakeNet
	id     int
	tenant string
	closed bool
	stale  bool
	lame   bool
	// lameAtCheck: the next check reads a lame-duck INFO.
	lameAtCheck bool
	inflight    map[int]*fakeMsg
}

func (l *fakeLink) makeStale() {
	l.n.mu.Lock()
	defer l.n.mu.Unlock()
	l.stale = true
}

func (l *fakeLink) wait(ctx context.Context) error {
	l.n.mu.Lock()
	rtt := l.n.rtt
	l.n.mu.Unlock()
	if rtt == 0 {
		return nil
	}
	tm := time.NewTimer(rtt)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		l.close()
		return &conn.ClosedError{Err: ctx.Err()}
	case <-tm.C:
		return nil
	}
}

// check is conn.Check's contract: a ctx already done is returned bare and
// the link stays open; a stale link is closed; a lame-duck INFO is read
// and the link stays open.
func (l *fakeLink) check(ctx context.Context) error {
	l.n.ev.add("check %d", l.id)
	l.n.mu.Lock()
	defer l.n.mu.Unlock()
	if l.closed {
		return conn.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if l.stale {
		l.closed = true
		return &conn.ClosedError{Err: conn.ErrServerClosed}
	}
	if l.lameAtCheck {
		l.lameAtCheck = false
		l.lame = true
	}
	return nil
}

func (l *fakeLink) open() bool {
	l.n.mu.Lock()
	defer l.n.mu.Unlock()
	return !l.closed
}

func (l *fakeLink) usable() bool {
	l.n.mu.Lock()
	defer l.n.mu.Unlock()
	return !l.closed && !l.lame
}

func (l *fakeLink) detach() {}

func (l *fakeLink) close() {
	l.n.mu.Lock()
	l.closed = true
	f := l.n.onClose
	l.n.mu.Unlock()
	if f != nil {
		f()
	}
}

func (l *fakeLink) inspect(ctx context.Context, by time.Time, b *bindingState) (jspull.Pending, error) {
	l.n.ev.add("inspect %s", b.cfg.ID)
	if by.IsZero() {
		return jspull.Pending{}, conn.ErrNoDeadline
	}
	ctx, cancel := context.WithDeadline(ctx, by)
	defer cancel()
	if err := ctx.Err(); err != nil {
		return jspull.Pending{}, err
	}
	if err := l.wait(ctx); err != nil {
		return jspull.Pending{}, err
	}
	l.n.mu.Lock()
	defer l.n.mu.Unlock()
	if l.closed {
		return jspull.Pending{}, conn.ErrClosed
	}
	p := jspull.Pending{NumPending: uint64(len(l.n.queues[b.index])), Leader: true}
	if _, ok := l.n.waiting[b.index]; ok {
		p.NumAckPending = 1
	}
	if l.n.counters != nil {
		p = l.n.counters(b.index, p)
	}
	if l.n.inspectErr != nil {
		if err := l.n.inspectErr(b.index); err != nil {
			if errors.Is(err, jspull.ErrConsumerPaused) || errors.Is(err, jspull.ErrProfileMismatch) {
				return p, err
			}
			return jspull.Pending{}, err
		}
	}
	return p, nil
}

func (l *fakeLink) next(ctx context.Context, b *bindingState) (pulled, error) {
	l.n.ev.add("next %s", b.cfg.ID)
	if err := l.wait(ctx); err != nil {
		return pulled{}, err
	}
	l.n.mu.Lock()
	l.n.pulls++
	if l.closed {
		l.n.mu.Unlock()
		return pulled{}, conn.ErrClosed
	}
	if w, ok := l.n.waiting[b.index]; ok {
		if time.Now().Before(w.at) {
			// Held at max_ack_pending until the expiry.
			l.n.mu.Unlock()
			time.Sleep(jspull.RequestExpires)
			return pulled{kind: jspull.KindRequestTimeout}, nil
		}
		delete(l.n.waiting, b.index)
		l.n.queues[b.index] = append([]*fakeMsg{w.m}, l.n.queues[b.index]...)
	}
	if l.n.nextReply != nil {
		if k, ok, err := l.n.nextReply(b.index); ok {
			l.n.mu.Unlock()
			return pulled{kind: k}, err
		}
	}
	q := l.n.queues[b.index]
	if len(q) == 0 {
		l.n.mu.Unlock()
		return pulled{kind: jspull.KindNoMessages}, nil
	}
	m := q[0]
	l.n.queues[b.index] = q[1:]
	m.delivered++
	m.at = time.Now()
	l.inflight[b.index] = m
	if l.n.timed {
		l.n.waiting[b.index] = fakePending{m: m, at: m.at.Add(l.n.ackWait)}
	}
	onNext := l.n.onNext
	l.n.mu.Unlock()
	if onNext != nil {
		onNext()
	}
	return pulled{
		kind:    jspull.KindMessage,
		id:      jspull.DeliveryID{StreamSeq: m.seq, ConsumerSeq: m.seq, Delivered: m.delivered},
		payload: []byte(m.payload),
	}, nil
}

func cmdText(c jspull.Command) string {
	return c.String()
}

func (l *fakeLink) ack(ctx context.Context, b *bindingState, cmd jspull.Command) (jspull.Receipt, error) {
	l.n.ev.add("ack %s %s", b.cfg.ID, cmdText(cmd))
	dl, ok := ctx.Deadline()
	if !ok {
		return jspull.Receipt{}, conn.ErrNoDeadline
	}
	if err := ctx.Err(); err != nil {
		return jspull.Receipt{}, err
	}
	l.n.mu.Lock()
	closed := l.closed
	l.n.ackDeadline = append(l.n.ackDeadline, time.Until(dl))
	l.n.mu.Unlock()
	if closed {
		// As jspull.Ack on a closed connection: nothing written, no
		// receipt.
		return jspull.Receipt{}, conn.ErrClosed
	}
	if err := l.wait(ctx); err != nil {
		return jspull.Receipt{Outcome: pull.AckUncertain, Action: cmd.Action}, &jspull.ReceiptError{Err: err}
	}
	l.n.mu.Lock()
	defer l.n.mu.Unlock()
	m := l.inflight[b.index]
	if m == nil {
		return jspull.Receipt{}, jspull.ErrInvalidDelivery
	}
	id := jspull.DeliveryID{StreamSeq: m.seq, ConsumerSeq: m.seq, Delivered: m.delivered}
	l.n.acks = append(l.n.acks, fmt.Sprintf("%s seq=%d n=%d %s", b.cfg.ID, m.seq, m.delivered, cmdText(cmd)))
	if l.n.ackReply != nil {
		// A scripted reply: the broker did not record the command, the
		// delivery stays pending for redelivery.
		if rec, ok, err := l.n.ackReply(b.index, cmd); ok {
			return rec, err
		}
	}
	delete(l.inflight, b.index)
	if l.n.timed {
		delete(l.n.waiting, b.index)
		if cmd.Action == pull.ActionNak {
			l.n.waiting[b.index] = fakePending{m: m, at: time.Now().Add(cmd.Delay)}
		}
		return jspull.Receipt{Outcome: pull.AckVerified, Action: cmd.Action, Delivery: id}, nil
	}
	if cmd.Action == pull.ActionNak {
		l.n.queues[b.index] = append([]*fakeMsg{m}, l.n.queues[b.index]...)
	}
	return jspull.Receipt{Outcome: pull.AckVerified, Action: cmd.Action, Delivery: id}, nil
}

// redeliver puts the unacknowledged messages of every link back at the
// head of their queues, as the broker does after the ack wait.
func (n *fakeNet) redeliver() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, l := range n.links {
		for b, m := range l.inflight {
			n.queues[b] = append([]*fakeMsg{m}, n.queues[b]...)
			delete(l.inflight, b)
		}
	}
}

// rig is an installation with a fake host and a fake network.
type rig struct {
	pools *Pools
	trig  *Triggers
	mon   *Monitor
	host  *fakeHost
	net   *fakeNet
	ev    *events
	creds []Credential
}

// rtConfig returns a valid configuration with one tenant per entry of
// perTenant, holding that many bindings; binding IDs are b0, b1, ... in
// configuration order, tenants t0, t1, ...
func rtConfig(t testing.TB, perTenant ...int) Config {
	t.Helper()
	c := Config{
		Profile:             ProfileName,
		PollIntervalMS:      100,
		MaxControlLineBytes: 4096,
		MaxHeaderBytes:      4096,
	}
	n := 0
	for i, k := range perTenant {
		id := fmt.Sprintf("t%d", i)
		c.Tenants = append(c.Tenants, Tenant{ID: id, ProviderID: "p", Destination: testDestination(t, uint16(5000+i), 1)})
		for range k {
			c.Bindings = append(c.Bindings, testBinding(id, n))
			n++
		}
	}
	return c
}

func rtCredentials(t testing.TB, c Config) []Credential {
	t.Helper()
	var out []Credential
	for _, tn := range c.Tenants {
		s, err := credential.FromToken("token-of-" + tn.ID + "-0123456789")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Credential{Tenant: tn.ID, ProviderID: tn.ProviderID, Destination: tn.Destination, Secret: s})
	}
	return out
}

// newRig installs cfg on fresh pools with lim (zero means defaults).
func newRig(t testing.TB, cfg Config, lim PoolLimits) *rig {
	t.Helper()
	if lim == (PoolLimits{}) {
		lim = DefaultPoolLimits()
	}
	pools, err := NewPools(PoolConfig{Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	creds := rtCredentials(t, cfg)
	trig, mon, err := Install(pools, Installation{LogicalID: "orders", Epoch: 1, Config: cfg, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	r := &rig{pools: pools, trig: trig, mon: mon, host: newFakeHost(ev), net: newFakeNet(ev), ev: ev, creds: creds}
	r.net.install(trig)
	t.Cleanup(func() { trig.Close() })
	return r
}

// step runs one Step and fails the test on an error.
func (r *rig) step(t testing.TB) StepReport {
	t.Helper()
	rep, err := r.trig.Step(t.Context(), r.host)
	if err != nil {
		t.Fatalf("Step: %v", err)
	}
	return rep
}

var errTest = errors.New("test: refused")
