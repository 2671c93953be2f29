package conformance_test

import (
	"testing"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// TestTriggerOverload holds the reference host's capacity outside the
// runtime: with admission or the input allocation unavailable a visit makes
// no pull, and the broker sees no request at all: no dial before the
// tenant's first connection, no message on the connection afterwards, the
// consumer's delivered sequence and waiting requests unchanged. Once the
// capacity returns, the message is delivered.
func TestTriggerOverload(t *testing.T) {
	t.Parallel()
	// Two slots and room for two payload ceilings' worth of input, less
	// one byte.
	e := trigStart(t, trigSpec{
		tenants:   []string{"over"},
		perTenant: []int{1},
		host:      &refhost.Config{MaxActivations: 2, MaxInputBytes: 2*256 - 1},
	})
	te := e.tenant(0)
	sys := newTrigSys(t, e.b)
	// The capacity is held by reservations of another binding of the same
	// host, as other activations would hold it.
	other := trigger.BindingRef{LogicalID: "other", Epoch: 1, ID: "other", Tenant: "other", Principal: "svc:other",
		Service: trigService, Contract: trigContract, Function: trigFunction}
	hold := func(sizes ...int) func() {
		t.Helper()
		var held []trigger.Inbound
		for _, n := range sizes {
			in, err := e.ref.ReserveInbound(t.Context(), trigger.InboundRequest{Binding: other, MaxInputBytes: n})
			if err != nil {
				t.Fatalf("holding %d bytes: %v", n, err)
			}
			held = append(held, in)
		}
		return func() {
			for _, in := range held {
				in.Release()
			}
		}
	}
	const visits = 5
	unavailable := func(what string) {
		t.Helper()
		before := e.mon.Snapshot().Totals
		for i := range visits {
			r := e.step(t)
			if r.Result != trigger.ResultSkipped || r.Error != trigger.ClassUnavailable || r.RouteGeneration != 0 {
				t.Fatalf("%s: visit %d: %+v, want skipped as unavailable", what, i, r)
			}
		}
		after := e.mon.Snapshot().Totals
		if got := after.Skipped - before.Skipped; got != visits {
			t.Errorf("%s: %d visits skipped, want %d", what, got, visits)
		}
		if got := after.Error(trigger.ClassUnavailable) - before.Error(trigger.ClassUnavailable); got != visits {
			t.Errorf("%s: %d visits counted unavailable, want %d", what, got, visits)
		}
		if after.Delivered != before.Delivered || after.Empty != before.Empty || after.EmptyPulls != before.EmptyPulls {
			t.Errorf("%s: counts moved from %+v to %+v", what, before, after)
		}
		if u := e.pools.Usage(); u.Requests != 0 {
			t.Errorf("%s: %d ingress requests held", what, u.Requests)
		}
	}

	// Before the tenant's first connection: no dial at all.
	seq := e.publish(0, 0, argOK)
	release := hold(1, 1)
	unavailable("admission, no connection yet")
	release()
	if snap := e.mon.Snapshot(); snap.Dials != 0 {
		t.Errorf("%d dials while admission was unavailable, want none", snap.Dials)
	}
	if conns := sys.runtimeConns(te.account); len(conns) != 0 {
		t.Errorf("broker sees %d runtime connections, want none", len(conns))
	}
	if got := te.info(0); got.NumPending != 1 || got.Delivered.ConsumerSeq != 0 || got.NumWaiting != 0 {
		t.Errorf("consumer after refused visits: %+v, want the message pending and nothing delivered", got)
	}

	// Deliver it, so that the tenant's connection is open.
	if r := e.step(t); r.Result != trigger.ResultDelivered || r.Ack != pull.AckVerified || r.StreamSeq != seq {
		t.Fatalf("step with capacity: %+v, want seq %d delivered and acknowledged", r, seq)
	}
	e.nextCall(t)

	for _, c := range []struct {
		name  string
		sizes []int
	}{
		{"admission", []int{1, 1}}, // both slots held
		{"input", []int{256}},      // one slot free, 255 bytes of input left
	} {
		seq := e.publish(0, 0, argOK)
		conns := sys.runtimeConns(te.account)
		if len(conns) != 1 {
			t.Fatalf("%s: broker sees %d runtime connections, want 1", c.name, len(conns))
		}
		infoBefore := te.info(0)
		release := hold(c.sizes...)
		stats := e.ref.Stats()
		unavailable(c.name)
		if got := e.ref.Stats().Unavailable - stats.Unavailable; got != visits {
			t.Errorf("%s: host refused %d reservations, want %d", c.name, got, visits)
		}
		after := sys.runtimeConns(te.account)
		if len(after) != 1 || after[0].CID != conns[0].CID || after[0].InMsgs != conns[0].InMsgs {
			t.Errorf("%s: broker saw %+v then %+v: want no request in between", c.name, conns, after)
		}
		if got := te.info(0); got != infoBefore || got.NumPending != 1 || got.NumWaiting != 0 {
			t.Errorf("%s: consumer %+v before, %+v after the refused visits", c.name, infoBefore, got)
		}
		release()
		r := e.stepUntil(t, c.name+": delivery once capacity returned", 4, func(r trigger.StepReport) bool { return r.Result == trigger.ResultDelivered })
		if r.StreamSeq != seq || r.Ack != pull.AckVerified {
			t.Errorf("%s: delivery %+v, want seq %d acknowledged", c.name, r, seq)
		}
		e.nextCall(t)
	}
	if s := e.ref.Stats(); s.Slots != 0 || s.InputBytes != 0 {
		t.Errorf("host still holds %+v", s)
	}
}
