package trigger

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// TestGoid: goid reads a non-zero ID, the same on one goroutine and
// different on another.
func TestGoid(t *testing.T) {
	a, b := goid(), goid()
	if a == 0 || a != b {
		t.Fatalf("goid on one goroutine: %d then %d", a, b)
	}
	other := make(chan uint64)
	go func() { other <- goid() }()
	if o := <-other; o == 0 || o == a {
		t.Errorf("goid of another goroutine %d, this one %d", o, a)
	}
}

// reentrantObserver is a host whose ObserveStep runs a hook.
type reentrantObserver struct {
	*fakeHost
	observe func(StepReport)
}

func (o *reentrantObserver) ObserveStep(r StepReport) { o.observe(r) }

// TestReentrantStepAndRun: Step and Run called from inside the step's own
// activation return ErrReentrant at once instead of waiting for the lock
// the step holds; the outer step completes.
func TestReentrantStepAndRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.net.publish(0, `[]`)
		var stepErr, runErr error
		r.host.activate = func(ctx context.Context, _ Activation) Outcome {
			_, stepErr = r.trig.Step(ctx, r.host)
			runErr = r.trig.Run(ctx, r.host)
			return OutcomeSuccess
		}
		rep := r.step(t)
		if !errors.Is(stepErr, ErrReentrant) || !errors.Is(runErr, ErrReentrant) {
			t.Errorf("Step from inside Activate: %v; Run: %v; want ErrReentrant", stepErr, runErr)
		}
		if rep.Result != ResultDelivered || rep.Ack != AckVerified {
			t.Errorf("outer step %+v, want delivered and acknowledged", rep)
		}
		// After the step the same goroutine steps again normally.
		if _, err := r.trig.Step(t.Context(), r.host); err != nil {
			t.Errorf("Step after the step: %v", err)
		}
	})
}

// TestReentrantCloseIdle: CloseIdle from inside Activate returns at once;
// the step acknowledges on its connection and closes it when it ends.
func TestReentrantCloseIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.net.publish(0, `[]`)
		r.host.activate = func(context.Context, Activation) Outcome {
			r.trig.CloseIdle()
			return OutcomeSuccess
		}
		rep := r.step(t)
		if rep.Ack != AckVerified {
			t.Errorf("step %+v, want acknowledged", rep)
		}
		if u := r.pools.Usage(); u.Connections != 0 || u.Clients != 0 || r.net.openLinks() != 0 {
			t.Errorf("after the step: usage %+v, open links %d: want every connection closed", u, r.net.openLinks())
		}
		r.host.activate = nil
		r.net.publish(0, `[]`)
		if rep := r.step(t); rep.Ack != AckVerified || r.net.dialCount() != 2 {
			t.Errorf("next step %+v, dials %d: want a new connection", rep, r.net.dialCount())
		}
	})
}

// TestReentrantClose: Close from inside Activate, or from ObserveStep,
// returns at once; it stops the step (nothing is acknowledged after
// Activate) and the step closes the installation when it ends: Step
// returns ErrClosed, the pools hold nothing, and so does Run.
func TestReentrantClose(t *testing.T) {
	cases := []struct {
		name  string
		setup func(r *rig) Host
		// wantAck is the acknowledgement of the delivery: none when Close
		// stopped the step before it, verified when Close came after.
		wantAck AckState
	}{
		{"activate", func(r *rig) Host {
			r.host.activate = func(context.Context, Activation) Outcome {
				r.trig.Close()
				return OutcomeSuccess
			}
			return r.host
		}, AckNone},
		{"observe step", func(r *rig) Host {
			return &reentrantObserver{fakeHost: r.host, observe: func(StepReport) { r.trig.Close() }}
		}, AckVerified},
	}
	for _, tc := range cases {
		t.Run(tc.name+" step", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rtConfig(t, 1), PoolLimits{})
				r.net.publish(0, `[]`)
				host := tc.setup(r)
				rep, err := r.trig.Step(t.Context(), host)
				if tc.wantAck == AckNone && !errors.Is(err, ErrClosed) {
					t.Errorf("Step: %v, want ErrClosed", err)
				}
				if rep.Ack != tc.wantAck {
					t.Errorf("report %+v, want ack %v", rep, tc.wantAck)
				}
				if u := r.pools.Usage(); u != (Usage{}) || r.net.openLinks() != 0 || r.host.held() != 0 {
					t.Errorf("after the step: usage %+v, open links %d, held %d: want everything released", u, r.net.openLinks(), r.host.held())
				}
				if _, err := r.trig.Step(t.Context(), host); !errors.Is(err, ErrClosed) {
					t.Errorf("Step after Close: %v, want ErrClosed", err)
				}
			})
		})
		t.Run(tc.name+" run", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rtConfig(t, 1), PoolLimits{})
				r.net.publish(0, `[]`)
				host := tc.setup(r)
				if err := r.trig.Run(t.Context(), host); !errors.Is(err, ErrClosed) {
					t.Errorf("Run: %v, want ErrClosed", err)
				}
				if u := r.pools.Usage(); u != (Usage{}) || r.net.openLinks() != 0 {
					t.Errorf("after Run: usage %+v, open links %d", u, r.net.openLinks())
				}
			})
		})
	}
}

// TestCloseFromAnotherGoroutineWaits: Close from another goroutine while
// the activation runs is not taken for a callback's own call: it stops the
// step (the activation sees its context done) and returns only once the
// step ended and the installation is closed.
func TestCloseFromAnotherGoroutineWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.net.publish(0, `[]`)
		inside := make(chan struct{})
		var returned atomic.Bool
		r.host.activate = func(ctx context.Context, _ Activation) Outcome {
			close(inside)
			<-ctx.Done() // Close's stop
			returned.Store(true)
			return OutcomeCancelled
		}
		var wg sync.WaitGroup
		var stepErr error
		wg.Go(func() { _, stepErr = r.trig.Step(t.Context(), r.host) })
		<-inside
		r.trig.Close()
		if !returned.Load() {
			t.Error("Close returned before the step's activation did")
		}
		if u := r.pools.Usage(); u != (Usage{}) || r.net.openLinks() != 0 {
			t.Errorf("usage %+v, open links %d when Close returned", u, r.net.openLinks())
		}
		wg.Wait()
		if !errors.Is(stepErr, ErrClosed) {
			t.Errorf("Step: %v, want ErrClosed", stepErr)
		}
	})
}
