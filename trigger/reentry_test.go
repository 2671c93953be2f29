package trigger

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/pull"
)

// The tests of "Host code and the installation" (host.go): host code runs
// without the installation's lock, so it may call into the installation,
// and wait for another goroutine that does, without deadlock. A deadlock
// fails a test by the test binary's timeout.

// hookHost is a fake host that calls hook once, at the first call of one
// site: "eligible", "credential", "reserve", "activate", "release" or
// "observe". ctx is the context the runtime gave that call, nil for the
// sites given none.
type hookHost struct {
	*fakeHost
	site string
	hook func(ctx context.Context)
	done bool
}

func (h *hookHost) at(site string, ctx context.Context) {
	if site == h.site && !h.done {
		h.done = true
		h.hook(ctx)
	}
}

func (h *hookHost) PublicationEligible(b BindingRef) error {
	h.at("eligible", nil)
	return h.fakeHost.PublicationEligible(b)
}

func (h *hookHost) CredentialCurrent(tenant string) error {
	h.at("credential", nil)
	return h.fakeHost.CredentialCurrent(tenant)
}

func (h *hookHost) ReserveInbound(ctx context.Context, r InboundRequest) (Inbound, error) {
	h.at("reserve", ctx)
	in, err := h.fakeHost.ReserveInbound(ctx, r)
	if in == nil {
		return nil, err
	}
	return &hookInbound{Inbound: in, h: h}, err
}

func (h *hookHost) ObserveStep(StepReport) { h.at("observe", nil) }

type hookInbound struct {
	Inbound
	h *hookHost
}

func (in *hookInbound) Activate(ctx context.Context, a Activation) Result {
	in.h.at("activate", ctx)
	return in.Inbound.Activate(ctx, a)
}

func (in *hookInbound) Release() {
	in.Inbound.Release()
	in.h.at("release", nil)
}

var hookSites = []string{"eligible", "credential", "reserve", "activate", "release", "observe"}

// TestCallbackCallsInstallation: every host callback site, each calling
// one method of its installation (or of the pools), on a step that
// delivers one message. The call returns (no deadlock) with the
// documented answer, the step ends as documented, and so does the next.
func TestCallbackCallsInstallation(t *testing.T) {
	type outcome struct {
		// callErr is the error of the call made from the callback;
		// stepErr is Step's.
		callErr error
		stepErr error
		// ack is the report's acknowledgement.
		ack pull.AckState
		// closed: the installation is closed and the pools hold nothing
		// once Step returned; links are the connections left open.
		closed bool
		links  int
		// nextErr and nextAck are those of a next step with a message.
		nextErr error
		nextAck pull.AckState
	}
	rotation := func(t *testing.T, r *rig) Credential {
		s, err := credential.FromToken("token-of-t0-rotated-0123456789")
		if err != nil {
			t.Fatal(err)
		}
		c := r.creds[0]
		c.Secret = s
		return c
	}
	// open is the outcome of a call that leaves the step and the
	// installation alone.
	open := func(string) outcome {
		return outcome{ack: pull.AckVerified, links: 1, nextAck: pull.AckVerified}
	}
	// closing is the outcome of a Close: the delivery is acknowledged
	// when Close came after the acknowledgement.
	closing := func(site string) outcome {
		// The next Step is refused: its report is the zero one.
		o := outcome{stepErr: ErrClosed, ack: pull.AckNone, closed: true, nextErr: ErrClosed}
		if site == "release" || site == "observe" {
			o.ack = pull.AckVerified
		}
		return o
	}
	cases := []struct {
		name string
		call func(t *testing.T, r *rig, ctx context.Context) error
		want func(site string) outcome
	}{
		{"Close", func(_ *testing.T, r *rig, _ context.Context) error { r.trig.Close(); return nil }, closing},
		{"CloseIdle", func(_ *testing.T, r *rig, _ context.Context) error { r.trig.CloseIdle(); return nil },
			func(string) outcome { return outcome{ack: pull.AckVerified, nextAck: pull.AckVerified} }},
		// With the callback's own context, if it was given one, then with
		// another.
		{"Step", func(_ *testing.T, r *rig, ctx context.Context) error {
			if ctx != nil {
				if _, err := r.trig.Step(ctx, r.host); !errors.Is(err, ErrReentrant) {
					return err
				}
			}
			_, err := r.trig.Step(context.Background(), r.host)
			return err
		}, func(site string) outcome { o := open(site); o.callErr = ErrRunning; return o }},
		{"Run", func(_ *testing.T, r *rig, ctx context.Context) error {
			if ctx != nil {
				if err := r.trig.Run(ctx, r.host); !errors.Is(err, ErrReentrant) {
					return err
				}
			}
			return r.trig.Run(context.Background(), r.host)
		}, func(site string) outcome { o := open(site); o.callErr = ErrRunning; return o }},
		{"Rotate", func(t *testing.T, r *rig, _ context.Context) error { return r.trig.Rotate(rotation(t, r)) }, open},
		{"Snapshot", func(_ *testing.T, r *rig, _ context.Context) error {
			r.mon.Snapshot()
			r.mon.LastStep()
			return nil
		}, open},
		{"Usage", func(_ *testing.T, r *rig, _ context.Context) error {
			r.pools.Usage()
			r.pools.Epoch("orders")
			return nil
		}, open},
		{"Pools.Close", func(_ *testing.T, r *rig, _ context.Context) error { r.pools.Close(); return nil }, closing},
	}
	for _, tc := range cases {
		for _, site := range hookSites {
			t.Run(tc.name+"/"+site, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					r := newRig(t, rtConfig(t, 1), PoolLimits{})
					r.net.publish(0, `[]`)
					var got outcome
					called := 0
					h := &hookHost{fakeHost: r.host, site: site, hook: func(ctx context.Context) {
						called++
						got.callErr = tc.call(t, r, ctx)
					}}
					rep, err := r.trig.Step(t.Context(), h)
					got.stepErr, got.ack = err, rep.Ack
					u := r.pools.Usage()
					got.closed = u == (Usage{})
					got.links = r.net.openLinks()
					r.net.publish(0, `[]`)
					next, err := r.trig.Step(t.Context(), r.host)
					got.nextErr, got.nextAck = err, next.Ack
					want := tc.want(site)
					if called != 1 || r.host.held() != 0 {
						t.Errorf("callback called %d times, %d reservations held: want once, none", called, r.host.held())
					}
					if !errors.Is(got.callErr, want.callErr) || !errors.Is(got.stepErr, want.stepErr) || !errors.Is(got.nextErr, want.nextErr) {
						t.Errorf("errors: call %v, step %v, next step %v; want %v, %v, %v",
							got.callErr, got.stepErr, got.nextErr, want.callErr, want.stepErr, want.nextErr)
					}
					got.callErr, got.stepErr, got.nextErr = want.callErr, want.stepErr, want.nextErr
					if got != want {
						t.Errorf("step %+v, usage %+v: got %+v, want %+v", rep, u, got, want)
					}
				})
			})
		}
	}
}

// TestCallbackCloseIdleClosesAtStepEnd: CloseIdle from inside Activate
// leaves the step its connection (the delivery is acknowledged on it) and
// the step closes it when it ends; the next step dials again.
func TestCallbackCloseIdleClosesAtStepEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.net.publish(0, `[]`)
		r.host.activate = func(context.Context, Activation) Outcome {
			r.trig.CloseIdle()
			if r.net.openLinks() != 1 {
				t.Error("CloseIdle closed the step's connection during the step")
			}
			return OutcomeSuccess
		}
		if rep := r.step(t); rep.Ack != pull.AckVerified {
			t.Errorf("step %+v, want acknowledged", rep)
		}
		if u := r.pools.Usage(); u.Connections != 0 || u.Clients != 0 || r.net.openLinks() != 0 {
			t.Errorf("after the step: usage %+v, open links %d: want every connection closed", u, r.net.openLinks())
		}
		r.host.activate = nil
		r.net.publish(0, `[]`)
		if rep := r.step(t); rep.Ack != pull.AckVerified || r.net.dialCount() != 2 {
			t.Errorf("next step %+v, dials %d: want a new connection", rep, r.net.dialCount())
		}
	})
}

// TestRunCallbackClose: Close from inside Activate or ObserveStep ends Run
// with ErrClosed and nothing held.
func TestRunCallbackClose(t *testing.T) {
	for _, site := range []string{"activate", "observe"} {
		t.Run(site, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rtConfig(t, 1), PoolLimits{})
				r.net.publish(0, `[]`)
				h := &hookHost{fakeHost: r.host, site: site, hook: func(context.Context) { r.trig.Close() }}
				if err := r.trig.Run(t.Context(), h); !errors.Is(err, ErrClosed) {
					t.Errorf("Run: %v, want ErrClosed", err)
				}
				if u := r.pools.Usage(); u != (Usage{}) || r.net.openLinks() != 0 || r.host.held() != 0 {
					t.Errorf("after Run: usage %+v, open links %d, held %d", u, r.net.openLinks(), r.host.held())
				}
			})
		})
	}
}

// TestCloseFromAnotherGoroutineMidActivation: Close from another goroutine
// while the activation runs stops the step (the activation sees its
// context done, nothing is acknowledged) and returns with the
// installation closed: no connection, client or pool reservation left.
// The step returns ErrClosed and releases its reservation.
func TestCloseFromAnotherGoroutineMidActivation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.net.publish(0, `[]`)
		inside := make(chan struct{})
		var cause error
		r.host.activate = func(ctx context.Context, _ Activation) Outcome {
			close(inside)
			<-ctx.Done() // Close's stop
			cause = context.Cause(ctx)
			return OutcomeCancelled
		}
		var wg sync.WaitGroup
		var rep StepReport
		var stepErr error
		wg.Go(func() { rep, stepErr = r.trig.Step(t.Context(), r.host) })
		<-inside
		r.trig.Close()
		if u := r.pools.Usage(); u != (Usage{}) || r.net.openLinks() != 0 {
			t.Errorf("usage %+v, open links %d when Close returned", u, r.net.openLinks())
		}
		wg.Wait()
		if !errors.Is(stepErr, ErrClosed) || !errors.Is(cause, ErrClosed) {
			t.Errorf("Step: %v, activation's cause %v: want ErrClosed", stepErr, cause)
		}
		if rep.Ack != pull.AckNone || len(r.net.ackLog()) != 0 || r.host.held() != 0 {
			t.Errorf("report %+v, acks %v, held %d: want nothing acknowledged, the reservation released", rep, r.net.ackLog(), r.host.held())
		}
	})
}

// TestCallbackWaitsForClose: an activation that waits for another
// goroutine's Close to return (ignoring its context) does not deadlock:
// Close never waits for host code. The step then returns ErrClosed with
// nothing acknowledged and nothing held.
func TestCallbackWaitsForClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.net.publish(0, `[]`)
		r.host.activate = func(context.Context, Activation) Outcome {
			closed := make(chan struct{})
			go func() {
				r.trig.Close()
				close(closed)
			}()
			<-closed
			return OutcomeSuccess
		}
		rep, err := r.trig.Step(t.Context(), r.host)
		if !errors.Is(err, ErrClosed) || rep.Ack != pull.AckNone || len(r.net.ackLog()) != 0 {
			t.Errorf("Step: %v, report %+v, acks %v: want ErrClosed, nothing acknowledged", err, rep, r.net.ackLog())
		}
		if u := r.pools.Usage(); u != (Usage{}) || r.net.openLinks() != 0 || r.host.held() != 0 {
			t.Errorf("after the step: usage %+v, open links %d, held %d", u, r.net.openLinks(), r.host.held())
		}
	})
}

// TestCallbackWaitsForOtherCalls: an activation that waits for another
// goroutine's CloseIdle, Rotate, Snapshot and Step to return does not
// deadlock; that Step is refused with ErrRunning, and the step goes on.
func TestCallbackWaitsForOtherCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.net.publish(0, `[]`)
		s, err := credential.FromToken("token-of-t0-rotated-0123456789")
		if err != nil {
			t.Fatal(err)
		}
		next := r.creds[0]
		next.Secret = s
		var stepErr, rotErr error
		r.host.activate = func(context.Context, Activation) Outcome {
			done := make(chan struct{})
			go func() {
				defer close(done)
				r.trig.CloseIdle()
				rotErr = r.trig.Rotate(next)
				r.mon.Snapshot()
				_, stepErr = r.trig.Step(context.Background(), r.host)
			}()
			<-done
			return OutcomeSuccess
		}
		if rep := r.step(t); rep.Ack != pull.AckVerified {
			t.Errorf("step %+v, want acknowledged", rep)
		}
		if !errors.Is(stepErr, ErrRunning) || rotErr != nil {
			t.Errorf("Step from another goroutine: %v, want ErrRunning; Rotate: %v", stepErr, rotErr)
		}
		if r.net.openLinks() != 0 {
			t.Errorf("%d open links after the step: want CloseIdle done when it ended", r.net.openLinks())
		}
	})
}

// closingHandler is a slog handler that calls into the installation on
// its first record of msg.
type closingHandler struct {
	capture
	msg  string
	call func()
	once sync.Once
}

func (h *closingHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(h.call)
	}
	return h.capture.Handle(ctx, r)
}

func (h *closingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *closingHandler) WithGroup(string) slog.Handler      { return h }

// TestLogHandlerCallsInstallation: the log handler is host code too: one
// that calls Close, or CloseIdle, on the record of the step's dial does
// not deadlock, and the record reaches it.
func TestLogHandlerCallsInstallation(t *testing.T) {
	for _, name := range []string{"Close", "CloseIdle"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := &closingHandler{msg: msgDialled}
				pools, err := NewPools(PoolConfig{Limits: DefaultPoolLimits(), Logger: slog.New(h)})
				if err != nil {
					t.Fatal(err)
				}
				cfg := rtConfig(t, 1)
				trig, _, err := Install(pools, Installation{LogicalID: "orders", Epoch: 1, Config: cfg, Credentials: rtCredentials(t, cfg)})
				if err != nil {
					t.Fatal(err)
				}
				defer trig.Close()
				ev := &events{}
				r := &rig{pools: pools, trig: trig, host: newFakeHost(ev), net: newFakeNet(ev), ev: ev}
				r.net.install(trig)
				h.call = trig.CloseIdle
				if name == "Close" {
					h.call = trig.Close
				}
				_, err = trig.Step(t.Context(), r.host)
				if name == "Close" && !errors.Is(err, ErrClosed) {
					t.Errorf("Step: %v, want ErrClosed", err)
				}
				if name == "CloseIdle" && err != nil {
					t.Errorf("Step: %v", err)
				}
				msgs := []string{}
				for _, rec := range h.take() {
					msgs = append(msgs, rec.Msg)
				}
				if !slices.Contains(msgs, msgDialled) {
					t.Errorf("records %v, want %q", msgs, msgDialled)
				}
				if r.net.openLinks() != 0 {
					t.Errorf("%d open links after the step", r.net.openLinks())
				}
			})
		})
	}
}
