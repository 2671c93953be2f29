package trigger

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/pull"
)

// visited returns the binding IDs of the steps in the event log, in order.
func visited(log []string) []string {
	var out []string
	for _, e := range log {
		if len(e) > 9 && e[:9] == "eligible " {
			out = append(out, e[9:])
		}
	}
	return out
}

// TestRotationOrder: tenants in turn, and each tenant's bindings in turn
// with its own cursor.
func TestRotationOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// t0: b0 b1 b2, t1: b3, t2: b4 b5
		r := newRig(t, rtConfig(t, 3, 1, 2), PoolLimits{})
		r.host.eligible = func(BindingRef, int) error { return ErrNotEligible }
		for range 12 {
			r.step(t)
		}
		want := []string{
			"b0", "b3", "b4", "b1", "b3", "b5",
			"b2", "b3", "b4", "b0", "b3", "b5",
		}
		if diff := cmp.Diff(want, visited(r.ev.take())); diff != "" {
			t.Errorf("rotation (-want +got):\n%s", diff)
		}
		revisit := []int{}
		for i := range r.trig.bindings {
			revisit = append(revisit, r.trig.bindings[i].revisit)
		}
		if diff := cmp.Diff([]int{9, 9, 9, 3, 6, 6}, revisit); diff != "" {
			t.Errorf("revisit periods (-want +got):\n%s", diff)
		}
	})
}

// TestFairness: a tenant flooded with messages delays another's message by
// at most one visit.
func TestFairness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 2, 1), PoolLimits{})
		for range 50 {
			r.net.publish(0, `[]`)
			r.net.publish(1, `[]`)
		}
		r.net.publish(2, `[]`)
		var delivered []string
		for range 6 {
			rep := r.step(t)
			if rep.Result == ResultDelivered {
				delivered = append(delivered, r.trig.cfg.Bindings[rep.Binding].ID)
			}
		}
		want := []string{"b0", "b2", "b1", "b0"}
		if diff := cmp.Diff(want, delivered); diff != "" {
			t.Errorf("deliveries (-want +got):\n%s", diff)
		}
	})
}

// TestPacing checks the wait after each step: a delivery grants one lap of
// immediate steps up to the busy binding's next visit; otherwise one poll
// interval.
func TestPacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 3), PoolLimits{})
		poll := r.trig.PollInterval()
		r.net.publish(1, `[]`)
		r.net.publish(1, `[]`)
		var got []time.Duration
		var results []StepResult
		for range 9 {
			rep := r.step(t)
			got = append(got, rep.Wait)
			results = append(results, rep.Result)
		}
		wantResults := []StepResult{
			ResultEmpty, ResultDelivered, ResultEmpty, ResultEmpty, ResultDelivered,
			ResultEmpty, ResultEmpty, ResultEmpty, ResultEmpty,
		}
		if diff := cmp.Diff(wantResults, results); diff != "" {
			t.Errorf("results (-want +got):\n%s", diff)
		}
		want := []time.Duration{poll, 0, 0, 0, 0, 0, 0, poll, poll}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("waits (-want +got):\n%s", diff)
		}
	})
}

// TestRunIdleVisits: an idle owner makes one visit per poll interval,
// whatever the number of bindings.
func TestRunIdleVisits(t *testing.T) {
	for _, n := range []int{1, 16, 256} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rtConfig(t, n), PoolLimits{})
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() { done <- r.trig.Run(ctx, r.host) }()
				time.Sleep(10*r.trig.PollInterval() - time.Millisecond)
				synctest.Wait()
				cancel()
				if err := <-done; err != nil {
					t.Fatalf("Run: %v", err)
				}
				if got := r.mon.Snapshot().Steps; got != 10 {
					t.Errorf("%d steps in 10 poll intervals, want 10", got)
				}
			})
		})
	}
}

// TestRunBusyNoPacing: a busy owner is not paced: many messages in one
// poll interval.
func TestRunBusyNoPacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1, 1), PoolLimits{})
		r.net.rtt = 100 * time.Microsecond
		for range 100 {
			r.net.publish(0, `[]`)
			r.net.publish(1, `[]`)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- r.trig.Run(ctx, r.host) }()
		time.Sleep(r.trig.PollInterval())
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		// 3 round trips of 100 µs per message: 200 messages take 60 ms.
		s := r.mon.Snapshot()
		if s.Totals.Acked != 200 {
			t.Errorf("acked %d in one poll interval, want 200", s.Totals.Acked)
		}
	})
}

// TestRunSingleOwner: a second Run, and Step while Run runs, are refused;
// a nil host is refused.
func TestRunSingleOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- r.trig.Run(ctx, r.host) }()
		synctest.Wait()
		if err := r.trig.Run(ctx, r.host); !errors.Is(err, ErrRunning) {
			t.Errorf("second Run: %v, want ErrRunning", err)
		}
		if _, err := r.trig.Step(ctx, r.host); !errors.Is(err, ErrRunning) {
			t.Errorf("Step during Run: %v, want ErrRunning", err)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if err := r.trig.Run(ctx, nil); !errors.Is(err, ErrNoHost) {
			t.Errorf("Run(nil): %v", err)
		}
		if _, err := r.trig.Step(ctx, nil); !errors.Is(err, ErrNoHost) {
			t.Errorf("Step(nil): %v", err)
		}
	})
}

// TestStaleConnectionReplacedOnce: an idle connection the broker closed is
// found before any command and replaced by one dial within the step.
func TestStaleConnectionReplacedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.step(t)
		r.net.links[0].makeStale()
		r.net.publish(0, `[]`)
		r.ev.take()
		rep := r.step(t)
		want := []string{
			"eligible b0", "credential t0", "reserve b0", "check 0", "dial t0", "inspect b0",
			"eligible b0", "credential t0", "next b0", "activate b0", "credential t0", "ack b0 +ACK", "release b0",
		}
		if diff := cmp.Diff(want, r.ev.take()); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		if rep.Ack != pull.AckVerified || r.net.dialCount() != 2 {
			t.Errorf("report %+v, dials %d", rep, r.net.dialCount())
		}
		if u := r.pools.Usage(); u.Connections != 1 || r.net.openLinks() != 1 {
			t.Errorf("usage %+v, open links %d", u, r.net.openLinks())
		}
		if s := r.mon.Snapshot(); s.Replaced != 1 || s.Dials != 2 {
			t.Errorf("snapshot: replaced %d, dials %d; want 1, 2", s.Replaced, s.Dials)
		}
	})
}

// TestStaleThenDialFails: the replacement dial fails: no command, a dial
// failure, then the dial backoff holds further dials off until it passes,
// doubling with each failure.
func TestStaleThenDialFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.step(t)
		r.net.links[0].makeStale()
		r.net.dialErr = func(string) error { return errTest }
		r.ev.take()
		rep := r.step(t)
		if rep.Result != ResultFailed || rep.Error != ClassDial {
			t.Errorf("report %+v", rep)
		}
		want := []string{"eligible b0", "credential t0", "reserve b0", "check 0", "dial t0", "release b0"}
		if diff := cmp.Diff(want, r.ev.take()); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		if u := r.pools.Usage(); u.Connections != 0 {
			t.Errorf("usage %+v", u)
		}
		lim := r.pools.Limits()
		if rep := r.step(t); rep.Error != ClassDialBackoff || r.net.dialCount() != 2 {
			t.Errorf("in backoff: report %+v, dials %d", rep, r.net.dialCount())
		}
		time.Sleep(lim.DialBackoff)
		if rep := r.step(t); rep.Error != ClassDial || r.net.dialCount() != 3 {
			t.Errorf("after backoff: report %+v, dials %d", rep, r.net.dialCount())
		}
		time.Sleep(lim.DialBackoff)
		if rep := r.step(t); rep.Error != ClassDialBackoff {
			t.Errorf("second backoff doubles: report %+v", rep)
		}
		time.Sleep(lim.DialBackoff)
		r.net.dialErr = nil
		if rep := r.step(t); rep.Result != ResultEmpty || r.net.dialCount() != 4 {
			t.Errorf("recovered: report %+v, dials %d", rep, r.net.dialCount())
		}
	})
}

// TestBackoff lists the waits after consecutive failed dials.
func TestBackoff(t *testing.T) {
	lim := DefaultPoolLimits()
	lim.DialBackoff = 100 * time.Millisecond
	lim.MaxDialBackoff = time.Second
	var got []time.Duration
	for n := 1; n <= 6; n++ {
		got = append(got, backoff(lim, n))
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("backoff (-want +got):\n%s", diff)
	}
}

// TestConnectionSharedByTenant: one connection per tenant across its
// bindings; tenants do not share.
func TestConnectionSharedByTenant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 3, 2), PoolLimits{})
		for range 10 {
			r.step(t)
		}
		if r.net.dialCount() != 2 {
			t.Errorf("dials %d, want 2", r.net.dialCount())
		}
		if u := r.pools.Usage(); u.Connections != 2 || u.Clients != 2 {
			t.Errorf("usage %+v", u)
		}
		if s := r.mon.Snapshot(); s.Dials != 2 || s.Replaced != 0 {
			t.Errorf("snapshot: dials %d, replaced %d", s.Dials, s.Replaced)
		}
	})
}

// TestIdleAge: a connection idle past MaxIdleAge is closed by the next
// step, whatever tenant it visits, and the next visit of its tenant dials.
func TestIdleAge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := DefaultPoolLimits()
		lim.MaxIdleAge = time.Second
		r := newRig(t, rtConfig(t, 1, 1), lim)
		r.host.eligible = func(b BindingRef, _ int) error {
			if b.Tenant == "t1" {
				return ErrNotEligible
			}
			return nil
		}
		r.step(t) // t0 dials
		time.Sleep(lim.MaxIdleAge + time.Millisecond)
		r.step(t) // t1, ineligible: the sweep closes t0's connection
		if u := r.pools.Usage(); u.Connections != 0 || r.net.openLinks() != 0 {
			t.Errorf("usage %+v, open %d", u, r.net.openLinks())
		}
		r.step(t)
		if r.net.dialCount() != 2 {
			t.Errorf("dials %d, want 2", r.net.dialCount())
		}
	})
}

// TestLameDuckNotReused: a connection in lame-duck mode is replaced.
func TestLameDuckNotReused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.step(t)
		r.net.mu.Lock()
		r.net.links[0].lame = true
		r.net.mu.Unlock()
		r.step(t)
		if r.net.dialCount() != 2 || r.net.openLinks() != 1 || r.pools.Usage().Connections != 1 {
			t.Errorf("dials %d, open %d, usage %+v", r.net.dialCount(), r.net.openLinks(), r.pools.Usage())
		}
	})
}

// TestShutdown stops the owner with a message pulled but not yet
// activated, and during an activation: nothing is acknowledged, the host's
// reservation is released, connections and reservations return to zero,
// and no goroutine is left.
func TestShutdown(t *testing.T) {
	tests := []struct {
		name      string
		executing bool
	}{
		{"pending", false},
		{"executing", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rtConfig(t, 1), PoolLimits{})
				r.net.publish(0, `[]`)
				ctx, cancel := context.WithCancel(t.Context())
				started := make(chan struct{})
				if tc.executing {
					r.host.activate = func(actx context.Context, a Activation) Outcome {
						close(started)
						<-actx.Done()
						return OutcomeCancelled
					}
				} else {
					r.net.onNext = func() { cancel(); close(started) }
				}
				done := make(chan error, 1)
				go func() { done <- r.trig.Run(ctx, r.host) }()
				<-started
				cancel()
				if err := <-done; err != nil {
					t.Fatalf("Run: %v", err)
				}
				if acks := r.net.ackLog(); len(acks) != 0 {
					t.Errorf("commands sent at shutdown: %q", acks)
				}
				last, _ := r.mon.LastStep()
				wantAct := 0
				if tc.executing {
					wantAct = 1
				}
				if acts, _ := r.host.acts(); len(acts) != wantAct {
					t.Errorf("%d activations, want %d", len(acts), wantAct)
				}
				if last.Result != ResultShutdown || last.Action != pull.ActionNone || last.Ack != pull.AckNone || last.Error != ClassShutdown || last.Delivered != 1 {
					t.Errorf("LastStep %+v", last)
				}
				if s := r.mon.Snapshot().Totals; s.Unacknowledged != 1 {
					t.Errorf("Unacknowledged = %d", s.Unacknowledged)
				}
				if r.host.held() != 0 {
					t.Errorf("host reservation held")
				}
				u := r.pools.Usage()
				if u.Requests != 0 || u.Connections != 0 || u.Clients != 0 || r.net.openLinks() != 0 {
					t.Errorf("after shutdown: usage %+v, open links %d", u, r.net.openLinks())
				}
				r.trig.Close()
				if u := r.pools.Usage(); u != (Usage{}) {
					t.Errorf("after Close: usage %+v", u)
				}
			})
		})
	}
}

// TestShutdownMidPullClosesLocally: the owner stops while the pull waits:
// the connection is closed locally and nothing is sent afterwards.
func TestShutdownMidPull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.net.publish(0, `[]`)
		r.net.rtt = time.Second
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- r.trig.Run(ctx, r.host) }()
		time.Sleep(1500 * time.Millisecond) // dial, inspect, inside the pull
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		if last, ok := r.mon.LastStep(); ok {
			t.Errorf("a stop without a delivery set LastStep: %+v", last)
		}
		if got := r.mon.Snapshot().Totals.Error(ClassShutdown); got != 1 {
			t.Errorf("Errors[shutdown] = %d, want 1", got)
		}
		if r.pools.Usage().Connections != 0 || r.net.openLinks() != 0 {
			t.Errorf("usage %+v, open links %d", r.pools.Usage(), r.net.openLinks())
		}
		if r.net.pending(0) != 1 || len(r.net.ackLog()) != 0 {
			t.Errorf("message consumed: pending %d, acks %q", r.net.pending(0), r.net.ackLog())
		}
	})
}

// TestStepAfterStop: Step with a done context does nothing.
func TestStepAfterStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := r.trig.Step(ctx, r.host); !errors.Is(err, context.Canceled) {
			t.Errorf("Step: %v", err)
		}
		if len(r.ev.take()) != 0 {
			t.Errorf("a stopped step did something")
		}
	})
}

// TestMonitorConcurrentReaders reads the monitor while Run steps (run with
// -race).
func TestMonitorConcurrentReaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 2, 2), PoolLimits{})
		for range 20 {
			r.net.publish(0, `[]`)
			r.net.publish(3, `[]`)
		}
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		wg.Go(func() { _ = r.trig.Run(ctx, r.host) })
		for range 4 {
			wg.Go(func() {
				for range 50 {
					s := r.mon.Snapshot()
					if s.Totals.Visits != s.Steps {
						t.Errorf("totals %d visits, %d steps", s.Totals.Visits, s.Steps)
					}
					_, _ = r.mon.LastStep()
					time.Sleep(time.Millisecond)
				}
			})
		}
		time.Sleep(time.Second)
		cancel()
		wg.Wait()
		if got := r.mon.Snapshot().Totals.Acked; got != 40 {
			t.Errorf("acked %d, want 40", got)
		}
	})
}

// TestNothingPerDormantBinding: installing 256 bindings starts no
// goroutine and dials nothing; an idle owner's visits dial one connection
// per tenant.
func TestNothingPerDormantBinding(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		before := runtime.NumGoroutine()
		r := newRig(t, rtConfig(t, 128, 128), PoolLimits{})
		if after := runtime.NumGoroutine(); after > before {
			t.Errorf("goroutines %d -> %d after Install", before, after)
		}
		if r.net.dialCount() != 0 || r.pools.Usage().Connections != 0 || r.pools.Usage().Clients != 0 {
			t.Errorf("Install dialled or created clients: %+v", r.pools.Usage())
		}
		for range 512 {
			r.step(t)
		}
		if r.net.dialCount() != 2 {
			t.Errorf("dials %d, want 2", r.net.dialCount())
		}
		if after := runtime.NumGoroutine(); after > before {
			t.Errorf("goroutines %d -> %d after 512 steps", before, after)
		}
	})
}
