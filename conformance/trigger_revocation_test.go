package conformance_test

import (
	"context"
	"testing"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// TestTriggerScopedRevocation revokes one publication and one tenant's
// credential at each point the runtime checks them, and checks that only
// that scope stops:
//
//   - a publication revoked before the visit, or after the host's
//     reservation and before the pull, stops that binding's pulls (consumer
//     info may be asked, nothing is pulled); revoked after the delivery,
//     the host's final start check refuses the activation and the delivery
//     is terminated (permission rejection after delivery: +TERM);
//   - a credential revoked before the visit, or before the pull, stops the
//     pulls of that tenant's bindings; revoked before the acknowledgement,
//     nothing is sent for the delivery, which the broker redelivers after
//     its ack wait once the credential is restored.
//
// Meanwhile the tenant's other binding (for the publication) and the other
// tenant (for both) keep pulling and acknowledging.
func TestTriggerScopedRevocation(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{
		tenants:   []string{"rev-a", "rev-b"},
		perTenant: []int{2, 1},
		binding: func(k, i int, b *trigger.Binding) {
			if k == 0 && i == 1 {
				b.Function = trigAudit
			}
			b.OperationTimeoutMS, b.RootBudgetMS, b.AckWaitMS = 500, 500, 1500
		},
	})
	ta, tb := e.tenant(0), e.tenant(1)
	a0, a1, b0 := e.bindingIndex(0, 0), e.bindingIndex(0, 1), e.bindingIndex(1, 0)
	audit := refhost.PublicationKey{Service: trigService, Contract: trigContract, Function: trigAudit}

	// phase runs one part of the case; parts share the broker and the
	// installation, so they run in order on the test's goroutine.
	phase := func(name string, f func()) {
		t.Helper()
		t.Logf("phase: %s", name)
		f()
	}
	// lap makes one lap of the rotation (4 steps) and returns the
	// reports by binding, in order.
	lap := func() map[int][]trigger.StepReport {
		t.Helper()
		out := map[int][]trigger.StepReport{}
		for range 4 {
			r := e.step(t)
			out[r.Binding] = append(out[r.Binding], r)
		}
		return out
	}
	// visit steps until binding idx is visited (within one lap).
	visit := func(idx int) trigger.StepReport {
		t.Helper()
		return e.stepUntil(t, "visit", 4, func(r trigger.StepReport) bool { return r.Binding == idx })
	}
	delivered := func(what string, r trigger.StepReport, ack pull.AckState) {
		t.Helper()
		if r.Result != trigger.ResultDelivered || r.Ack != ack {
			t.Errorf("%s: %+v, want delivered with ack %v", what, r, ack)
		}
	}
	skipped := func(what string, r trigger.StepReport, class trigger.ErrorClass) {
		t.Helper()
		if r.Result != trigger.ResultSkipped || r.Error != class {
			t.Errorf("%s: %+v, want skipped: %v", what, r, class)
		}
	}
	unpulled := func(what string, te *trigTenantEnv, i int, before trigInfo) {
		t.Helper()
		if got := te.info(i); got != before || got.NumPending != 1 || got.NumAckPending != 0 {
			t.Errorf("%s: consumer %+v before, %+v after: want the message left pending, unpulled", what, before, got)
		}
	}

	phase("publication revoked before the visit", func() {
		e.ref.RevokePublication(audit)
		e.publish(0, 0, argOK)
		e.publish(0, 1, argOK)
		e.publish(1, 0, argOK)
		before := ta.info(1)
		got := lap()
		delivered("rev-a's other binding", got[a0][0], pull.AckVerified)
		delivered("rev-b", got[b0][0], pull.AckVerified)
		skipped("revoked publication", got[a1][0], trigger.ClassIneligible)
		unpulled("revoked publication", ta, 1, before)
		if err := e.ref.Publish(audit); err != nil {
			t.Fatal(err)
		}
		delivered("published again", visit(a1), pull.AckVerified)
	})

	phase("publication revoked before the pull", func() {
		e.host.set(func(b trigger.BindingRef) {
			if b.Index == a1 {
				e.ref.RevokePublication(audit)
			}
		}, nil)
		e.publish(0, 1, argOK)
		before := ta.info(1)
		r := visit(a1)
		e.host.set(nil, nil)
		skipped("revoked after the reservation", r, trigger.ClassIneligible)
		if r.RouteGeneration != 1 {
			t.Errorf("visit %+v: want the reservation's route generation", r)
		}
		unpulled("revoked after the reservation", ta, 1, before)
		if err := e.ref.Publish(audit); err != nil {
			t.Fatal(err)
		}
		delivered("published again", visit(a1), pull.AckVerified)
	})

	phase("publication revoked after the delivery", func() {
		e.host.set(nil, func(a trigger.Activation) {
			if a.Binding.Index == a1 {
				e.ref.RevokePublication(audit)
			}
		})
		calls := len(e.callLog())
		seq := e.publish(0, 1, argOK)
		r := visit(a1)
		e.host.set(nil, nil)
		if r.Result != trigger.ResultDelivered || r.Outcome != trigger.OutcomePermissionRejected ||
			r.Action != pull.ActionTerm || r.Ack != pull.AckVerified || r.StreamSeq != seq {
			t.Errorf("revoked at the start check: %+v, want permission rejected, terminated", r)
		}
		if n := len(e.callLog()); n != calls {
			t.Errorf("the function ran %d times for a revoked publication", n-calls)
		}
		if got := ta.info(1); got.NumPending != 0 || got.NumAckPending != 0 || got.AckFloor.StreamSeq != seq {
			t.Errorf("consumer %+v: want seq %d terminated", got, seq)
		}
		if err := e.ref.Publish(audit); err != nil {
			t.Fatal(err)
		}
	})

	phase("credential revoked before the visit", func() {
		e.ref.RevokeCredential(ta.id)
		e.publish(0, 0, argOK)
		e.publish(0, 1, argOK)
		e.publish(1, 0, argOK)
		before0, before1 := ta.info(0), ta.info(1)
		got := lap()
		skipped("revoked credential, binding 0", got[a0][0], trigger.ClassCredential)
		skipped("revoked credential, binding 1", got[a1][0], trigger.ClassCredential)
		delivered("rev-b", got[b0][0], pull.AckVerified)
		unpulled("revoked credential, binding 0", ta, 0, before0)
		unpulled("revoked credential, binding 1", ta, 1, before1)
		e.ref.RestoreCredential(ta.id)
		got = lap()
		delivered("restored, binding 0", got[a0][0], pull.AckVerified)
		delivered("restored, binding 1", got[a1][0], pull.AckVerified)
	})

	phase("credential revoked before the pull", func() {
		e.host.set(func(b trigger.BindingRef) {
			if b.Index == a0 {
				e.ref.RevokeCredential(ta.id)
			}
		}, nil)
		e.publish(0, 0, argOK)
		before := ta.info(0)
		r := visit(a0)
		e.host.set(nil, nil)
		skipped("revoked after the reservation", r, trigger.ClassCredential)
		unpulled("revoked after the reservation", ta, 0, before)
		e.ref.RestoreCredential(ta.id)
		delivered("restored", visit(a0), pull.AckVerified)
	})

	phase("credential revoked before the acknowledgement", func() {
		e.setAction(func(_ context.Context, c refhost.Call) error {
			e.ref.RevokeCredential(c.Binding.Tenant)
			return nil
		})
		for len(e.calls) > 0 {
			<-e.calls
		}
		seq := e.publish(0, 0, argActions)
		r := visit(a0)
		if r.Result != trigger.ResultDelivered || r.Outcome != trigger.OutcomeSuccess || r.Action != pull.ActionAck ||
			r.Ack != pull.AckNone || r.Error != trigger.ClassCredential || r.StreamSeq != seq {
			t.Fatalf("revoked during the activation: %+v, want success with nothing sent", r)
		}
		first := e.nextCall(t)
		// The other tenant acknowledges meanwhile.
		e.setAction(nil)
		bseq := e.publish(1, 0, argOK)
		rb := visit(b0)
		delivered("rev-b while rev-a is revoked", rb, pull.AckVerified)
		e.nextCall(t)
		if got := ta.info(0); got.NumAckPending != 1 || got.AckFloor.StreamSeq == seq {
			t.Errorf("rev-a consumer %+v: want seq %d awaiting its acknowledgement", got, seq)
		}
		if got := tb.info(0); got.NumAckPending != 0 || got.AckFloor.StreamSeq != bseq {
			t.Errorf("rev-b consumer %+v: want seq %d acknowledged", got, bseq)
		}

		// Restored: the broker redelivers after its ack wait, and this time
		// the acknowledgement is sent.
		e.ref.RestoreCredential(ta.id)
		run := e.run(t)
		c := e.nextCall(t)
		if c.Binding != e.cfg.Bindings[a0].ID || c.StreamSeq != seq || c.Delivered != 2 {
			t.Fatalf("after restoring: call %+v, want seq %d redelivered", c, seq)
		}
		if gap, wait := c.At.Sub(first.At), e.cfg.Bindings[a0].AckWait()-e.cfg.Bindings[a0].OperationTimeout(); gap < wait {
			t.Errorf("redelivered %v after the first delivery, before the ack wait", gap)
		}
		// The runtime's own word that the receipt arrived, not only the
		// broker's: the broker applies the acknowledgement before the
		// runtime reads its receipt, and a stop in between interrupts that
		// read (an uncertain acknowledgement).
		trigEventually(t, "redelivery acknowledged", trigWait, func() bool {
			last, ok := e.mon.LastStep()
			return ok && last.Binding == a0 && last.StreamSeq == seq && last.Delivered == 2 && last.Ack == pull.AckVerified
		})
		if got := ta.info(0); got.NumAckPending != 0 || got.AckFloor.StreamSeq != seq {
			t.Errorf("rev-a consumer %+v: want seq %d acknowledged", got, seq)
		}
		if err := run.stop(); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if got := e.mon.Snapshot().Bindings[a0]; got.Unacknowledged != 1 || got.Uncertain != 0 {
			t.Errorf("binding counts %+v: want one delivery left unacknowledged", got)
		}
	})
	e.trig.CloseIdle()
}
