package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
)

// TestTriggerRestartRedelivery restarts the broker (a graceful stop and a
// start on the same port and file store) while one delivery is executing
// and another message waits in the stream. The executing delivery cannot
// be acknowledged (its connection is gone); the runtime dials the
// restarted broker and both messages come back and are processed: the
// interrupted one redelivered by the restarted broker (which re-arms its
// redelivery timer from the recovered consumer state: here it came back
// sooner than one ack wait after the first delivery, so no time is
// asserted), then the waiting one.
func TestTriggerRestartRedelivery(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{
		tenants:   []string{"restart"},
		perTenant: []int{1},
		storage:   "file",
		binding: func(_, _ int, b *trigger.Binding) {
			// Room for the restart within the activation's deadline.
			b.OperationTimeoutMS, b.RootBudgetMS, b.AckWaitMS = 1500, 1500, 2500
		},
	})
	te := e.tenant(0)
	seq1 := e.publish(0, 0, argBlock)
	seq2 := e.publish(0, 0, argOK)
	run := e.run(t)
	first := e.waitStarted(t)
	if first.StreamSeq != seq1 || first.Delivered != 1 {
		t.Fatalf("first call %+v, want seq %d", first, seq1)
	}

	ctx, cancel := context.WithTimeout(t.Context(), trigWait)
	defer cancel()
	began := time.Now()
	if err := e.b.Restart(ctx); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	t.Logf("broker restarted in %v", time.Since(began))
	close(e.release) // the interrupted activation succeeds, too late to be acknowledged
	te.redial(t, e.b)

	// The profile's max_ack_pending of 1 holds seq2 back until seq1 is
	// settled: seq1 is redelivered, then seq2 is delivered.
	var got []trigCall
	trigEventually(t, "both messages processed after the restart", trigWait, func() bool {
		for len(e.calls) > 0 {
			got = append(got, <-e.calls)
		}
		info := te.info(0)
		return len(got) == 3 && info.NumPending == 0 && info.NumAckPending == 0 && info.AckFloor.StreamSeq == seq2
	})
	// The broker applies an acknowledgement before the runtime reads its
	// receipt; a stop in between would interrupt that read (uncertain).
	trigEventually(t, "seq2's receipt verified", trigWait, func() bool {
		last, ok := e.mon.LastStep()
		return ok && last.StreamSeq == seq2 && last.Ack == pull.AckVerified
	})
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []struct{ seq, delivered uint64 }{{seq1, 1}, {seq1, 2}, {seq2, 1}}
	for i, w := range want {
		if got[i].StreamSeq != w.seq || got[i].Delivered != w.delivered {
			t.Errorf("call %d: %+v, want seq %d delivery %d", i, got[i], w.seq, w.delivered)
		}
	}
	t.Logf("redelivered %v after the first delivery (ack wait %v)", got[1].At.Sub(got[0].At), e.cfg.Bindings[0].AckWait())
	s := e.mon.Snapshot()
	// The interrupted delivery's acknowledgement is either refused before
	// it was written (nothing sent) or written without a receipt
	// (uncertain); never verified.
	if s.Totals.Delivered != 3 || s.Totals.Acked-s.Totals.Uncertain != 2 || s.Totals.Uncertain+s.Totals.Unacknowledged != 1 {
		t.Errorf("counts %+v: want three deliveries, two verified acknowledgements, one lost", s.Totals)
	}
	if s.Dials < 2 {
		t.Errorf("%d dials, want a new connection after the restart", s.Dials)
	}
	if info := te.info(0); info.NumRedelivered != 0 || info.Delivered.StreamSeq != seq2 {
		t.Errorf("consumer after the restart %+v", info)
	}
}
