package conformance_test

import (
	"context"
	"testing"

	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/trigger"
)

// TestFaultKillDuringActivation kills the broker (SIGKILL) while an
// activation runs, restarts it on the same port and file store, and lets
// the activation finish: its acknowledgement cannot reach the broker
// (nothing sent, or uncertain). The restarted broker redelivers the event
// after its ack wait and the runtime, dialling again, runs it a second
// time and acknowledges it; the other events follow. Ledger: nothing lost,
// one re-execution explained by the lost acknowledgement, none after a
// verified one; the runtime back to its baseline.
func TestFaultKillDuringActivation(t *testing.T) {
	for _, retention := range []string{"limits", "workqueue"} {
		t.Run(retention, func(t *testing.T) {
			t.Parallel()
			e := trigStart(t, trigSpec{
				tenants:   []string{"kill-act"},
				perTenant: []int{2},
				storage:   "file",
				retention: retention,
				binding: func(_, _ int, b *trigger.Binding) {
					b.OperationTimeoutMS, b.RootBudgetMS, b.AckWaitMS = 1500, 1500, 2500
				},
			})
			health := ledger.NewHealth(e.pools)
			blocked := e.publish(0, 0, argBlock)
			for range 3 {
				e.publish(0, 0, argOK)
				e.publish(0, 1, argOK)
			}
			run := e.run(t)
			if c := e.waitStarted(t); c.StreamSeq != blocked {
				t.Fatalf("blocked call %+v, want seq %d", c, blocked)
			}
			if err := e.b.Kill(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), trigWait)
			defer cancel()
			if err := e.b.Restart(ctx); err != nil {
				t.Fatalf("Restart: %v", err)
			}
			close(e.release) // the activation ends; its acknowledgement has no connection
			e.tenant(0).redial(t, e.b)
			for range 2 {
				e.publish(0, 0, argOK)
				e.publish(0, 1, argOK)
			}

			v, _ := e.settle(t)
			if err := run.stop(); err != nil {
				t.Fatalf("Run: %v", err)
			}
			checkVerdict(t, v, true)
			lost := v.ByCause[ledger.CauseNotSent] + v.ByCause[ledger.CauseUncertain]
			if len(v.Reexecutions) != 1 || lost != 1 {
				t.Errorf("re-executions %+v: want exactly the killed activation's event, once, for its lost acknowledgement", v.Reexecutions)
			}
			hctx, hcancel := context.WithTimeout(t.Context(), trigWait)
			defer hcancel()
			if err := health.Wait(hctx, faultTick); err != nil {
				t.Errorf("after the scenario: %v", err)
			}
		})
	}
}
