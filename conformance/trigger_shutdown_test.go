package conformance_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
)

// TestTriggerShutdown stops the owner twice with work in hand: once with a
// delivery pending (pulled, its activation not yet started) and once with
// a delivery executing (its function running). Each time Run returns nil,
// and goroutines, sockets, the pools' requests, clients and connections and
// the host's slots, input and running functions all return to what they
// were before Run; nothing is acknowledged, so the broker keeps both
// deliveries awaiting acknowledgement and redelivers them after the ack
// wait, when a new Run processes them.
//
// It is not parallel: goroutines and sockets are counted for the whole
// process.
func TestTriggerShutdown(t *testing.T) {
	e := trigStart(t, trigSpec{tenants: []string{"stop"}, perTenant: []int{2}})
	te := e.tenant(0)
	g0 := runtime.NumGoroutine()
	s0, haveSockets := trigSockets(t)
	installed := e.pools.Usage().MetadataBytes // before any step
	reclaimed := func(what string) {
		t.Helper()
		trigAwaitGoroutines(t, what+": goroutines", g0)
		if n, ok := trigSockets(t); ok && n != s0 {
			t.Errorf("%s: %d sockets open, want %d", what, n, s0)
		}
		if u := e.pools.Usage(); u.Requests != 0 || u.Clients != 0 || u.Connections != 0 || u.MetadataBytes != installed {
			t.Errorf("%s: pools hold %+v, want only the installation's charge", what, u)
		}
		if s := e.ref.Stats(); s.Slots != 0 || s.InputBytes != 0 || s.Running != 0 || s.Reservations != s.Releases || s.Misuse != 0 {
			t.Errorf("%s: host holds %+v", what, s)
		}
	}
	shutdown := func(what string, i int, seq uint64) {
		t.Helper()
		last, ok := e.mon.LastStep()
		if !ok || last.Result != trigger.ResultShutdown || last.Binding != i || last.StreamSeq != seq ||
			last.Delivered != 1 || last.Action != pull.ActionNone || last.Ack != pull.AckNone {
			t.Errorf("%s: LastStep %+v, want the delivery of seq %d reclaimed, nothing sent", what, last, seq)
		}
		if got := te.info(i); got.NumAckPending != 1 || got.NumPending != 0 || got.AckFloor.StreamSeq != 0 {
			t.Errorf("%s: consumer %+v, want the delivery awaiting acknowledgement", what, got)
		}
	}
	if !haveSockets {
		t.Log("socket count unavailable here; relying on the pools and the broker")
	}

	// Pending: the owner stops between the pull and the activation.
	seq0 := e.publish(0, 0, argOK)
	ctx, cancel := context.WithCancel(t.Context())
	e.host.set(nil, func(trigger.Activation) { cancel() })
	run := runOwnerCtx(t, e.trig, e.host, ctx, cancel)
	if err := run.wait(t); err != nil {
		t.Fatalf("Run with pending work: %v", err)
	}
	e.host.set(nil, nil)
	reclaimed("pending")
	shutdown("pending", 0, seq0)
	if calls := e.callLog(); len(calls) != 0 {
		t.Errorf("the function ran for pending work: %+v", calls)
	}

	// Executing: the owner stops while the function runs.
	seq1 := e.publish(0, 1, argBlock)
	run = e.run(t)
	if c := e.waitStarted(t); c.StreamSeq != seq1 {
		t.Fatalf("executing %+v, want seq %d", c, seq1)
	}
	if err := run.stop(); err != nil {
		t.Fatalf("Run with executing work: %v", err)
	}
	reclaimed("executing")
	shutdown("executing", 1, seq1)
	if s := e.mon.Snapshot().Totals; s.Unacknowledged != 2 || s.Acked+s.Termed+s.Nacked+s.Exhausted != 0 || s.Delivered != 2 {
		t.Errorf("counts %+v: want two deliveries, nothing sent", s)
	}

	// Both are redelivered after the ack wait and processed.
	close(e.release)
	run = e.run(t)
	trigEventually(t, "both redelivered and acknowledged", trigWait, func() bool {
		a, b := te.info(0), te.info(1)
		return a.NumAckPending == 0 && a.AckFloor.StreamSeq == seq0 && b.NumAckPending == 0 && b.AckFloor.StreamSeq == seq1
	})
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	var redelivered []uint64
	for _, c := range e.callLog() {
		if c.Delivered == 2 {
			redelivered = append(redelivered, c.StreamSeq)
		}
	}
	if len(redelivered) != 2 {
		t.Errorf("redelivered calls for seqs %v, want %d and %d", redelivered, seq0, seq1)
	}
	reclaimed("after the redelivery")
}
