package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/faultproxy"
	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// The bounds and sizes of the link fault cases (TestFaultLink).
const (
	// linkArmAfter is how many verified acknowledgements a fault on a
	// pooled connection waits for: they prove the connection, and give
	// the pull replies that place a fault on down at the acknowledgement
	// (see beforeAck).
	linkArmAfter = 2
	// linkEvents is how many events a case publishes: linkArmAfter before
	// the fault, one that meets it, and later ones that measure the
	// recovery (one spare for a pull a loaded machine lets miss its
	// bound).
	linkEvents = linkArmAfter + 3
	// linkTimeoutMS and linkAckWaitMS are the cases' operation timeout
	// and ack wait: twice the suite's, so that a handshake or a visit
	// slowed by a fault still fits on a loaded machine.
	linkTimeoutMS = 2000
	linkAckWaitMS = linkTimeoutMS + 1000
	// linkHold is how long a stall holds what it caught before it is
	// cleared: longer than the pull's shortest bound (jspull.RequestExpires
	// plus jspull.DefaultNextMargin, 250 ms), well inside the operation
	// timeout that bounds the handshake, consumer info and the
	// acknowledgement, and inside the pull's bound at this timeout
	// (1.1 s).
	linkHold = 300 * time.Millisecond
	// linkDelay is the latency added to each direction: a 100 ms round
	// trip, which every bound of a step must absorb.
	linkDelay = 50 * time.Millisecond
	// linkTLSCut is how many bytes a cut set before the dial lets through:
	// inside the first record of its direction, the TLS ClientHello (about
	// 1.5 KiB with the hybrid key share) or the server's first flight
	// (about 1.8 KiB).
	linkTLSCut = 100
	// linkCutAfter is how many bytes a cut set at a later phase lets
	// through: the first byte of the phase's first record.
	linkCutAfter = 1
	// linkPollMS is the poll interval of the cases' runtimes: idle visits
	// of many runtimes at the suite's 10 ms would load the machine the
	// cases time, and the pacing after a failed visit adds at most this
	// to a recovery.
	linkPollMS = 25
	// linkConcurrent bounds the cases running at once: they mostly wait
	// (dial deadlines, ack waits, stalls), but each runs a runtime, a
	// proxy and TLS handshakes on a shared, loaded machine.
	linkConcurrent = 8
	// linkDialBound bounds conn.Dial in the placement checks; a blackhole
	// costs all of it, and a handshake on the loaded machine must fit.
	linkDialBound = 2 * time.Second
	// linkWait bounds each wait of a case for an event: the fault set,
	// the step it meets, bytes held.
	linkWait = 15 * time.Second
	// linkReplySlack is how many bytes a pull's reply may come short of
	// the shortest one before on its connection and still hold the
	// broker's trailing status: a TLS record's overhead (22 bytes, when
	// the delivery and the status came in one record this time and in two
	// before) and a few digits of counters. The status is longer than
	// that and a server PING (28 bytes) together: its header block alone
	// is over 80 bytes.
	linkReplySlack = 60
	// linkTrace is how many step reports a case keeps for its log when it
	// fails.
	linkTrace = 64
	// linkMemory and linkDisk are each case tenant's JetStream limits, so
	// that one broker holds an account per case.
	linkMemory = 2 << 20
	linkDisk   = 2 << 20
)

// linkPhase is where in a step a link fault is set.
type linkPhase uint8

const (
	// phaseTLS: before the first dial, no pooled connection.
	phaseTLS linkPhase = iota + 1
	// phaseConnect: after the TLS handshake, on the server's INFO (down)
	// or the client's CONNECT (up); see linkGate.
	phaseConnect
	// phaseInfo: on a pooled connection, after the host's reservation:
	// the next bytes are the consumer info request.
	phaseInfo
	// phasePull: at the second PublicationEligible of a step, right
	// before the pull.
	phasePull
	// phaseAck: in the activation, just before the acknowledgement.
	phaseAck
)

var linkPhases = []linkPhase{phaseTLS, phaseConnect, phaseInfo, phasePull, phaseAck}

func (p linkPhase) String() string {
	switch p {
	case phaseTLS:
		return "tls"
	case phaseConnect:
		return "connect"
	case phaseInfo:
		return "consumer-info"
	case phasePull:
		return "pull"
	case phaseAck:
		return "ack"
	}
	return fmt.Sprintf("linkPhase(%d)", int(p))
}

// title is the phase's column heading.
func (p linkPhase) title() string {
	switch p {
	case phaseTLS:
		return "TLS handshake"
	case phaseConnect:
		return "INFO/CONNECT"
	case phaseInfo:
		return "consumer info"
	}
	return p.String()
}

// linkHeal is when a case clears its fault.
type linkHeal uint8

const (
	// healOnFailure: in the report of the first step that failed after
	// the fault was set, before the runtime's next step (and dial): the
	// runtime gave the connection up.
	healOnFailure linkHeal = iota + 1
	// healAfterHold: linkHold after the first byte the stall held.
	healAfterHold
	// healOnHit: in the report of the step the fault met, before the
	// runtime's next step.
	healOnHit
)

func (h linkHeal) String() string {
	switch h {
	case healOnFailure:
		return "on the failure"
	case healAfterHold:
		return "after the hold"
	case healOnHit:
		return "after the step it met"
	}
	return fmt.Sprintf("linkHeal(%d)", int(h))
}

// linkFault is one fault of the matrix: a kind and the directions it is
// set on (both for latency).
type linkFault struct {
	kind faultproxy.Kind
	dirs []faultproxy.Direction
}

var (
	linkUp   = []faultproxy.Direction{faultproxy.Up}
	linkDown = []faultproxy.Direction{faultproxy.Down}
	linkBoth = []faultproxy.Direction{faultproxy.Up, faultproxy.Down}
)

// linkFaults are the rows of the matrix.
var linkFaults = []linkFault{
	{faultproxy.Blackhole, linkUp},
	{faultproxy.Blackhole, linkDown},
	{faultproxy.Stall, linkUp},
	{faultproxy.Stall, linkDown},
	{faultproxy.Latency, linkBoth},
	{faultproxy.CutFIN, linkUp},
	{faultproxy.CutFIN, linkDown},
	{faultproxy.CutRST, linkUp},
	{faultproxy.CutRST, linkDown},
}

func (f linkFault) dirName() string {
	if len(f.dirs) == 2 {
		return "both"
	}
	return f.dirs[0].String()
}

func (f linkFault) String() string { return f.kind.String() + " " + f.dirName() }

// has reports whether the fault is set on direction d.
func (f linkFault) has(d faultproxy.Direction) bool { return slices.Contains(f.dirs, d) }

// at returns the fault as set at phase ph.
func (f linkFault) at(ph linkPhase) faultproxy.Fault {
	switch f.kind {
	case faultproxy.Latency:
		return faultproxy.Fault{Kind: f.kind, Delay: linkDelay}
	case faultproxy.CutFIN, faultproxy.CutRST:
		if ph == phaseTLS {
			return faultproxy.Fault{Kind: f.kind, After: linkTLSCut}
		}
		return faultproxy.Fault{Kind: f.kind, After: linkCutAfter}
	}
	return faultproxy.Fault{Kind: f.kind}
}

// heal is when the fault is cleared.
func (f linkFault) heal() linkHeal {
	switch f.kind {
	case faultproxy.Stall:
		return healAfterHold
	case faultproxy.Latency:
		return healOnHit
	}
	return healOnFailure
}

// linkSet sets f at phase ph on p.
func linkSet(p *faultproxy.Proxy, f linkFault, ph linkPhase) error {
	for _, d := range f.dirs {
		if err := p.Set(d, f.at(ph)); err != nil {
			return err
		}
	}
	return nil
}

// linkClear clears both directions of p.
func linkClear(p *faultproxy.Proxy) error {
	return errors.Join(p.Clear(faultproxy.Up), p.Clear(faultproxy.Down))
}

// linkStart starts a proxy to b, closed when the test ends.
func linkStart(t *testing.T, b *broker.Broker) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.Start(b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// linkGate places f at INFO/CONNECT on the next connection p accepts,
// without counting bytes (the server's flight varies by a few bytes with
// its ECDSA signature) and without racing the handshake: stalls serve as
// gates, and each fault is set while the peer it concerns is waiting for
// bytes the gate holds.
//
//  1. Down is stalled before the dial; once the server's first flight
//     (ServerHello to Finished, and session tickets) is held, up is
//     stalled (nothing is in flight up: the client waits for that flight)
//     and down released.
//  2. Once the client's Finished is held, the server waits for it:
//     - a fault on down is set now, then the Finished released (under the
//     fault for up when f has both): the server's INFO meets the fault,
//     and the client fails reading it (StepInfo);
//     - a fault on up only: down is stalled again and the Finished
//     released; once the server's INFO is held the client waits for it,
//     so the fault is set on up, then the INFO released: the client's
//     CONNECT meets the fault (StepConnect).
//
// fire is called once the fault is set, before the release that lets
// bytes meet it. linkGate stalls down now and returns a function that
// waits for the rest, run on its own goroutine, and returns its error.
func linkGate(ctx context.Context, p *faultproxy.Proxy, f linkFault, fire func()) func() error {
	if err := p.Set(faultproxy.Down, faultproxy.Fault{Kind: faultproxy.Stall}); err != nil {
		return func() error { return err }
	}
	done := make(chan error, 1)
	held := func(d faultproxy.Direction) error {
		_, err := p.Wait(ctx, func(s faultproxy.Stats) bool { return s.Dir(d).Queued > 0 })
		return err
	}
	stall := faultproxy.Fault{Kind: faultproxy.Stall}
	pass := faultproxy.Fault{Kind: faultproxy.Pass}
	target := f.at(phaseConnect)
	go func() {
		done <- func() error {
			if err := held(faultproxy.Down); err != nil {
				return fmt.Errorf("server's first flight: %w", err)
			}
			if err := errors.Join(p.Set(faultproxy.Up, stall), p.Set(faultproxy.Down, pass)); err != nil {
				return err
			}
			if err := held(faultproxy.Up); err != nil {
				return fmt.Errorf("client's Finished: %w", err)
			}
			if f.has(faultproxy.Down) {
				if err := p.Set(faultproxy.Down, target); err != nil {
					return err
				}
				fire()
				up := pass
				if f.has(faultproxy.Up) {
					up = target
				}
				return p.Set(faultproxy.Up, up)
			}
			if err := errors.Join(p.Set(faultproxy.Down, stall), p.Set(faultproxy.Up, pass)); err != nil {
				return err
			}
			if err := held(faultproxy.Down); err != nil {
				return fmt.Errorf("server's INFO: %w", err)
			}
			if err := p.Set(faultproxy.Up, target); err != nil {
				return err
			}
			fire()
			return p.Set(faultproxy.Down, pass)
		}()
	}()
	return func() error { return <-done }
}

// linkReinstall replaces trigInstall's installation with one at the next
// epoch that polls every linkPollMS.
func linkReinstall(t *testing.T, e *trigEnv) {
	t.Helper()
	e.trig.Close()
	e.cfg.PollIntervalMS = linkPollMS
	trig, mon, err := trigger.Install(e.pools, trigger.Installation{LogicalID: "conformance", Epoch: 2, ExpectedEpoch: 1, Config: e.cfg, Credentials: e.creds})
	if err != nil {
		t.Fatalf("Install at epoch 2: %v", err)
	}
	t.Cleanup(trig.Close)
	e.trig, e.mon = trig, mon
}

// linkHost is the suite's host that sets a case's fault at its phase,
// heals it on the first failure when the case says so, and records what
// the matrix reports: every error class, verified acknowledgements and
// their times, redeliveries, and the report of the step the fault met.
type linkHost struct {
	*trigHookHost
	p     *faultproxy.Proxy
	fault linkFault
	phase linkPhase
	t     *testing.T
	start time.Time

	mu       sync.Mutex
	changed  chan struct{} // closed at every change, then replaced
	eligible int           // PublicationEligible calls in this step
	fired    bool
	firedAt  time.Time
	hit      *trigger.StepReport // the first report after the fault was set
	hitPull  bool                // the step of hit got as far as its pull
	hitAt    time.Time           // when hit was reported
	hitTook  time.Duration       // how long the step of hit took
	healed   bool
	healAt   time.Time
	acks     []time.Time // when each verified acknowledgement was reported
	classes  map[trigger.ErrorClass]int
	frozen   bool     // the verdict was drawn: later reports are the ledger's only
	redeliv  int      // deliveries with a delivery count above 1
	trace    []string // the first linkTrace reports, for a failed case's log
	pullAt   int64    // bytes forwarded down when this step's pull was made
	reply    int64    // fewest bytes down from a pull to its activation, 0 before one
}

// newLinkHost wraps e's host; the fault is set at phase by the hooks
// (info, pull, ack) or by the case (tls, connect: see fire).
func newLinkHost(t *testing.T, e *trigEnv, p *faultproxy.Proxy, f linkFault, phase linkPhase) *linkHost {
	h := &linkHost{trigHookHost: e.host, p: p, fault: f, phase: phase, t: t, changed: make(chan struct{}), start: time.Now()}
	t.Cleanup(func() {
		if t.Failed() {
			h.mu.Lock()
			defer h.mu.Unlock()
			t.Logf("step reports:\n%s", strings.Join(h.trace, "\n"))
		}
	})
	e.host.set(func(trigger.BindingRef) { h.arm(phaseInfo) }, nil)
	e.setAction(func(ctx context.Context, _ refhost.Call) error {
		h.beforeAck(ctx)
		return nil
	})
	return h
}

// notify wakes the waiters; h.mu is held.
func (h *linkHost) notify() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// fire records that the fault is set.
func (h *linkHost) fire() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fired, h.firedAt = true, time.Now()
	h.notify()
}

// arm sets the fault if phase is the case's, once, after linkArmAfter
// verified acknowledgements proved a pooled connection.
func (h *linkHost) arm(phase linkPhase) {
	h.mu.Lock()
	ready := phase == h.phase && !h.fired && len(h.acks) >= linkArmAfter
	h.mu.Unlock()
	if !ready {
		return
	}
	if err := linkSet(h.p, h.fault, phase); err != nil {
		h.t.Errorf("setting %v at %v: %v", h.fault, phase, err)
	}
	h.fire()
}

// place sets a tls or connect fault for the runtime's first dial (see
// linkPlace) and returns the wait for the placement; the other phases'
// faults are set by the hooks.
func (h *linkHost) place(ctx context.Context) func() error {
	if h.phase != phaseTLS && h.phase != phaseConnect {
		return func() error { return nil }
	}
	return linkPlace(ctx, h.p, h.fault, h.phase, h.fire)
}

// PublicationEligible sets a pull-phase fault at its second call of a
// step, right before the pull.
func (h *linkHost) PublicationEligible(b trigger.BindingRef) error {
	h.mu.Lock()
	h.eligible++
	second := h.eligible == 2
	h.mu.Unlock()
	if second {
		at := h.p.Stats().Down.Forwarded
		h.mu.Lock()
		h.pullAt = at
		h.mu.Unlock()
		h.arm(phasePull)
	}
	return h.trigHookHost.PublicationEligible(b)
}

// beforeAck runs in every activation (ctx is the activation's), just
// before the runtime decides and sends the acknowledgement. A fault on
// down must meet the receipt, not the "409 Batch Completed" the broker
// sends after the delivery, which may come in a record of its own: each
// activation before the fault notes how many bytes came down since its
// pull (the fewest of them: a server PING or INFO may have come with
// one), and the armed one waits, within the activation's deadline, until
// about as many came since its own.
func (h *linkHost) beforeAck(ctx context.Context) {
	down := h.p.Stats().Down.Forwarded
	h.mu.Lock()
	if !h.fired && (h.reply == 0 || down-h.pullAt < h.reply) {
		h.reply = down - h.pullAt
	}
	ready := h.phase == phaseAck && !h.fired && len(h.acks) >= linkArmAfter
	pullAt, reply := h.pullAt, h.reply
	h.mu.Unlock()
	if !ready || !h.fault.has(faultproxy.Down) {
		h.arm(phaseAck)
		return
	}
	if _, err := h.p.Wait(ctx, func(s faultproxy.Stats) bool {
		return s.Down.Forwarded-pullAt >= reply-linkReplySlack
	}); err != nil {
		h.t.Errorf("the pull's reply before the ack: %v (shortest reply before: %d bytes)", err, reply)
	}
	h.arm(phaseAck)
}

// ObserveStep feeds the ledger, records the report and heals the fault
// when the case heals it on the first failure after it was set or on the
// step it met.
func (h *linkHost) ObserveStep(r trigger.StepReport) {
	h.trigHookHost.ObserveStep(r)
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	pulled := h.eligible >= 2
	h.eligible = 0
	if h.frozen {
		return
	}
	if len(h.trace) < linkTrace {
		h.trace = append(h.trace, fmt.Sprintf("step %d at +%v, %v long: %v seq %d delivery %d, error %v, ack %v, pulled %v, fault set %v",
			r.Step, r.At.Sub(h.start).Round(time.Millisecond), now.Sub(r.At).Round(time.Millisecond),
			r.Result, r.StreamSeq, r.Delivered, r.Error, r.Ack, pulled, h.fired))
	}
	if r.Error != 0 {
		if h.classes == nil {
			h.classes = map[trigger.ErrorClass]int{}
		}
		h.classes[r.Error]++
	}
	if r.Ack == pull.AckVerified {
		h.acks = append(h.acks, now)
	}
	if r.Result == trigger.ResultDelivered && r.Delivered > 1 {
		h.redeliv++
	}
	if h.fired && h.hit == nil {
		h.hit, h.hitPull, h.hitAt, h.hitTook = &r, pulled, now, now.Sub(r.At)
	}
	onFailure := r.Error != 0 && h.fault.heal() == healOnFailure
	if h.fired && !h.healed && (onFailure || h.fault.heal() == healOnHit) {
		if err := linkClear(h.p); err != nil {
			h.t.Errorf("healing: %v", err)
		}
		h.healed, h.healAt = true, now
	}
	h.notify()
}

// freeze ends the record once the verdict is drawn: the visits made
// until Run returns (the last one cut short by its end) are not the
// fault's.
func (h *linkHost) freeze() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.frozen = true
}

// await waits, within linkWait, until cond holds under h.mu.
func (h *linkHost) await(t *testing.T, what string, cond func(h *linkHost) bool) {
	t.Helper()
	timer := time.NewTimer(linkWait)
	defer timer.Stop()
	for {
		h.mu.Lock()
		ok, changed := cond(h), h.changed
		h.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			t.Fatalf("%s: not within %v", what, linkWait)
		}
	}
}

// heal clears the fault as the case says: after the failure it caused or
// the step it met (ObserveStep does it), or after a stall held bytes for
// linkHold.
func (h *linkHost) heal(t *testing.T) {
	t.Helper()
	h.await(t, "the fault set", func(h *linkHost) bool { return h.fired })
	switch h.fault.heal() {
	case healOnFailure:
		h.await(t, "a failure after the fault", func(h *linkHost) bool { return h.healed })
		return
	case healOnHit:
		h.await(t, "the step the fault met", func(h *linkHost) bool { return h.healed })
		return
	case healAfterHold:
		ctx, cancel := context.WithTimeout(t.Context(), linkWait)
		defer cancel()
		d := h.fault.dirs[0]
		if _, err := h.p.Wait(ctx, func(s faultproxy.Stats) bool { return s.Dir(d).Queued > 0 }); err != nil {
			t.Fatalf("the stall holding a byte: %v", err)
		}
		timer := time.NewTimer(linkHold)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-t.Context().Done():
			t.Fatal("the test ended during the stall")
		}
	}
	if err := linkClear(h.p); err != nil {
		t.Fatalf("healing: %v", err)
	}
	h.mu.Lock()
	h.healed, h.healAt = true, time.Now()
	h.notify()
	h.mu.Unlock()
}

// linkOutcome is one cell of the matrix.
type linkOutcome struct {
	// hit is the error class of the step the fault met (0: none), hitSeq
	// its delivery, hitAck its acknowledgement, hitPull whether it got as
	// far as its pull, and hitAfter the time from the fault's setting to
	// its report.
	hit       trigger.ErrorClass
	hitSeq    uint64
	hitResult trigger.StepResult
	hitAck    pull.AckState
	hitPull   bool
	hitAfter  time.Duration
	hitTook   time.Duration
	// other counts the error classes of the other steps that failed
	// (before the verdict).
	other map[trigger.ErrorClass]int
	// reexec and byCause are the ledger's re-executions; redeliv counts
	// deliveries with a delivery count above 1 (with or without a run).
	reexec  int
	byCause [ledger.NumCauses + 1]int
	redeliv int
	// dials and replaced are the monitor's.
	dials, replaced uint64
	// recover is the time from the heal to the next verified
	// acknowledgement, -1 when none followed it.
	recover time.Duration
	// settle is how long the consumers took to settle after the heal.
	settle time.Duration
}

// outcome draws the cell from what the host recorded, the verdict and the
// monitor.
func (h *linkHost) outcome(v ledger.Verdict, s trigger.Snapshot, settle time.Duration) linkOutcome {
	h.mu.Lock()
	defer h.mu.Unlock()
	o := linkOutcome{
		other: maps.Clone(h.classes), reexec: len(v.Reexecutions), byCause: v.ByCause, redeliv: h.redeliv,
		dials: s.Dials, replaced: s.Replaced, recover: -1, settle: settle,
	}
	if h.hit != nil {
		o.hit, o.hitSeq, o.hitResult, o.hitAck, o.hitPull = h.hit.Error, h.hit.StreamSeq, h.hit.Result, h.hit.Ack, h.hitPull
		o.hitAfter, o.hitTook = h.hitAt.Sub(h.firedAt), h.hitTook
		if o.other[o.hit] > 0 {
			o.other[o.hit]--
		}
	}
	for _, at := range h.acks {
		if at.After(h.healAt) {
			o.recover = at.Sub(h.healAt)
			break
		}
	}
	return o
}

// passed reports whether the step the fault met got past phase ph: to
// its pull (tls, connect, info), to a delivery (pull), to a verified
// acknowledgement (ack); or failed no sooner than the operation timeout,
// which a fault that fits inside it cannot cause (on a loaded machine a
// handshake and a request can take that long).
func (o linkOutcome) passed(ph linkPhase) bool {
	if o.hitTook >= linkTimeoutMS*time.Millisecond {
		return true
	}
	switch ph {
	case phasePull:
		return o.hitResult == trigger.ResultDelivered
	case phaseAck:
		return o.hitAck == pull.AckVerified
	}
	return o.hitPull
}

// cell formats the outcome for the matrix: the error class of the step
// the fault met, those of other steps that failed, re-executions with
// their causes, redeliveries, dials, and the time from the heal to the
// next verified acknowledgement.
func (o linkOutcome) cell() string {
	hit := "none"
	if o.hit != 0 {
		hit = o.hit.String()
	}
	var other []string
	for _, c := range slices.Sorted(maps.Keys(o.other)) {
		if n := o.other[c]; n > 0 {
			other = append(other, fmt.Sprintf("%s×%d", c, n))
		}
	}
	if len(other) > 0 {
		hit += " (+" + strings.Join(other, ", ") + ")"
	}
	re := fmt.Sprintf("re-exec %d", o.reexec)
	for c := ledger.Cause(1); int(c) <= ledger.NumCauses; c++ {
		if n := o.byCause[c]; n > 0 {
			re += fmt.Sprintf(" (%s %d)", c, n)
		}
	}
	if o.redeliv > 0 {
		re += fmt.Sprintf(", redelivered %d", o.redeliv)
	}
	rec := "-"
	if o.recover >= 0 {
		rec = o.recover.Round(time.Millisecond).String()
	}
	return fmt.Sprintf("%s; %s; %d dials; %s", hit, re, o.dials, rec)
}

// linkMatrix formats the outcomes as a markdown table, fault by phase.
func linkMatrix(got map[string]linkOutcome) string {
	var b strings.Builder
	b.WriteString("| fault |")
	for _, ph := range linkPhases {
		fmt.Fprintf(&b, " %s |", ph.title())
	}
	b.WriteString("\n|---|")
	for range linkPhases {
		b.WriteString("---|")
	}
	for _, f := range linkFaults {
		fmt.Fprintf(&b, "\n| %s |", f)
		for _, ph := range linkPhases {
			o, ok := got[linkName(f, ph)]
			cell := "not run"
			if ok {
				cell = o.cell()
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
	}
	return b.String()
}

// linkName names a case, its subtest and its tenant.
func linkName(f linkFault, ph linkPhase) string {
	return ph.String() + "-" + f.kind.String() + "-" + f.dirName()
}

// linkPlace sets f at phase ph (tls or connect) on p for its next
// connection and calls fire once it is set: at once for tls, by linkGate
// for connect. It returns a function that waits for the placement to end
// and returns its error.
func linkPlace(ctx context.Context, p *faultproxy.Proxy, f linkFault, ph linkPhase, fire func()) func() error {
	if ph == phaseConnect {
		return linkGate(ctx, p, f, fire)
	}
	err := linkSet(p, f, ph)
	fire()
	return func() error { return err }
}

// linkCheckDial places f at phase ph (tls or connect) on a proxy of its
// own and dials b through it with conn.Dial: the handshake must fail at
// step want, the step the runtime's dial meets under the same placement.
// A fault that fails no dial (want 0) is not checked.
func linkCheckDial(t *testing.T, b *broker.Broker, tenant string, f linkFault, ph linkPhase, want conn.Step) {
	t.Helper()
	if want == 0 {
		return
	}
	creds, err := b.Admin(tenant)
	if err != nil {
		t.Fatal(err)
	}
	p := linkStart(t, b)
	cfg := connConfig(t, b, creds)
	cfg.Dialer = p.Dialer()
	ctx, cancel := context.WithTimeout(t.Context(), linkDialBound)
	defer cancel()
	placed := linkPlace(ctx, p, f, ph, func() {})
	c, err := conn.Dial(ctx, cfg)
	if c != nil {
		_ = c.Close()
	}
	if perr := placed(); perr != nil {
		t.Errorf("placing %v at %v: %v", f, ph, perr)
	}
	var he *conn.HandshakeError
	if !errors.As(err, &he) || he.Step != want {
		t.Errorf("conn.Dial with %v at %v = %v; want a *conn.HandshakeError at %v", f, ph, err, want)
	}
}
