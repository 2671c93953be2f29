package conformance_test

import (
	"slices"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
)

// TestTriggerAwaitingRedelivery: a binding whose event failed (a NAK with
// a 1 s delay) sends no pull until that delay has passed. Its consumer
// has the event pending (num_ack_pending 1 = max_ack_pending), so the
// broker can deliver nothing before the delay ends, and a pull would be
// held for its 100 ms expiry on every visit. Each visit stops after
// consumer info instead (Counts.Awaiting), and the first visits after the
// delay get the redelivery from the broker, which the runtime terminates
// as exhausted (max_deliver 2). The figures logged are the visits' times
// during the delay.
func TestTriggerAwaitingRedelivery(t *testing.T) {
	t.Parallel()
	const delay = time.Second
	e := trigStart(t, trigSpec{
		tenants:   []string{"awaiting"},
		perTenant: []int{1},
		binding: func(_, _ int, b *trigger.Binding) {
			b.MaxDeliver, b.NakDelayMS = 2, int(delay/time.Millisecond)
		},
	})
	seq := e.publish(0, 0, argRetry)
	first := e.stepUntil(t, "first delivery", 4, func(r trigger.StepReport) bool { return r.Result == trigger.ResultDelivered })
	if first.StreamSeq != seq || first.Delivered != 1 || first.Action != pull.ActionNak || first.Ack != pull.AckVerified {
		t.Fatalf("step %+v: want delivery 1 of seq %d negatively acknowledged", first, seq)
	}
	// The NAK was sent after first.At: every visit that starts before
	// first.At + delay is within the runtime's own bound.
	within := first.At.Add(delay)
	var took []time.Duration
	var redelivered trigger.StepReport
	deadline := time.Now().Add(trigWait)
	for redelivered.Delivered == 0 && time.Now().Before(deadline) {
		before := e.mon.Snapshot().Totals
		start := time.Now()
		r := e.step(t)
		after := e.mon.Snapshot().Totals
		switch {
		case r.Result == trigger.ResultDelivered:
			redelivered = r
		case r.At.Before(within):
			took = append(took, time.Since(start))
			if r.Result != trigger.ResultEmpty || after.Awaiting != before.Awaiting+1 || after.EmptyPulls != before.EmptyPulls {
				t.Fatalf("a visit during the NAK delay: %+v, counts %+v: want it to stop after consumer info", r, after)
			}
		case r.Result != trigger.ResultEmpty:
			t.Fatalf("a visit after the NAK delay: %+v", r)
		}
		time.Sleep(r.Wait) // the pacing Run applies
	}
	if redelivered.StreamSeq != seq || redelivered.Delivered != 2 || redelivered.Action != pull.ActionExhausted || redelivered.Ack != pull.AckVerified {
		t.Fatalf("redelivery %+v: want delivery 2 of seq %d terminated as exhausted", redelivered, seq)
	}
	if gap := redelivered.At.Sub(first.At); gap < delay {
		t.Errorf("redelivered %v after the NAK's step, before its %v delay", gap, delay)
	}
	if len(took) < 2 {
		t.Fatalf("%d visits during the NAK delay, want several", len(took))
	}
	if calls := e.callLog(); len(calls) != 2 {
		t.Errorf("calls %+v: want the delivery and the redelivery", calls)
	}
	te := e.tenant(0)
	if info := te.info(0); info.NumPending != 0 || info.NumAckPending != 0 {
		t.Errorf("consumer %+v: want nothing pending", info)
	}
	s := e.mon.Snapshot().Totals
	slices.Sort(took)
	t.Logf("%d visits during the %v NAK delay, each stopped after consumer info: p50 %v, max %v; redelivered %v after the NAK's step; counts: awaiting %d, empty pulls %d",
		len(took), delay, took[len(took)/2], took[len(took)-1], redelivered.At.Sub(first.At), s.Awaiting, s.EmptyPulls)
	e.trig.CloseIdle()
}
