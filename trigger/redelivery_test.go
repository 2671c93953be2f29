package trigger

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/pull"
)

// timedRig is a rig whose fake broker times redeliveries as the profile's
// consumer does (see fakeNet.timed), with the binding's ack wait.
func timedRig(t *testing.T) *rig {
	t.Helper()
	r := newRig(t, rtConfig(t, 1), PoolLimits{})
	r.net.timed = true
	r.net.ackWait = r.trig.bindings[0].cfg.AckWait()
	return r
}

// stepUntil steps every tick until at (virtual time), and returns the
// reports and the pulls sent meanwhile.
func stepUntil(t *testing.T, r *rig, at time.Time, tick time.Duration) ([]StepReport, int) {
	t.Helper()
	pulls := r.net.pullCount()
	var reps []StepReport
	for time.Now().Before(at) {
		reps = append(reps, r.step(t))
		time.Sleep(tick)
	}
	return reps, r.net.pullCount() - pulls
}

// TestAwaitingRedeliveryAfterNak: while the binding's NAKed delivery waits
// out its NAK delay the broker can deliver nothing (max_ack_pending 1), so
// the visits stop after consumer info (Awaiting) instead of holding a pull
// for 100 ms each; the first visit after the delay pulls the redelivery.
func TestAwaitingRedeliveryAfterNak(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := timedRig(t)
		calls := 0
		r.host.activate = func(context.Context, Activation) Outcome {
			calls++
			if calls == 1 {
				return OutcomeTimeout
			}
			return OutcomeSuccess
		}
		r.net.publish(0, `[]`)
		r.net.publish(0, `[]`)
		nakAt := time.Now()
		rep := r.step(t)
		if rep.Action != pull.ActionNak || rep.Ack != pull.AckVerified {
			t.Fatalf("first step %+v, want a verified NAK", rep)
		}
		delay := r.trig.bindings[0].cfg.NakDelay()
		const tick = 20 * time.Millisecond
		reps, pulls := stepUntil(t, r, nakAt.Add(delay), tick)
		if pulls != 0 {
			t.Errorf("%d pulls during the NAK delay, want 0", pulls)
		}
		for _, rep := range reps {
			if rep.Result != ResultEmpty || rep.Error != 0 {
				t.Errorf("a visit during the NAK delay: %+v", rep)
			}
		}
		tot := r.mon.Snapshot().Totals
		if tot.Awaiting != uint64(len(reps)) || tot.EmptyPulls != 0 {
			t.Errorf("Awaiting %d, EmptyPulls %d after %d visits, want %d and 0", tot.Awaiting, tot.EmptyPulls, len(reps), len(reps))
		}
		// The delay has passed: the next visit pulls the redelivery at
		// once, and then the message behind it.
		rep = r.step(t)
		if rep.Result != ResultDelivered || rep.Delivered != 2 || rep.Ack != pull.AckVerified || rep.Action != pull.ActionAck {
			t.Errorf("the visit after the NAK delay: %+v, want the redelivery acknowledged", rep)
		}
		rep = r.step(t)
		if rep.Result != ResultDelivered || rep.Delivered != 1 || rep.Ack != pull.AckVerified {
			t.Errorf("the visit after the redelivery: %+v, want the next message", rep)
		}
		if got := r.mon.Snapshot().Totals.Awaiting; got != uint64(len(reps)) {
			t.Errorf("Awaiting %d after verified acknowledgements, want %d", got, len(reps))
		}
	})
}

// TestAwaitingRedeliveryUnacknowledged: a delivery whose acknowledgement
// is uncertain, or was not sent, can be redelivered from the ack wait on,
// counted from the pull; until then no pull is sent. An uncertain NAK
// ends the wait at its delay (the broker may have read it).
func TestAwaitingRedeliveryUnacknowledged(t *testing.T) {
	uncertain := func(cmd jspull.Command) (jspull.Receipt, bool, error) {
		return jspull.Receipt{Outcome: pull.AckUncertain, Action: cmd.Action},
			true, &jspull.ReceiptError{Err: &conn.ClosedError{Err: context.DeadlineExceeded}}
	}
	tests := []struct {
		name    string
		outcome Outcome
		ack     func(cmd jspull.Command) (jspull.Receipt, bool, error)
		cred    bool // the credential fails before the acknowledgement
		state   pull.AckState
		// nak: the wait ends at the NAK delay, not the ack wait.
		nak bool
	}{
		{"uncertain ack", OutcomeSuccess, uncertain, false, pull.AckUncertain, false},
		{"not sent", OutcomeSuccess, nil, true, pull.AckNone, false},
		{"uncertain nak", OutcomeTimeout, uncertain, false, pull.AckUncertain, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := timedRig(t)
				r.host.activate = func(context.Context, Activation) Outcome { return tc.outcome }
				if tc.ack != nil {
					r.net.ackReply = func(_ int, cmd jspull.Command) (jspull.Receipt, bool, error) { return tc.ack(cmd) }
				}
				if tc.cred {
					// The checks before the pull pass; the one before the
					// acknowledgement fails.
					r.host.credential = func(_ string, call int) error {
						if call == 3 {
							return errTest
						}
						return nil
					}
				}
				r.net.publish(0, `[]`)
				sent := time.Now()
				rep := r.step(t)
				if rep.Result != ResultDelivered || rep.Ack != tc.state {
					t.Fatalf("first step %+v, want a delivery with ack %v", rep, tc.state)
				}
				r.net.ackReply, r.host.credential = nil, nil
				until := sent.Add(r.trig.bindings[0].cfg.AckWait())
				if tc.nak {
					until = sent.Add(r.trig.bindings[0].cfg.NakDelay())
				}
				reps, pulls := stepUntil(t, r, until, 250*time.Millisecond)
				if pulls != 0 || len(reps) == 0 {
					t.Errorf("%d pulls in %d visits before %v, want none", pulls, len(reps), until.Sub(sent))
				}
				// An uncertain acknowledgement met its deadline: the
				// binding is backed off first, skipped without network.
				awaiting := 0
				for _, rep := range reps {
					if rep.Error != ClassBindingBackoff {
						awaiting++
					}
				}
				if got := r.mon.Snapshot().Totals.Awaiting; got != uint64(awaiting) || (awaiting < len(reps)) != (tc.state == pull.AckUncertain) {
					t.Errorf("Awaiting %d, want %d of %d visits (the others backed off after an uncertain ack only)", got, awaiting, len(reps))
				}
				if tc.nak {
					// The broker did not read the NAK: the pull after the
					// delay is held, and the visits go on pulling until
					// the ack wait redelivers.
					rep = r.step(t)
					if rep.Result != ResultEmpty || r.mon.Snapshot().Totals.EmptyPulls != 1 {
						t.Errorf("the visit after the NAK delay: %+v, want a held pull", rep)
					}
					return
				}
				rep = r.step(t)
				if rep.Result != ResultDelivered || rep.Delivered != 2 {
					t.Errorf("the visit after the ack wait: %+v, want the redelivery", rep)
				}
			})
		})
	}
}

// TestAwaitingRedeliveryUnknown: a pending delivery the runtime did not
// make (from before this installation, or lost to a failed pull) is pulled
// for as before: the pull is held and finds nothing.
func TestAwaitingRedeliveryUnknown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := timedRig(t)
		r.net.mu.Lock()
		r.net.waiting[0] = fakePending{m: &fakeMsg{seq: 99, delivered: 1}, at: time.Now().Add(time.Minute)}
		r.net.mu.Unlock()
		start := time.Now()
		rep := r.step(t)
		if rep.Result != ResultEmpty || r.net.pullCount() != 1 || r.mon.Snapshot().Totals.EmptyPulls != 1 {
			t.Errorf("report %+v, %d pulls: want one held pull", rep, r.net.pullCount())
		}
		if took := time.Since(start); took < jspull.RequestExpires {
			t.Errorf("the held pull took %v, want its expiry", took)
		}
	})
}
