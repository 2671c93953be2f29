package conformance_test

import (
	"testing"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
)

// TestTriggerFairness floods one tenant and then, at different points of
// the rotation, makes one message available to the other: it is delivered
// within one rotation, len(tenants) × (the other tenant's bindings) steps
// counted from the broker's PubAck, while every step of the flooded tenant
// keeps delivering.
func TestTriggerFairness(t *testing.T) {
	t.Parallel()
	const (
		floodBindings = 3
		otherBindings = 2
		flood         = 40
		trials        = 6
	)
	e := trigStart(t, trigSpec{
		tenants:   []string{"flood", "calm"},
		perTenant: []int{floodBindings, otherBindings},
	})
	for i := range flood {
		e.publish(0, i%floodBindings, argOK)
	}
	floodIdx := map[int]bool{}
	for i := range floodBindings {
		floodIdx[e.bindingIndex(0, i)] = true
	}
	rotation := len(e.cfg.Tenants) * otherBindings
	for trial := range trials {
		// Shift the rotation by trial steps before the message appears.
		for range trial {
			if r := e.step(t); floodIdx[r.Binding] && r.Result != trigger.ResultDelivered {
				t.Fatalf("flooded tenant's step %+v did not deliver", r)
			}
		}
		target := trial % otherBindings
		seq := e.publish(1, target, argOK)
		want := e.bindingIndex(1, target)
		steps := 0
		for {
			steps++
			if steps > rotation {
				t.Fatalf("trial %d: calm tenant's message not delivered within %d steps", trial, rotation)
			}
			r := e.step(t)
			if floodIdx[r.Binding] {
				if r.Result != trigger.ResultDelivered || r.Ack != pull.AckVerified {
					t.Fatalf("trial %d: flooded tenant's step %+v, want a delivery", trial, r)
				}
				continue
			}
			if r.Binding == want && r.Result == trigger.ResultDelivered {
				if r.StreamSeq != seq || r.Ack != pull.AckVerified {
					t.Errorf("trial %d: delivery %+v, want seq %d acknowledged", trial, r, seq)
				}
				break
			}
			if r.Result != trigger.ResultEmpty {
				t.Fatalf("trial %d: calm tenant's step %+v, want empty or the message", trial, r)
			}
		}
		t.Logf("trial %d: delivered at step %d of at most %d", trial, steps, rotation)
	}
	snap := e.mon.Snapshot()
	var flooded uint64
	for i := range floodBindings {
		flooded += snap.Bindings[e.bindingIndex(0, i)].Acked
	}
	left := 0
	for i := range floodBindings {
		left += e.tenant(0).info(i).NumPending
	}
	if flooded == 0 || flooded+uint64(left) != flood {
		t.Errorf("flooded tenant: %d acknowledged and %d left of %d", flooded, left, flood)
	}
	if snap.Totals.Skipped != 0 || snap.Totals.Failed != 0 {
		t.Errorf("counts %+v", snap.Totals)
	}
	e.trig.CloseIdle()
}
