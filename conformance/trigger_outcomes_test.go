package conformance_test

import (
	"testing"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
)

// trigTerminated checks that the broker will never deliver seq again: the
// consumer has nothing pending or awaiting acknowledgement and its ack
// floor reached seq.
func trigTerminated(t *testing.T, te *trigTenantEnv, i int, seq uint64) {
	t.Helper()
	if got := te.info(i); got.NumPending != 0 || got.NumAckPending != 0 || got.AckFloor.StreamSeq != seq {
		t.Errorf("consumer %+v: want seq %d settled, nothing pending", got, seq)
	}
}

// TestTriggerDeclaredFailure delivers a message whose function returns a
// failure its contract declares: the delivery is terminated (+TERM, with
// the broker's receipt) and never redelivered.
func TestTriggerDeclaredFailure(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{tenants: []string{"declared"}, perTenant: []int{1}})
	seq := e.publish(0, 0, argFail)
	r := e.stepUntil(t, "delivery", 4, func(r trigger.StepReport) bool { return r.Result == trigger.ResultDelivered })
	c := e.nextCall(t)
	if c.StreamSeq != seq || c.Delivered != 1 || c.Arg != argFail {
		t.Errorf("call %+v", c)
	}
	if r.Outcome != trigger.OutcomeDeclaredFailure || r.Action != pull.ActionTerm || r.Ack != pull.AckVerified || r.Delivered != 1 {
		t.Errorf("step %+v: want a declared failure terminated with a verified receipt", r)
	}
	trigTerminated(t, e.tenant(0), 0, seq)
	if last, ok := e.mon.LastStep(); !ok || last != r {
		t.Errorf("LastStep %+v, want the delivering step %+v", last, r)
	}
	// An empty visit does not erase the last report.
	if r := e.step(t); r.Result != trigger.ResultEmpty {
		t.Errorf("next visit %+v, want empty", r)
	}
	if last, _ := e.mon.LastStep(); last != r {
		t.Errorf("LastStep after an empty visit %+v, want %+v", last, r)
	}
	s := e.mon.Snapshot().Totals
	if s.Termed != 1 || s.Acked+s.Nacked+s.Exhausted+s.Uncertain != 0 || s.Outcome(trigger.OutcomeDeclaredFailure) != 1 {
		t.Errorf("counts %+v", s)
	}
	e.trig.CloseIdle()
}

// TestTriggerInvalidPayloads delivers payloads that are not the function's
// argument array: each is refused by the reference host's decoder before
// the function runs (invalid arguments) and terminated.
func TestTriggerInvalidPayloads(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{tenants: []string{"invalid"}, perTenant: []int{1}})
	te := e.tenant(0)
	payloads := []struct {
		name    string
		payload []byte
	}{
		{"not an array", []byte(`"ok"`)},
		{"no argument", []byte(`[]`)},
		{"two arguments", []byte(`["ok","ok"]`)},
		{"wrong type", []byte(`[1]`)},
		{"record for string", []byte(`[{"ok":true}]`)},
		{"truncated", []byte(`["ok"`)},
		{"trailing data", []byte(`["ok"] 1`)},
		{"invalid UTF-8", []byte("[\"\xff\"]")},
		{"lone surrogate", []byte(`["\ud800"]`)},
		{"not JSON", []byte(`ok`)},
	}
	for _, p := range payloads {
		seq := te.publishRaw(trigSubject(te.id, 0), p.payload)
		r := e.stepUntil(t, p.name, 4, func(r trigger.StepReport) bool { return r.Result == trigger.ResultDelivered })
		if r.StreamSeq != seq || r.Outcome != trigger.OutcomeInvalidArguments || r.Action != pull.ActionTerm || r.Ack != pull.AckVerified {
			t.Errorf("%s: step %+v, want invalid arguments terminated", p.name, r)
		}
		trigTerminated(t, te, 0, seq)
	}
	if calls := e.callLog(); len(calls) != 0 {
		t.Errorf("the function ran for invalid payloads: %+v", calls)
	}
	n := uint64(len(payloads))
	if s := e.ref.Stats(); s.Outcome(trigger.OutcomeInvalidArguments) != n || s.Activations != n {
		t.Errorf("host stats %+v: want %d activations, all invalid arguments", s, n)
	}
	if s := e.mon.Snapshot().Totals; s.Termed != n || s.Outcome(trigger.OutcomeInvalidArguments) != n || s.Delivered != n {
		t.Errorf("counts %+v", s)
	}
	// A valid payload afterwards is processed.
	seq := e.publish(0, 0, argOK)
	r := e.stepUntil(t, "valid payload", 4, func(r trigger.StepReport) bool { return r.Result == trigger.ResultDelivered })
	if r.Outcome != trigger.OutcomeSuccess || r.Action != pull.ActionAck || r.Ack != pull.AckVerified {
		t.Errorf("valid payload: %+v", r)
	}
	trigTerminated(t, te, 0, seq)
	e.trig.CloseIdle()
}

// TestTriggerPoisonRetries delivers messages whose activation always fails
// in a retryable way (a platform failure on one binding, a timeout of the
// root budget on the other): each delivery but the last is negatively
// acknowledged with the binding's delay, the broker redelivers no sooner,
// and the last configured delivery is terminated and reported exhausted.
// Nothing is delivered after it.
func TestTriggerPoisonRetries(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{
		tenants:   []string{"poison"},
		perTenant: []int{2},
		binding: func(_, i int, b *trigger.Binding) {
			b.MaxDeliver, b.NakDelayMS = 3, 200
			if i == 1 {
				// The function waits for its context: the budget ends it.
				b.MaxDeliver, b.RootBudgetMS = 2, 50
			}
		},
	})
	te := e.tenant(0)
	seq0 := e.publish(0, 0, argRetry)
	seq1 := e.publish(0, 1, argBlock)
	run := e.run(t)
	trigEventually(t, "both exhausted", trigWait, func() bool { return e.mon.Snapshot().Totals.Exhausted == 2 })
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}

	for i, c := range []struct {
		seq     uint64
		outcome trigger.Outcome
	}{{seq0, trigger.OutcomePlatformFailure}, {seq1, trigger.OutcomeTimeout}} {
		b := e.cfg.Bindings[i]
		var calls []trigCall
		for _, call := range e.callLog() {
			if call.Binding == b.ID {
				calls = append(calls, call)
			}
		}
		if len(calls) != b.MaxDeliver {
			t.Fatalf("binding %d: %d activations, want max_deliver %d", i, len(calls), b.MaxDeliver)
		}
		for n, call := range calls {
			if call.StreamSeq != c.seq || call.Delivered != uint64(n+1) {
				t.Errorf("binding %d: activation %d is %+v, want seq %d delivery %d", i, n, call, c.seq, n+1)
			}
			// The broker holds a negatively acknowledged delivery for the
			// delay, counted from the NAK, which follows the activation's
			// start.
			if n > 0 {
				if gap := call.At.Sub(calls[n-1].At); gap < b.NakDelay() {
					t.Errorf("binding %d: delivery %d came %v after the previous one, before the %v delay", i, n+1, gap, b.NakDelay())
				}
			}
		}
		got := e.mon.Snapshot().Bindings[i]
		retries := uint64(b.MaxDeliver - 1)
		if got.Delivered != uint64(b.MaxDeliver) || got.Nacked != retries || got.Exhausted != 1 || got.Termed != 0 ||
			got.Acked != 0 || got.Uncertain != 0 || got.Outcome(c.outcome) != uint64(b.MaxDeliver) {
			t.Errorf("binding %d counts %+v: want %d NAKs then one exhausted TERM of %v", i, got, retries, c.outcome)
		}
		trigTerminated(t, te, i, c.seq)
		if info := te.info(i); info.Delivered.ConsumerSeq != uint64(b.MaxDeliver) {
			t.Errorf("binding %d: consumer delivered %d times, want %d", i, info.Delivered.ConsumerSeq, b.MaxDeliver)
		}
	}
	last, ok := e.mon.LastStep()
	if !ok || last.Action != pull.ActionExhausted || last.Ack != pull.AckVerified || int(last.Delivered) != e.cfg.Bindings[last.Binding].MaxDeliver {
		t.Errorf("LastStep %+v: want the exhausted delivery", last)
	}
	// Exhausted means the broker's max_deliver, not a local give-up: a
	// further visit finds nothing.
	if r := e.step(t); r.Result != trigger.ResultEmpty {
		t.Errorf("visit after exhaustion %+v, want empty", r)
	}
	e.trig.CloseIdle()
}
