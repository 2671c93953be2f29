package conformance_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/trigger"
)

// TestFaultCredentialExpiry lets one tenant's user JWT expire mid-run, in
// an installation of two tenants. Tenant A's runtime user expires a few
// seconds after the start; an activation of A runs across the expiry, and
// the broker closes A's connection at the expiry (User Authentication
// Expired). From then on only A stops: the activation that outlived the
// credential is not acknowledged (the credential check before the
// acknowledgement says no: nothing sent, ClassCredential), and every
// later visit of A stops at the credential check before any network, so
// A dials nothing after the expiry. Tenant B keeps its connection and
// delivers a burst after the expiry as it did before it. Ledger: B lost
// nothing and nothing ran twice; A's events that were not acknowledged
// are not lost but wait at the broker for a current credential: its
// consumer's exact view is asserted.
func TestFaultCredentialExpiry(t *testing.T) {
	t.Parallel()
	const burst = 40 // B's events per measured burst
	e := trigStart(t, trigSpec{
		tenants:   []string{"exp-a", "exp-b"},
		perTenant: []int{1, 2},
		binding: func(k, _ int, b *trigger.Binding) {
			if k == 0 {
				// Room for A's activation to outlast A's credential.
				b.OperationTimeoutMS, b.RootBudgetMS, b.AckWaitMS = 10000, 10000, 11000
			}
		},
	})
	creds := slices.Clone(e.creds)
	creds[0] = e.runtimeCredential(t, 0, broker.UserSpec{Name: "trigger", Expires: time.Now().Add(5 * time.Second)})
	expires := creds[0].Secret.Expires()
	e.reinstall(t, e.pools, 2, 1, creds)
	sys := newTrigSys(t, e.b)
	health := ledger.NewHealth(e.pools)
	ta, tb := e.tenant(0), e.tenant(1)
	aID, aIdx := e.bindingID(0, 0), e.bindingIndex(0, 0)
	bIDs := []string{e.bindingID(1, 0), e.bindingID(1, 1)}

	run := e.run(t)
	// Before the expiry both tenants deliver.
	acked := []uint64{e.publish(0, 0, argOK), e.publish(0, 0, argOK)}
	before := e.publishBurst(t, 1, burst)
	e.waitRan(t, aID, acked...)
	if left := time.Until(expires); left < 2*time.Second {
		t.Fatalf("the first phase ended %v before A's credential expires; the activation must start well before it", left)
	}

	// An activation of A runs across the expiry; three events wait
	// behind it (the profile's max_ack_pending of 1).
	blocked := e.publish(0, 0, argBlock)
	var waiting []uint64
	for range 3 {
		waiting = append(waiting, e.publish(0, 0, argOK))
	}
	if c := e.waitStarted(t); c.StreamSeq != blocked {
		t.Fatalf("blocked call %+v, want seq %d", c, blocked)
	}
	startedLeft := time.Until(expires)
	trigEventually(t, "A's credential expired", time.Until(expires)+trigWait, func() bool {
		return creds[0].Secret.CheckCurrent(time.Now()) != nil
	})
	trigEventually(t, "the broker closed A's runtime connection", trigWait, func() bool {
		return len(sys.runtimeConns(ta.account)) == 0
	})
	// The broker arms the connection's expiry timer in whole seconds from
	// the connect (client.go, setExpiration): it closes the connection up
	// to a second after the JWT's expiry. The runtime's own check stops
	// at the expiry itself.
	closedAfter := time.Since(expires)
	if closedAfter > 3*time.Second {
		t.Errorf("the broker closed A's connection %v after the expiry, want within a second (and the polls of a loaded machine)", closedAfter)
	}
	if n := len(sys.runtimeConns(tb.account)); n != 1 {
		t.Errorf("B has %d runtime connections at A's expiry, want its one", n)
	}
	for range 2 {
		waiting = append(waiting, e.publish(0, 0, argOK))
	}
	atRelease := e.mon.Snapshot()
	close(e.release)

	// After the expiry: B's burst, A's visits stopped before the network.
	after := e.publishBurst(t, 1, burst)
	trigEventually(t, "the blocked activation reported", trigWait, func() bool {
		d := e.led.Deliveries(ledger.Key{Binding: aID, Seq: blocked})
		return len(d) == 1 && d[0].Settled != nil
	})
	trigEventually(t, "A visited after the expiry", trigWait, func() bool {
		return e.mon.Snapshot().Bindings[aIdx].Error(trigger.ClassCredential) >= 20
	})
	settledB := e.settleBindings(t, bIDs...)
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	s := e.mon.Snapshot()
	if sk, ok := e.mon.LastSkip(); !ok || sk.Error != trigger.ClassCredential || e.cfg.Bindings[sk.Binding].Tenant != e.cfg.Bindings[aIdx].Tenant {
		t.Errorf("LastSkip %+v (present %v), want A's credential skip", sk, ok)
	}

	// A: the activation that outlived the credential ran once and sent
	// nothing; no dial after the expiry, no failed exchange.
	want := []ledger.Delivery{{Delivered: 1, Ran: true, Settled: &ledger.Settlement{
		Result: trigger.ResultDelivered, Outcome: trigger.OutcomeSuccess, Action: pull.ActionAck,
		Ack: pull.AckNone, Error: trigger.ClassCredential,
	}}}
	if diff := cmp.Diff(want, e.led.Deliveries(ledger.Key{Binding: aID, Seq: blocked})); diff != "" {
		t.Errorf("the activation across the expiry (-want +got):\n%s", diff)
	}
	ac := s.Bindings[aIdx]
	if s.Dials != 2 || atRelease.Dials != 2 {
		t.Errorf("dials %d (%d at the expiry), want 2: one per tenant, none after the expiry", s.Dials, atRelease.Dials)
	}
	if ac.Failed != 0 || ac.Error(trigger.ClassDial) != 0 || ac.Error(trigger.ClassConnection) != 0 || ac.Delivered != 3 || ac.Acked != 2 || ac.Unacknowledged != 1 {
		t.Errorf("A's counts %+v: want three deliveries, two acknowledged, one with nothing sent, no failed exchange", ac)
	}
	credentialSkips := ac.Skipped - atRelease.Bindings[aIdx].Skipped
	if ac.Skipped != ac.Error(trigger.ClassCredential)-1 || credentialSkips == 0 {
		t.Errorf("A's counts %+v: want every skip a credential skip", ac)
	}
	for _, id := range bIDs {
		bc := s.Bindings[slices.IndexFunc(e.cfg.Bindings, func(b trigger.Binding) bool { return b.ID == id })]
		if bc.Skipped != 0 || bc.Failed != 0 || bc.Uncertain != 0 || bc.Acked != bc.Delivered {
			t.Errorf("B's binding %s: %+v", id, bc)
		}
	}

	// The verdict: B lost nothing; A's unacknowledged events wait at the
	// broker, exactly.
	v := e.led.Verdict(e.consumerViews(t))
	var lost []ledger.Key
	for _, seq := range waiting {
		lost = append(lost, ledger.Key{Binding: aID, Seq: seq})
	}
	if diff := cmp.Diff(lost, v.Lost); diff != "" {
		t.Errorf("events never delivered (-want +got):\n%s\n%s", diff, v)
	}
	// The ack floor stays at A's last acknowledged event; the one that ran
	// across the expiry awaits its acknowledgement (its ack wait, 11 s,
	// has not passed); the five behind it are pending; nothing was
	// redelivered.
	unsettled := []ledger.ConsumerView{{Binding: aID, AckFloor: acked[1], NumPending: uint64(len(waiting)), NumAckPending: 1}}
	if diff := cmp.Diff(unsettled, v.Unsettled); diff != "" {
		t.Errorf("unsettled consumers (-want +got):\n%s\n%s", diff, v)
	}
	if len(v.Reexecutions) != 0 || len(v.Foreign) != 0 || v.BadReports != 0 {
		t.Errorf("verdict %s", v)
	}

	rate := func(d time.Duration) float64 { return burst / d.Seconds() }
	t.Logf("figures: B's burst of %d: %v before A's expiry (%.0f/s), %v after it (%.0f/s); A's activation started %v before the expiry; the broker closed A's connection %v after it; A after the expiry: %d visits, %d credential skips, 0 dials; B settled %v after its burst",
		burst, before, rate(before), after, rate(after), startedLeft, closedAfter, ac.Visits-atRelease.Bindings[aIdx].Visits, credentialSkips, settledB)
	t.Logf("verdict: %s", v)
	// B's delivery is not slowed by A's stop: A's visits now cost no
	// round trip. The bound is loose for a loaded machine.
	if after > 3*before+time.Second {
		t.Errorf("B's burst took %v after A's expiry, %v before it", after, before)
	}

	hctx, hcancel := context.WithTimeout(t.Context(), trigWait)
	defer hcancel()
	if err := health.Wait(hctx, faultTick); err != nil {
		t.Errorf("after the scenario: %v", err)
	}
}
