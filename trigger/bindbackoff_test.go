package trigger

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
)

// TestBindingBackoff: a binding whose consumer info goes unanswered for the
// whole operation timeout (the connection kept, conn.ErrUnanswered) is
// backed off: its visits are skipped without network until at least
// fairShare times the loop time it took has passed, while the tenant's
// other binding keeps delivering on the same connection (one dial in all);
// a second unanswered visit backs it off again, bounded; a visit its
// consumer answers resets it.
func TestBindingBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 2), PoolLimits{})
		timeout := r.trig.bindings[0].cfg.OperationTimeout()
		down, inspected := true, 0
		r.net.inspectErr = func(b int) error {
			if b != 0 {
				return nil
			}
			inspected++
			if !down {
				return nil
			}
			time.Sleep(timeout) // the consumer's leader never answers
			return fmt.Errorf("pull: inspect: %w", fmt.Errorf("%w: %w", conn.ErrUnanswered, context.DeadlineExceeded))
		}
		lim := r.pools.Limits()

		// failUntilDue makes the failing visit and steps until binding 0
		// is due again, returning its wait after the failure and the
		// other binding's deliveries meanwhile.
		failUntilDue := func(n int) (time.Duration, int) {
			t.Helper()
			for range 100 {
				r.net.publish(1, `[]`)
			}
			before := inspected
			rep := r.step(t)
			if rep.Binding == 1 { // the rotation's turn of the other binding
				rep = r.step(t)
			}
			if rep.Binding != 0 || rep.Result != ResultFailed || rep.Error != ClassConnection || inspected != before+1 {
				t.Fatalf("unanswered visit %d: %+v", n, rep)
			}
			failed := time.Now()
			wait := r.trig.bindings[0].backoff.retryAt.Sub(failed)
			delivered := 0
			for time.Now().Before(failed.Add(wait)) {
				rep := r.step(t)
				switch {
				case rep.Binding == 0 && (rep.Error != ClassBindingBackoff || rep.Result != ResultSkipped):
					t.Fatalf("visit of the backed-off binding: %+v", rep)
				case rep.Binding == 1 && rep.Result == ResultDelivered:
					delivered++
				}
				time.Sleep(rep.Wait + 10*time.Millisecond)
			}
			if inspected != before+1 {
				t.Errorf("%d consumer-info requests of the backed-off binding, want none", inspected-before-1)
			}
			return wait, delivered
		}
		w1, d1 := failUntilDue(1)
		if hi := max(lim.MaxDialBackoff, fairShare*timeout*3/2); w1 < fairShare*timeout || w1 > hi {
			t.Errorf("first backoff %v, want between %v and %v", w1, fairShare*timeout, hi)
		}
		w2, d2 := failUntilDue(2)
		if w2 < fairShare*timeout || r.trig.bindings[0].backoff.failures != 2 {
			t.Errorf("second backoff %v after %d failures, want at least %v after 2", w2, r.trig.bindings[0].backoff.failures, fairShare*timeout)
		}
		if d1 == 0 || d2 == 0 {
			t.Errorf("the healthy binding delivered %d and %d times during the backoffs, want some", d1, d2)
		}

		down = false
		rep := r.step(t)
		if rep.Binding == 1 { // the rotation's turn of the other binding
			rep = r.step(t)
		}
		if rep.Binding != 0 || rep.Result != ResultEmpty {
			t.Fatalf("visit once the consumer answers: %+v", rep)
		}
		if b := r.trig.bindings[0].backoff; b != (bindingBackoff{}) {
			t.Errorf("backoff after an answered visit %+v, want reset", b)
		}
		if n := r.net.dialCount(); n != 1 {
			t.Errorf("%d dials, want 1: an unanswered request keeps the connection", n)
		}
		if got := r.mon.Snapshot().Totals.Error(ClassBindingBackoff); got == 0 {
			t.Errorf("binding backoff skips counted %d, want some", got)
		}
	})
}

// TestUnanswered lists what backs a binding off.
func TestUnanswered(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"deadline, connection kept", fmt.Errorf("%w: %w", conn.ErrUnanswered, context.DeadlineExceeded), true},
		{"deadline, connection closed", &conn.ClosedError{Err: context.DeadlineExceeded}, true},
		{"no responders", jspull.ErrNoResponders, true},
		{"no leader (503 API error)", &jspull.APIError{Code: 503, ErrCode: 10008}, true},
		{"other API error", &jspull.APIError{Code: 500, ErrCode: 10010}, false},
		{"connection lost", &conn.ClosedError{Err: conn.ErrServerClosed}, false},
		{"owner stopped", context.Canceled, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := unanswered(tc.err); got != tc.want {
				t.Errorf("unanswered(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// TestBindingBackoffByPullReply: a pull answered "no responders" (503),
// "leadership change" or "server shutdown" (409) backs its binding off, so
// its next visit is a skip without network; any other reply does not.
func TestBindingBackoffByPullReply(t *testing.T) {
	for _, tc := range []struct {
		kind jspull.Kind
		want bool
	}{
		{jspull.KindNoResponders, true},
		{jspull.KindLeadershipChange, true},
		{jspull.KindServerShutdown, true},
		{jspull.KindNoMessages, false},
		{jspull.KindRequestsPending, false},
		{jspull.KindMessageTooLarge, false},
	} {
		t.Run(tc.kind.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rtConfig(t, 1), PoolLimits{})
				r.net.publish(0, `[]`)
				r.net.nextReply = func(int) (jspull.Kind, bool, error) { return tc.kind, true, nil }
				r.step(t)
				rep := r.step(t)
				if got := rep.Error == ClassBindingBackoff; got != tc.want {
					t.Errorf("visit after a pull answered %v: %+v, want a binding backoff skip %v", tc.kind, rep, tc.want)
				}
			})
		})
	}
}

// TestBindingBackoffJitter: the floor of a backoff, fairShare times the
// loop time of the failed visit, is jittered up to half again, so retries
// after a fixed operation timeout do not keep the phase of a periodic
// fault; a long dial schedule still wins over it.
func TestBindingBackoffJitter(t *testing.T) {
	r := newRig(t, rtConfig(t, 1), PoolLimits{})
	b := &r.trig.bindings[0]
	start := time.Now()
	const held = time.Second
	seen := map[time.Duration]bool{}
	for range 64 {
		b.backoff = bindingBackoff{}
		r.trig.settleBackoff(b, true, false, start, start.Add(held))
		wait := b.backoff.retryAt.Sub(start.Add(held))
		if lo, hi := fairShare*held, fairShare*held*3/2; wait < lo || wait > hi {
			t.Fatalf("wait %v after a visit that held the loop %v, want between %v and %v", wait, held, lo, hi)
		}
		seen[wait] = true
	}
	if len(seen) < 32 {
		t.Errorf("%d distinct waits in 64 backoffs: the floor is not jittered", len(seen))
	}
	r.trig.settleBackoff(b, false, true, start, start)
	if b.backoff != (bindingBackoff{}) {
		t.Errorf("backoff %+v after an answered visit, want reset", b.backoff)
	}
}
