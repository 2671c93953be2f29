package conformance_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/tools/faultproxy"
	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/trigger"
)

// linkCase is one cell of the link fault matrix.
type linkCase struct {
	name  string
	fault linkFault
	phase linkPhase
	want  linkWant
}

// linkWant is what a fault must do in a phase.
type linkWant struct {
	// class is the error class of the step the fault met; 0: none.
	class trigger.ErrorClass
	// passed: the step the fault met got past the phase
	// (linkOutcome.passed).
	passed bool
	// reexec is the number of re-executions, each of the event whose
	// acknowledgement the fault made uncertain.
	reexec int
	// dials is the fewest dials: 2 when the fault costs the connection.
	dials uint64
	// step is where conn.Dial fails under the same placement (tls and
	// connect phases), 0 when it does not fail.
	step conn.Step
	// slow is the least time from the fault's setting to the report of
	// the step it met: latency's proof that it was in the path (a round
	// trip of that step went through it).
	slow time.Duration
}

// linkExpect is what the design promises for f in phase ph.
func linkExpect(f linkFault, ph linkPhase) linkWant {
	handshake := ph == phaseTLS || ph == phaseConnect
	switch {
	case f.kind == faultproxy.Latency:
		// A 100 ms round trip fits every bound of a step: the pull's
		// 250 ms, the operation timeout's 2 s. The latency stays for the
		// step it meets. Asserted: it was in that step's path, nothing
		// was lost and nothing run twice. That the step does not fail is
		// not: on a loaded machine each round trip through the delaying
		// proxy waits for the scheduler several times, and a pull can
		// still miss its bound; the matrix shows such a failure.
		//
		// A pull whose reply comes after its bound costs the event one of
		// its max_deliver deliveries, unseen by the runtime; with the
		// pull's bound a fixed 250 ms, this latency kept for every step
		// on the loaded machine had all three deliveries of one event so
		// lost, and the broker then stopped delivering it: the ledger's
		// loss. The pull's bound now follows the operation timeout
		// (TestFaultSlowLink).
		return linkWant{dials: 1, slow: 2 * linkDelay}
	case f.kind == faultproxy.Stall:
		// The handshake, consumer info, the pull (its bound follows the
		// operation timeout: 1.1 s here) and the acknowledgement have
		// room for the held bytes: they arrive in time and nothing
		// fails.
		return linkWant{passed: true, dials: 1}
	case handshake:
		// The dial fails within the operation timeout; the next step
		// dials again after the dial backoff.
		return linkWant{class: trigger.ClassDial, dials: 2, step: linkDialStep(f, ph)}
	case ph == phaseAck && f.has(faultproxy.Up):
		// The acknowledgement never reached the broker: uncertain, not
		// replayed, and the broker's redelivery after its ack wait runs
		// the event a second time.
		return linkWant{class: trigger.ClassAckUncertain, reexec: 1, dials: 2}
	case ph == phaseAck:
		// The broker committed the acknowledgement and only its receipt
		// was lost: uncertain, and never redelivered.
		return linkWant{class: trigger.ClassAckUncertain, dials: 2}
	}
	// Consumer info or the pull fails, and the connection is given up;
	// a delivery the broker made into it is redelivered after its ack
	// wait, never run twice.
	return linkWant{class: trigger.ClassConnection, dials: 2}
}

// linkDialStep is the handshake step a placement fails a dial at: inside
// the TLS handshake, reading the server's INFO (a fault on down at
// INFO/CONNECT meets the INFO) or awaiting the PONG (a fault on up only
// meets the CONNECT).
func linkDialStep(f linkFault, ph linkPhase) conn.Step {
	switch {
	case ph == phaseTLS:
		return conn.StepTLS
	case f.has(faultproxy.Down):
		return conn.StepInfo
	}
	return conn.StepConnect
}

// TestFaultLink puts each link fault (blackhole, stall then resume, added
// latency, cut with FIN or RST; per direction) between the runtime and
// the broker in each phase of a step: the TLS handshake, INFO/CONNECT,
// consumer info, the pull and the acknowledgement. Each case publishes
// linkEvents events to its own tenant's binding on one shared broker,
// runs the runtime through its own proxy until the fault was met, heals
// the link (after the failure it caused, after a stall of linkHold, or
// after the step a latency met), and ends with the
// ledger: nothing lost, no re-execution after a verified
// acknowledgement (the broker is intact), every re-execution the one an
// uncertain acknowledgement explains, the connection replaced, and the
// time from the heal to the next verified acknowledgement measured.
// Placements at the handshake are checked first with conn.Dial itself,
// which must fail at the expected step. The matrix of outcomes is logged.
//
// The cases run side by side, each subtest on its own goroutine (at most
// linkConcurrent at once): they mostly wait, and t.Parallel would hold
// them to GOMAXPROCS at a time.
func TestFaultLink(t *testing.T) {
	var cases []linkCase
	var tenants []string
	for _, ph := range linkPhases {
		for _, f := range linkFaults {
			name := linkName(f, ph)
			cases = append(cases, linkCase{name: name, fault: f, phase: ph, want: linkExpect(f, ph)})
			tenants = append(tenants, name)
		}
	}
	b := brokertest.Start(t, broker.Options{
		Tenants:       tenants,
		AccountLimits: broker.AccountLimits{MemoryStorage: linkMemory, DiskStorage: linkDisk},
	})

	var (
		mu    sync.Mutex
		got   = make(map[string]linkOutcome, len(cases))
		wg    sync.WaitGroup
		slots = make(chan struct{}, linkConcurrent)
	)
	for _, c := range cases {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			t.Run(c.name, func(t *testing.T) {
				o := c.run(t, b)
				mu.Lock()
				defer mu.Unlock()
				got[c.name] = o
			})
		}()
	}
	wg.Wait()
	t.Logf("link faults by phase (error class of the step the fault met (+ other steps' failures); re-executions (causes), redeliveries; dials; heal to the next verified ack), poll interval %d ms, operation timeout %d ms, ack wait %d ms:\n%s",
		linkPollMS, linkTimeoutMS, linkAckWaitMS, linkMatrix(got))
}

// run is one case; it returns the case's cell of the matrix.
func (c linkCase) run(t *testing.T, b *broker.Broker) linkOutcome {
	linkCheckDial(t, b, c.name, c.fault, c.phase, c.want.step)

	var p *faultproxy.Proxy
	e := trigInstall(t, b, trigSpec{
		tenants:   []string{c.name},
		perTenant: []int{1},
		binding: func(_, _ int, b *trigger.Binding) {
			b.OperationTimeoutMS, b.RootBudgetMS, b.AckWaitMS = linkTimeoutMS, linkTimeoutMS, linkAckWaitMS
		},
		dialer: func(t *testing.T, b *broker.Broker) conn.Dialer {
			p = linkStart(t, b)
			return p.Dialer()
		},
	})
	linkReinstall(t, e)
	h := newLinkHost(t, e, p, c.fault, c.phase)
	for range linkEvents {
		e.publish(0, 0, argActions)
	}
	ctx, cancel := context.WithTimeout(t.Context(), linkWait)
	defer cancel()
	placed := h.place(ctx)
	run := runOwner(t, e.trig, h)
	h.heal(t)
	if err := placed(); err != nil {
		t.Errorf("placing the fault: %v", err)
	}

	v, took := e.settle(t)
	h.freeze()
	if err := run.stop(); err != nil {
		t.Errorf("Run: %v", err)
	}
	checkVerdict(t, v, true)
	s := e.mon.Snapshot()
	o := h.outcome(v, s, took)
	t.Logf("%v at %v, healed %v: %s; dials %d, replaced %d; settled %v after the heal",
		c.fault, c.phase, c.fault.heal(), o.cell(), s.Dials, s.Replaced, took)

	if c.want.class != 0 && o.hit != c.want.class {
		t.Errorf("the step the fault met reported %v, want %v", o.hit, c.want.class)
	}
	if o.hitAfter < c.want.slow {
		t.Errorf("the step the fault met was reported %v after the fault was set, want at least %v", o.hitAfter, c.want.slow)
	}
	if c.want.passed && !o.passed(c.phase) {
		t.Errorf("the step the fault met (result %v, ack %v, reached its pull %v, %v long) did not get past the %v phase",
			o.hitResult, o.hitAck, o.hitPull, o.hitTook, c.phase)
	}
	if o.reexec != c.want.reexec || o.byCause[ledger.CauseUncertain] != c.want.reexec ||
		slices.ContainsFunc(v.Reexecutions, func(r ledger.Reexecution) bool { return r.Key.Seq != o.hitSeq }) {
		t.Errorf("re-executions %+v: want %d, of seq %d, for its uncertain acknowledgement", v.Reexecutions, c.want.reexec, o.hitSeq)
	}
	if s.Dials < c.want.dials || s.Dials > 1+s.Totals.Failed+s.Totals.Uncertain+s.Replaced {
		t.Errorf("dials %d with %d failed visits, %d uncertain acknowledgements, %d connections replaced: want at least %d, and none without a cause",
			s.Dials, s.Totals.Failed, s.Totals.Uncertain, s.Replaced, c.want.dials)
	}
	return o
}
