package trigger

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/parser"
	"github.com/latent-systems/latent-nats/pull"
)

const (
	// memConns is the number of installations, each with one tenant
	// client and so one connection, open at once.
	memConns = 32
	// memCollections bounds the collections of one live-heap sample.
	memCollections = 6
	// memRoundTimeout bounds one round of the test.
	memRoundTimeout = time.Minute
)

// memVariants are the caps measured: those of the README's example
// configuration, and the largest the profile allows.
var memVariants = []memCaps{
	{Name: "readme", Line: 4096, Header: 4096, Ceiling: 1024},
	{Name: "largest", Line: maxControlLineBytes, Header: maxHeaderBytes, Ceiling: MaxPayloadBytes},
}

// TestMemoryUnderHostileInput measures the live heap (runtime/metrics
// "/gc/heap/live:bytes" after collections) of memConns installations whose
// connections go to servers that push every cap at once, and checks it
// against the charges the pools account. The servers run in their own
// process (memory_servers_test.go), so the heap is the client's alone.
//
// Each connection's server sends, in every exchange (handshake, consumer
// info, pull, acknowledgement), every control frame an exchange reads:
// MaxPingsPerExchange PINGs and INFO lines of exactly the line cap up to
// MaxControlFramesPerExchange (with the trailing "409 Batch Completed"
// counted in the acknowledgement's); the greeting and the INFO after PONG
// are at the line cap too; the consumer info reply is jspull.MaxInfoSize
// bytes; the delivered message has a header block of exactly the header
// cap and a payload of exactly the ceiling.
//
// Per round, for memConns installations of one binding each:
//
//   - installed: after Install, before any network;
//   - in flight: every installation's step has pulled its largest message
//     and is inside the host's Activate, all at once;
//   - served: every step ended (delivered, verified acknowledgement), every
//     connection pooled and idle, each having served the largest request;
//   - idle closed: after CloseIdle, the connections closed;
//   - attacked: after one over-cap attack per installation (memAttacks in
//     turn), each on a new connection, each closing it with the matching
//     sentinel;
//   - closed: after Close, against the heap before Install.
//
// Asserted for the second round (the first warms what the process builds
// once: crypto tables, type caches, the threads that wait in the thread
// socket, goroutine records):
//
//   - per connection, (served - idle closed) / memConns, is under
//     connectionBytes;
//   - per request in flight beyond its connection, (in flight - served) /
//     memConns, is under requestCharge of the ceiling: a request's reply
//     lives in its connection's fixed read buffer, so the request itself
//     adds only the step's contexts and the host's reservation; and
//     connection and request together, (in flight - idle closed) /
//     memConns, are under the two charges together;
//   - per installation with its visited binding and no connection, (idle
//     closed - before Install) / memConns, is under installCharge;
//   - the attacks leave the heap where idle closed left it, and Close
//     brings it back to the heap before Install, each within half the
//     per-connection figure: a single connection left open would exceed
//     it, whatever the caps, while what stays below it is the runtime's
//     own bookkeeping: records of goroutines and of blocked channel
//     operations, and of any thread it started while steps waited in the
//     thread socket (about 7 KB each, counted in the log), a few KB a
//     round;
//   - the per-connection figure is at least the connection's read buffer
//     (parser.Limits.BufferSize at these caps), so the samples did see
//     the connections' buffers.
//
// The race detector's instrumentation does not change the live heap's
// figures beyond the tolerances, so the assertions hold with and without
// -race. The figures are logged (go test -v) and recorded in
// docs/RELIABILITY.md.
func TestMemoryUnderHostileInput(t *testing.T) {
	for _, caps := range memVariants {
		t.Run(caps.Name, func(t *testing.T) {
			m := newMemRig(t, caps)
			m.round(t, 1)
			f := m.round(t, 2)
			m.check(t, f)
		})
	}
}

// memRig is the state of one variant: memConns installations at a time on
// shared pools, the servers' process, and fixed slots the steps fill, all
// made before the first sample.
type memRig struct {
	caps       memCaps
	cfg        Config
	creds      []Credential
	maxPayload int
	pools      *Pools
	servers    map[string]memDest
	attacks    []memAttack
	host       *memHost
	samples    []metrics.Sample

	trigs [memConns]*Triggers
	reps  [memConns]StepReport
	errs  [memConns]error
	slots [memConns]linkSlot
}

// memDest is where a server listens and what it is trusted by.
type memDest struct {
	addr  netip.AddrPort
	name  string
	roots *x509.CertPool
}

// memFigures are the live-heap samples of one round, in bytes.
type memFigures struct {
	base, installed, inFlight, served, idleClosed, attacked, closed int64
	// threads is the number of threads the runtime started in the
	// round, for the log.
	threads int64
}

func newMemRig(t *testing.T, caps memCaps) *memRig {
	t.Helper()
	cfg := rtConfig(t, 1)
	cfg.MaxControlLineBytes, cfg.MaxHeaderBytes = caps.Line, caps.Header
	cfg.Bindings[0] = memBinding(caps)
	lim := DefaultPoolLimits()
	lim.MaxInstallations, lim.MaxRequests, lim.MaxClients, lim.MaxConnections = memConns, memConns, memConns, memConns
	lim.MaxTenantRequests, lim.MaxTenantConnections = memConns, memConns
	lim.MaxProviderRequests, lim.MaxProviderConnections = memConns, memConns
	pools, err := NewPools(PoolConfig{Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pools.Close)
	m := &memRig{
		caps:    caps,
		cfg:     cfg,
		creds:   rtCredentials(t, cfg),
		pools:   pools,
		host:    &memHost{payload: memPayload(caps.Ceiling)},
		samples: []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/sched/threads/total:threads"}},
	}
	// The connection's payload cap, as the runtime sets it for the
	// tenant, from an installation on pools of its own.
	probe, err := NewPools(PoolConfig{Limits: DefaultPoolLimits()})
	if err != nil {
		t.Fatal(err)
	}
	trig, _, err := Install(probe, Installation{LogicalID: "memory-probe", Epoch: 1, Config: cfg, Credentials: m.creds})
	if err != nil {
		t.Fatal(err)
	}
	m.maxPayload = trig.connConfig(&trig.tenants[0]).MaxPayload
	probe.Close()
	m.attacks = memAttacks(caps.Ceiling, m.maxPayload)
	m.servers = startMemServers(t, memSpec{Caps: caps, MaxPayload: m.maxPayload, Conns: 2 * memConns})
	// Registered after the servers' process: it runs before it.
	t.Cleanup(func() {
		for _, trig := range m.trigs {
			if trig != nil {
				trig.Close()
			}
		}
	})
	return m
}

// startMemServers starts the servers' process and returns its servers by
// kind. The process is stopped, and its verdict on the valid sessions
// checked, when the test ends.
func startMemServers(t *testing.T, sp memSpec) map[string]memDest {
	t.Helper()
	spec, err := json.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Not t.Context: it ends before cleanups run, and the process must
	// outlive the installations' Close.
	ctx, cancel := context.WithTimeout(context.Background(), memServerLife)
	cmd := exec.CommandContext(ctx, self, "-test.run=^$")
	cmd.Env = append(os.Environ(), memServersEnv+"="+string(spec))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	// Registered before the installations' cleanup, so it runs after it:
	// the valid sessions have ended when the process checks them.
	t.Cleanup(func() {
		defer cancel()
		_ = stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("server process: %v", err)
		}
	})
	var list []memServer
	if err := json.NewDecoder(stdout).Decode(&list); err != nil {
		t.Fatalf("server process: %v", err)
	}
	out := make(map[string]memDest, len(list))
	for _, s := range list {
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(s.CAPEM) {
			t.Fatalf("server %s: no CA certificate", s.Kind)
		}
		out[s.Kind] = memDest{addr: s.Addr, name: s.ServerName, roots: roots}
	}
	return out
}

// round installs memConns installations at the given epoch and takes them
// through the phases of the test, checking every step's report and
// returning the live-heap samples.
func (m *memRig) round(t *testing.T, epoch uint64) memFigures {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), memRoundTimeout)
	defer cancel()
	var f memFigures
	f.base = m.sample()
	threads := m.samples[1].Value.Uint64()

	for i := range m.trigs {
		trig, _, err := Install(m.pools, Installation{LogicalID: fmt.Sprintf("memory-%d", i), Epoch: epoch, ExpectedEpoch: epoch - 1, Config: m.cfg, Credentials: m.creds})
		if err != nil {
			t.Fatal(err)
		}
		m.trigs[i] = trig
		m.slots[i] = linkSlot{}
		trig.dial = m.dialTo(trig, m.servers[memValid], &m.slots[i])
		m.widenPullMargin(t, trig)
	}
	f.installed = m.sample()

	f.inFlight = m.deliverAll(t, ctx)
	want := StepReport{
		Step: 1, Epoch: epoch, Result: ResultDelivered, StreamSeq: 1, Delivered: 1, RouteGeneration: 1,
		Outcome: OutcomeSuccess, Action: pull.ActionAck, Ack: pull.AckVerified,
	}
	for i := range m.trigs {
		if m.errs[i] != nil || m.slots[i].err != nil {
			t.Errorf("installation %d: step error %v, link error %v", i, m.errs[i], m.slots[i].err)
		}
		if diff := cmp.Diff(want, m.reps[i], ignoreAt); diff != "" {
			t.Errorf("installation %d: report (-want +got):\n%s", i, diff)
		}
	}
	if got := m.host.wrong.Load(); got != 0 {
		t.Errorf("%d activations saw a payload other than the one sent", got)
	}
	if u := m.pools.Usage(); u.Connections != memConns || u.Requests != 0 {
		t.Errorf("usage %+v after the deliveries, want %d connections and no request", u, memConns)
	}
	f.served = m.sample()

	for _, trig := range m.trigs {
		trig.CloseIdle()
	}
	if u := m.pools.Usage(); u.Connections != 0 {
		t.Errorf("usage %+v after CloseIdle", u)
	}
	f.idleClosed = m.sample()

	m.attackAll(t, ctx)
	f.attacked = m.sample()

	for i, trig := range m.trigs {
		trig.Close()
		m.trigs[i] = nil
	}
	// The round's context goes too: the steps' contexts were its
	// children, and its table of them keeps the room it grew to.
	cancel()
	f.closed = m.sample()
	f.threads = int64(m.samples[1].Value.Uint64() - threads)
	return f
}

// deliverAll runs one step of every installation on its own goroutine,
// each started once the one before is inside Activate, samples the heap
// with all of them in flight, then lets them acknowledge and waits for
// them.
func (m *memRig) deliverAll(t *testing.T, ctx context.Context) int64 {
	t.Helper()
	h := m.host
	h.block = true
	h.arrived = make(chan struct{}, memConns)
	h.release = make(chan struct{})
	returned := make(chan int, memConns)
	var wg sync.WaitGroup
	defer wg.Wait()
	released := false
	release := func() {
		if !released {
			released = true
			close(h.release)
		}
	}
	defer release()
	for i := range m.trigs {
		wg.Go(func() {
			m.reps[i], m.errs[i] = m.trigs[i].Step(ctx, h)
			returned <- i
		})
		select {
		case <-h.arrived:
		case j := <-returned:
			release()
			wg.Wait()
			t.Fatalf("installation %d: step ended before all were in flight: %+v, %v, link %v", j, m.reps[j], m.errs[j], m.slots[j].err)
		case <-ctx.Done():
			release()
			wg.Wait()
			t.Fatalf("installation %d: not in flight before the round's deadline", i)
		}
	}
	inFlight := m.sample()
	release()
	wg.Wait()
	h.block = false
	return inFlight
}

// attackAll points every installation at an attack server (memAttacks in
// turn) and runs one step of each, one at a time: each must fail with the
// attack's sentinel and close its connection.
func (m *memRig) attackAll(t *testing.T, ctx context.Context) {
	t.Helper()
	for i, trig := range m.trigs {
		a := m.attacks[i%len(m.attacks)]
		m.slots[i] = linkSlot{}
		trig.dial = m.dialTo(trig, m.servers[a.kind], &m.slots[i])
		rep, err := trig.Step(ctx, m.host)
		if err != nil {
			t.Fatalf("attack %s: Step: %v", a.kind, err)
		}
		if rep.Result != ResultFailed || rep.Error != ClassProtocol {
			t.Errorf("attack %s: report %v/%v, want %v/%v", a.kind, rep.Result, rep.Error, ResultFailed, ClassProtocol)
		}
		if !errors.Is(m.slots[i].err, a.want) {
			t.Errorf("attack %s: error %v, want %v", a.kind, m.slots[i].err, a.want)
		}
		if !m.slots[i].closed {
			t.Errorf("attack %s: the connection was not closed", a.kind)
		}
		// The error holds no connection memory, but is not kept either.
		m.slots[i] = linkSlot{}
	}
	if u := m.pools.Usage(); u.Connections != 0 || u.Requests != 0 {
		t.Errorf("usage %+v after the attacks", u)
	}
}

// check asserts the bounds on one round's figures and logs them.
func (m *memRig) check(t *testing.T, f memFigures) {
	t.Helper()
	n := int64(memConns)
	perConn := (f.served - f.idleClosed) / n
	perReq := (f.inFlight - f.served) / n
	both := (f.inFlight - f.idleClosed) / n
	perInstall := (f.idleClosed - f.base) / n
	reqCharge := requestCharge(m.caps.Ceiling)
	instCharge := installCharge(m.cfg)
	readBuf := int64(parser.Limits{MaxControlLine: m.caps.Line, MaxHeader: m.caps.Header, MaxPayload: m.maxPayload}.BufferSize())
	tol := perConn / 2

	t.Logf("caps: line %d, header %d, ceiling %d (connection payload cap %d); %d connections",
		m.caps.Line, m.caps.Header, m.caps.Ceiling, m.maxPayload, memConns)
	t.Logf("per connection: %d B (charge %d; read buffer %d)", perConn, int64(connectionBytes), readBuf)
	t.Logf("per request in flight beyond its connection: %d B (charge %d); both: %d B (charges %d)",
		perReq, reqCharge, both, connectionBytes+reqCharge)
	t.Logf("per installation, binding visited, no connection: %d B (charge %d); just installed: %d B",
		perInstall, instCharge, (f.installed-f.base)/n)
	t.Logf("after %d attacks: %+d B; after Close: %+d B against the heap before Install (tolerance %d); %d threads started in the round",
		memConns, f.attacked-f.idleClosed, f.closed-f.base, tol, f.threads)

	if perConn < readBuf {
		t.Errorf("per connection %d B, under the %d B read buffer: the samples missed the connections", perConn, readBuf)
	}
	if perConn > connectionBytes {
		t.Errorf("per connection %d B, over the %d B charge", perConn, connectionBytes)
	}
	if perReq > reqCharge {
		t.Errorf("per request in flight %d B, over the %d B charge", perReq, reqCharge)
	}
	if both > connectionBytes+reqCharge {
		t.Errorf("connection and request %d B, over the %d B of their charges", both, connectionBytes+reqCharge)
	}
	if perInstall > instCharge {
		t.Errorf("per installation %d B, over the %d B charge", perInstall, instCharge)
	}
	if d := f.attacked - f.idleClosed; d > tol {
		t.Errorf("the attacks left %d B on the heap, over the %d B tolerance", d, tol)
	}
	if d := f.closed - f.base; d > tol {
		t.Errorf("after Close %d B over the heap before Install, over the %d B tolerance", d, tol)
	}
}

// sample returns the live heap after collections, repeated until it stops
// falling (an object with a cleanup or finalizer, as a socket has, is freed
// a collection after the one that found it unreachable; sync.Pool keeps
// its victims one collection more), at most memCollections.
func (m *memRig) sample() int64 {
	runtime.GC()
	metrics.Read(m.samples)
	v := m.samples[0].Value.Uint64()
	for range memCollections - 1 {
		runtime.GC()
		metrics.Read(m.samples)
		next := m.samples[0].Value.Uint64()
		if next >= v {
			break
		}
		v = next
	}
	return int64(v)
}

// widenPullMargin makes the binding's pull consumer as connLink.consumer
// would, with the largest margin for the pull's reply: on a loaded machine
// the server's process may need more than the default 150 ms to write the
// flood before the message. Memory is the same either way.
func (m *memRig) widenPullMargin(t *testing.T, trig *Triggers) {
	t.Helper()
	ts, b := &trig.tenants[0], &trig.bindings[0]
	ts.scratch = new(jspull.Scratch)
	pc, err := jspull.NewConsumer(b.pullBinding(), jspull.Options{
		Now: trig.now, OpTimeout: b.cfg.OperationTimeout(), Scratch: ts.scratch, NextMargin: jspull.MaxNextMargin,
	})
	if err != nil {
		t.Fatal(err)
	}
	b.consumer = pc
}

// dialTo returns trig's dial to server d: the runtime's connection
// configuration with d's address and roots and the all-zero inbox token,
// the production link, wrapped to record into slot.
func (m *memRig) dialTo(trig *Triggers, d memDest, slot *linkSlot) dialFunc {
	return func(ctx context.Context, ts *tenantState) (link, error) {
		c := trig.connConfig(ts)
		c.Addr, c.AllowNonPublic, c.ServerName, c.Roots = d.addr, d.addr.Addr(), d.name, d.roots
		c.Rand = zeroRand{}
		cn, err := conn.Dial(ctx, c)
		if err != nil {
			slot.err = err
			return nil, err
		}
		return &recLink{link: trig.newConnLink(cn, ts), slot: slot}, nil
	}
}

// linkSlot is what one connection's exchanges did: the first error, and
// whether the runtime closed it.
type linkSlot struct {
	err    error
	closed bool
}

// recLink is the production link recording into a slot.
type recLink struct {
	link
	slot *linkSlot
}

func (l *recLink) note(err error) {
	if err != nil && l.slot.err == nil {
		l.slot.err = err
	}
}

func (l *recLink) close() {
	l.slot.closed = true
	l.link.close()
}

func (l *recLink) inspect(ctx context.Context, by time.Time, b *bindingState) (jspull.Pending, error) {
	p, err := l.link.inspect(ctx, by, b)
	l.note(err)
	return p, err
}

func (l *recLink) next(ctx context.Context, b *bindingState) (pulled, error) {
	p, err := l.link.next(ctx, b)
	l.note(err)
	return p, err
}

func (l *recLink) ack(ctx context.Context, b *bindingState, cmd jspull.Command) (jspull.Receipt, error) {
	r, err := l.link.ack(ctx, b, cmd)
	l.note(err)
	return r, err
}

// memHost admits everything and keeps nothing. While block is set, each
// activation reports its arrival and waits for release (or its deadline,
// reported as a timeout); the fields change only between phases, when no
// step runs.
type memHost struct {
	payload []byte // what every activation must carry
	block   bool
	arrived chan struct{}
	release chan struct{}
	wrong   atomic.Int64 // activations with another payload
}

func (h *memHost) PublicationEligible(BindingRef) error { return nil }
func (h *memHost) CredentialCurrent(string) error       { return nil }
func (h *memHost) ReserveInbound(context.Context, InboundRequest) (Inbound, error) {
	return memInbound{h}, nil
}

type memInbound struct{ h *memHost }

func (memInbound) RouteGeneration() uint64 { return 1 }
func (memInbound) Release()                {}

func (in memInbound) Activate(ctx context.Context, a Activation) Result {
	h := in.h
	if !bytes.Equal(a.Payload, h.payload) {
		h.wrong.Add(1)
	}
	if !h.block {
		return Result{Outcome: OutcomeSuccess}
	}
	h.arrived <- struct{}{}
	select {
	case <-h.release:
		return Result{Outcome: OutcomeSuccess}
	case <-ctx.Done():
		return Result{Outcome: OutcomeTimeout}
	}
}
