package conformance_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/trigger"
)

// TestFaultNodeRestartFromConfig restarts a node from its persisted
// configuration alone. The first installation runs until an activation
// blocks; the owner stops (the step ends with nothing acknowledged) and the
// node closes its installation and its pools, as a process that exits
// would. A second node takes nothing from the first but the bytes of
// Config.MarshalJSON: ParseConfig, new pools (an empty registry, so epoch
// 2 expects 0) and Install with the same credentials, run with the same
// host. The broker redelivers the unacknowledged event after its ack wait,
// the new installation runs and acknowledges it, and the events queued
// behind it follow. Ledger: nothing lost, one re-execution, caused by the
// shutdown; the new runtime back to its baseline.
func TestFaultNodeRestartFromConfig(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{tenants: []string{"node"}, perTenant: []int{2}})
	blocked := e.publish(0, 0, argBlock)
	for range 2 {
		e.publish(0, 0, argOK)
		e.publish(0, 1, argOK)
	}

	// The first node: an activation blocks, the owner stops.
	run := e.run(t)
	first := e.waitStarted(t)
	if first.StreamSeq != blocked || first.Delivered != 1 {
		t.Fatalf("blocked call %+v, want seq %d, delivery 1", first, blocked)
	}
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	stopped := time.Now()
	last, ok := e.mon.LastStep()
	if !ok || last.Result != trigger.ResultShutdown || last.StreamSeq != blocked || last.Ack != pull.AckNone {
		t.Fatalf("last step of the first node %+v, want the blocked delivery ended by the shutdown, nothing acknowledged", last)
	}
	e.trig.Close()
	e.pools.Close()
	if u := e.pools.Usage(); u != (trigger.Usage{}) {
		t.Errorf("the first node's pools after Close hold %+v", u)
	}

	// The second node: only the persisted bytes cross over.
	raw, err := e.cfg.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := trigger.ParseConfig(raw)
	if err != nil {
		t.Fatalf("ParseConfig of the persisted bytes: %v", err)
	}
	again, err := cfg.MarshalJSON()
	if err != nil || !bytes.Equal(again, raw) {
		t.Fatalf("the parsed configuration re-encodes to other bytes (%v)", err)
	}
	pools := faultPools(t, e.pools.Limits())
	if epoch, live := pools.Epoch("conformance"); epoch != 0 || live {
		t.Fatalf("a new node's registry: epoch %d, live %v; want 0, false", epoch, live)
	}
	trig, mon, err := trigger.Install(pools, trigger.Installation{LogicalID: "conformance", Epoch: 2, Config: cfg, Credentials: e.creds})
	if err != nil {
		t.Fatalf("Install at epoch 2: %v", err)
	}
	t.Cleanup(trig.Close)
	if epoch, live := pools.Epoch("conformance"); epoch != 2 || !live {
		t.Fatalf("after Install: epoch %d, live %v; want 2, true", epoch, live)
	}
	health := ledger.NewHealth(pools)
	close(e.release) // on the second node, the blocked event's function completes
	installed := time.Now()
	run2 := runOwner(t, trig, e.host)

	v, took := e.settle(t)
	if err := run2.stop(); err != nil {
		t.Fatalf("Run of the second node: %v", err)
	}
	checkVerdict(t, v, true)
	want := []ledger.Reexecution{{Key: ledger.Key{Binding: e.bindingID(0, 0), Seq: blocked}, Delivered: 2, Cause: ledger.CauseShutdown}}
	if diff := cmp.Diff(want, v.Reexecutions); diff != "" {
		t.Errorf("re-executions (-want +got):\n%s", diff)
	}

	// The redelivery came after the ack wait, and the events behind it
	// followed in order.
	calls := e.callsOf(e.bindingID(0, 0))
	if len(calls) != 4 || calls[1].StreamSeq != blocked || calls[1].Delivered != 2 {
		t.Fatalf("calls of the blocked binding %+v: want the blocked event, its redelivery, then the two behind it", calls)
	}
	if c2, c3 := calls[2], calls[3]; c2.StreamSeq <= blocked || c3.StreamSeq <= c2.StreamSeq || c2.Delivered != 1 || c3.Delivered != 1 {
		t.Errorf("calls after the redelivery %+v, %+v: want the events behind it in order, first deliveries", c2, c3)
	}
	ackWait := e.cfg.Bindings[0].AckWait()
	redelivered := calls[1].At.Sub(first.At)
	if redelivered < ackWait-100*time.Millisecond {
		t.Errorf("redelivered %v after the first delivery's activation, before the ack wait %v", redelivered, ackWait)
	}
	s := mon.Snapshot()
	if s.Epoch != 2 || s.Totals.Delivered < 3 || s.Totals.Acked != s.Totals.Delivered || s.Totals.Uncertain != 0 {
		t.Errorf("second node's counts %+v (epoch %d): want every delivery, the redelivery among them, acknowledged and verified", s.Totals, s.Epoch)
	}
	t.Logf("figures: redelivered %v after the first activation (ack wait %v), %v after the owner stopped, %v after the second Install; settled %v after it",
		redelivered, ackWait, calls[1].At.Sub(stopped), calls[1].At.Sub(installed), took)

	hctx, hcancel := context.WithTimeout(t.Context(), trigWait)
	defer hcancel()
	if err := health.Wait(hctx, faultTick); err != nil {
		t.Errorf("after the scenario: %v", err)
	}
}
