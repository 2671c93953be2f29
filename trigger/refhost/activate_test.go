package refhost_test

import (
	stdcmp "cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// waitCtx returns ctx.Err() when ctx is done.
func waitCtx(ctx context.Context, _ refhost.Call) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestActivateOutcomes runs one activation per case under a fake clock
// and checks its outcome, whether the function ran, and that everything
// reserved is returned.
func TestActivateOutcomes(t *testing.T) {
	const ok = `[7,"widget"]`
	cases := []struct {
		name          string
		fn            refhost.Func
		beforeReserve func(*refhost.Host)
		afterReserve  func(*refhost.Host)
		max           int // reservation; 0 means 64
		payload       string
		edit          func(*trigger.Activation)
		want          trigger.Outcome
		called        bool
	}{
		{name: "success", payload: ok, want: trigger.OutcomeSuccess, called: true},
		{name: "no payload limit slack", max: len(ok), payload: ok, want: trigger.OutcomeSuccess, called: true},
		{name: "declared failure", payload: ok, want: trigger.OutcomeDeclaredFailure, called: true,
			fn: func(context.Context, refhost.Call) error { return &refhost.ApplicationError{Code: "out-of-stock"} }},
		{name: "wrapped declared failure", payload: ok, want: trigger.OutcomeDeclaredFailure, called: true,
			fn: func(context.Context, refhost.Call) error {
				return fmt.Errorf("placing: %w", &refhost.ApplicationError{Code: "out-of-stock"})
			}},
		{name: "undeclared failure code", payload: ok, want: trigger.OutcomePlatformFailure, called: true,
			fn: func(context.Context, refhost.Call) error { return &refhost.ApplicationError{Code: "other"} }},
		{name: "plain error", payload: ok, want: trigger.OutcomePlatformFailure, called: true,
			fn: func(context.Context, refhost.Call) error { return errors.New("disk full") }},
		{name: "panic", payload: ok, want: trigger.OutcomePlatformFailure, called: true,
			fn: func(context.Context, refhost.Call) error { panic("boom") }},
		{name: "own deadline error before the deadline", payload: ok, want: trigger.OutcomePlatformFailure, called: true,
			fn: func(context.Context, refhost.Call) error { return context.DeadlineExceeded }},
		{name: "missing argument", payload: `[7]`, want: trigger.OutcomeInvalidArguments},
		{name: "wrong argument type", payload: `["7","widget"]`, want: trigger.OutcomeInvalidArguments},
		{name: "argument out of range", payload: `[4294967296,"widget"]`, want: trigger.OutcomeInvalidArguments},
		{name: "not json", payload: `place 7 widget`, want: trigger.OutcomeInvalidArguments},
		{name: "empty payload", payload: ``, want: trigger.OutcomeInvalidArguments},
		{name: "payload over the reservation", max: len(ok) - 1, payload: ok, want: trigger.OutcomePlatformFailure},
		{name: "route to a revision without the contract", payload: ok, want: trigger.OutcomeIncompatibleContract,
			beforeReserve: func(h *refhost.Host) { _, _ = h.SetRoute("orders", "", "r-empty") }},
		{name: "publication revoked after reservation", payload: ok, want: trigger.OutcomePermissionRejected,
			afterReserve: func(h *refhost.Host) { h.RevokePublication(testPublication()) }},
		{name: "principal revoked", payload: ok, want: trigger.OutcomeAuthenticationRejected,
			afterReserve: func(h *refhost.Host) { h.RevokePrincipal("svc-orders") }},
		{name: "authentication before permission", payload: ok, want: trigger.OutcomeAuthenticationRejected,
			afterReserve: func(h *refhost.Host) {
				h.RevokePrincipal("svc-orders")
				h.RevokePublication(testPublication())
			}},
		{name: "other principal revoked", payload: ok, want: trigger.OutcomeSuccess, called: true,
			afterReserve: func(h *refhost.Host) { h.RevokePrincipal("svc-billing") }},
		{name: "credential revoked does not stop activation", payload: ok, want: trigger.OutcomeSuccess, called: true,
			afterReserve: func(h *refhost.Host) { h.RevokeCredential("t1") }},
		{name: "deadline passed before start", payload: ok, want: trigger.OutcomeTimeout,
			edit: func(a *trigger.Activation) { a.Deadline = time.Now().Add(-time.Millisecond) }},
		{name: "zero deadline", payload: ok, want: trigger.OutcomeTimeout,
			edit: func(a *trigger.Activation) { a.Deadline = time.Time{} }},
		{name: "deadline while running", payload: ok, want: trigger.OutcomeTimeout, called: true, fn: waitCtx},
		{name: "budget before deadline", payload: ok, want: trigger.OutcomeTimeout, called: true, fn: waitCtx,
			edit: func(a *trigger.Activation) { a.Budget = 10 * time.Millisecond }},
		{name: "zero budget", payload: ok, want: trigger.OutcomeSuccess, called: true,
			edit: func(a *trigger.Activation) { a.Budget = 0 }},
		{name: "error after the deadline", payload: ok, want: trigger.OutcomeTimeout, called: true,
			fn: func(ctx context.Context, _ refhost.Call) error {
				<-ctx.Done()
				return errors.New("gave up")
			}},
		{name: "success just before the deadline", payload: ok, want: trigger.OutcomeSuccess, called: true,
			fn: func(context.Context, refhost.Call) error {
				time.Sleep(time.Second - time.Nanosecond)
				return nil
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				fn := tc.fn
				if fn == nil {
					fn = func(context.Context, refhost.Call) error { return nil }
				}
				h := newHost(t, defaultConfig(), func(ctx context.Context, c refhost.Call) error {
					calls.Add(1)
					return fn(ctx, c)
				})
				if tc.beforeReserve != nil {
					tc.beforeReserve(h)
				}
				in := reserve(t, h, stdcmp.Or(tc.max, 64))
				if tc.afterReserve != nil {
					tc.afterReserve(h)
				}
				a := activation(in, tc.payload, time.Second)
				if tc.edit != nil {
					tc.edit(&a)
				}
				got := in.Activate(context.Background(), a)
				in.Release()
				if got.Outcome != tc.want {
					t.Errorf("Activate = %v, want %v", got.Outcome, tc.want)
				}
				if ran := calls.Load() == 1; ran != tc.called {
					t.Errorf("function ran: %v, want %v", ran, tc.called)
				}
				if err := h.WaitIdle(context.Background()); err != nil {
					t.Fatal(err)
				}
				checkDrained(t, h)
				if s := h.Stats(); s.Outcome(tc.want) != 1 || s.Activations != 1 || s.Misuse != 0 {
					t.Errorf("Stats = %+v, want one %v", s, tc.want)
				}
			})
		})
	}
}

// TestActivateCancelled: the owner's context ending is a cancellation,
// both before the function starts and while it runs.
func TestActivateCancelled(t *testing.T) {
	t.Run("before start", func(t *testing.T) {
		h := newHost(t, defaultConfig(), func(context.Context, refhost.Call) error {
			t.Error("function ran")
			return nil
		})
		in := reserve(t, h, 64)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if got := in.Activate(ctx, activation(in, `[1,"a"]`, time.Minute)); got.Outcome != trigger.OutcomeCancelled {
			t.Errorf("Activate = %v, want cancelled", got.Outcome)
		}
		in.Release()
		checkDrained(t, h)
	})
	t.Run("while running", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			h := newHost(t, defaultConfig(), func(fctx context.Context, _ refhost.Call) error {
				cancel()
				<-fctx.Done()
				return fctx.Err()
			})
			in := reserve(t, h, 64)
			if got := in.Activate(ctx, activation(in, `[1,"a"]`, time.Minute)); got.Outcome != trigger.OutcomeCancelled {
				t.Errorf("Activate = %v, want cancelled", got.Outcome)
			}
			in.Release()
			if err := h.WaitIdle(context.Background()); err != nil {
				t.Fatal(err)
			}
			checkDrained(t, h)
		})
	})
}

// TestActivateOverrun: a function that ignores its context. Activate
// returns at the deadline; the slot and input stay held, even after
// Release, until the function returns; WaitIdle waits for it.
func TestActivateOverrun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		unblock := make(chan struct{})
		h := newHost(t, defaultConfig(), func(context.Context, refhost.Call) error {
			<-unblock
			return nil
		})
		in := reserve(t, h, 100)
		start := time.Now()
		got := in.Activate(context.Background(), activation(in, `[1,"a"]`, time.Second))
		if got.Outcome != trigger.OutcomeTimeout || time.Since(start) != time.Second {
			t.Errorf("Activate = %v after %v, want timeout after 1s", got.Outcome, time.Since(start))
		}
		in.Release()
		if s := h.Stats(); s.Slots != 1 || s.InputBytes != 100 || s.Running != 1 || s.Overran != 1 || s.Releases != 1 {
			t.Errorf("Stats while overrunning = %+v, want 1 slot, 100 bytes, 1 running, 1 overran", s)
		}
		short, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := h.WaitIdle(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("WaitIdle while stuck = %v, want DeadlineExceeded", err)
		}
		close(unblock)
		if err := h.WaitIdle(context.Background()); err != nil {
			t.Fatal(err)
		}
		checkDrained(t, h)
	})
}

// TestActivateOverrunBeforeRelease: the function returns after Activate
// but before Release; Release then frees at once.
func TestActivateOverrunBeforeRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		unblock := make(chan struct{})
		h := newHost(t, defaultConfig(), func(context.Context, refhost.Call) error {
			<-unblock
			return nil
		})
		in := reserve(t, h, 100)
		if got := in.Activate(context.Background(), activation(in, `[1,"a"]`, time.Second)); got.Outcome != trigger.OutcomeTimeout {
			t.Errorf("Activate = %v, want timeout", got.Outcome)
		}
		close(unblock)
		if err := h.WaitIdle(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s := h.Stats(); s.Slots != 1 || s.Running != 0 {
			t.Errorf("Stats before Release = %+v, want the slot still held", s)
		}
		in.Release()
		checkDrained(t, h)
	})
}

// TestInboundMisuse: repeated and inconsistent calls run nothing, count
// as misuse and never unbalance the accounting.
func TestInboundMisuse(t *testing.T) {
	var calls atomic.Int32
	h := newHost(t, defaultConfig(), func(context.Context, refhost.Call) error {
		calls.Add(1)
		return nil
	})
	cases := []struct {
		name string
		run  func(trigger.Inbound) trigger.Outcome
	}{
		{"second activate", func(in trigger.Inbound) trigger.Outcome {
			in.Activate(context.Background(), activation(in, `[1,"a"]`, time.Minute))
			return in.Activate(context.Background(), activation(in, `[1,"a"]`, time.Minute)).Outcome
		}},
		{"activate after release", func(in trigger.Inbound) trigger.Outcome {
			in.Release()
			return in.Activate(context.Background(), activation(in, `[1,"a"]`, time.Minute)).Outcome
		}},
		{"other binding", func(in trigger.Inbound) trigger.Outcome {
			a := activation(in, `[1,"a"]`, time.Minute)
			a.Binding.Index = 3
			return in.Activate(context.Background(), a).Outcome
		}},
		{"other generation", func(in trigger.Inbound) trigger.Outcome {
			a := activation(in, `[1,"a"]`, time.Minute)
			a.RouteGeneration++
			return in.Activate(context.Background(), a).Outcome
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := reserve(t, h, 64)
			if got := tc.run(in); got != trigger.OutcomePlatformFailure {
				t.Errorf("misused Activate = %v, want platform failure", got)
			}
			in.Release()
			in.Release()
			checkDrained(t, h)
		})
	}
	s := h.Stats()
	// Misuse: 4 activations, and 5 repeated releases (the case that
	// releases first repeats twice).
	if calls.Load() != 1 || s.Misuse != 9 || s.Releases != 4 {
		t.Errorf("calls %d, Stats %+v; want 1 call, 9 misuses, 4 releases", calls.Load(), s)
	}
}

// TestCallIdentity: the function sees the activation's identity and its
// trace link, the pinned revision and generation and the decoded
// arguments.
func TestCallIdentity(t *testing.T) {
	var got refhost.Call
	h := newHost(t, defaultConfig(), func(_ context.Context, c refhost.Call) error {
		got = c
		return nil
	})
	in := reserve(t, h, 64)
	a := activation(in, `[ 7 , "wid\u0067et" ]`, time.Minute)
	link := trigger.TraceLink{TraceID: trigger.TraceID{0x4b, 0xf9, 0x2f}, SpanID: trigger.SpanID{0x00, 0xf0, 0x67}, Flags: 1}
	a.Link = link
	if r := in.Activate(context.Background(), a); r.Outcome != trigger.OutcomeSuccess {
		t.Fatalf("Activate = %v", r.Outcome)
	}
	in.Release()
	want := refhost.Call{
		Args:            []any{uint32(7), "widget"},
		Principal:       a.Principal,
		ActivationID:    a.ActivationID,
		Trace:           a.Trace,
		Link:            link,
		Binding:         testBinding(),
		Revision:        "r1",
		RouteGeneration: 1,
		StreamSeq:       42,
		Delivered:       1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Call (-want +got):\n%s", diff)
	}
}

// TestConcurrentActivations drives one host from several goroutines:
// admission is never exceeded and everything returns to zero.
func TestConcurrentActivations(t *testing.T) {
	const workers, rounds, slots = 8, 50, 3
	var active, peak atomic.Int32
	h := newHost(t, refhost.Config{MaxActivations: slots, MaxInputBytes: slots * 64}, func(context.Context, refhost.Call) error {
		n := active.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		active.Add(-1)
		return nil
	})
	var wg sync.WaitGroup
	var unavailable atomic.Int32
	for range workers {
		wg.Go(func() {
			for range rounds {
				in, err := h.ReserveInbound(context.Background(), trigger.InboundRequest{Binding: testBinding(), MaxInputBytes: 64})
				if errors.Is(err, trigger.ErrUnavailable) {
					unavailable.Add(1)
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				in.Activate(context.Background(), activation(in, `[1,"a"]`, time.Minute))
				in.Release()
			}
		})
	}
	wg.Wait()
	if err := h.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkDrained(t, h)
	s := h.Stats()
	if peak.Load() > slots || s.Reservations+s.Unavailable != workers*rounds || int(s.Unavailable) != int(unavailable.Load()) {
		t.Errorf("peak %d, Stats %+v", peak.Load(), s)
	}
	if s.Outcome(trigger.OutcomeSuccess) != s.Reservations {
		t.Errorf("%d successes for %d reservations", s.Outcome(trigger.OutcomeSuccess), s.Reservations)
	}
}

// TestActivateCause: the Result's Err is the typed reason where the host
// has one (issue 20: the argument error was dropped), and never the
// payload or the function's own text.
func TestActivateCause(t *testing.T) {
	const ok = `[7,"widget"]`
	succeed := func(context.Context, refhost.Call) error { return nil }
	nothing := func(*refhost.Host) {}
	cases := []struct {
		name         string
		fn           refhost.Func
		afterReserve func(*refhost.Host)
		payload      string
		want         trigger.Outcome
		cause        error
	}{
		{name: "success", payload: ok, want: trigger.OutcomeSuccess, fn: succeed, afterReserve: nothing},
		{name: "wrong argument type", payload: `["SECRET-7","widget"]`, want: trigger.OutcomeInvalidArguments,
			fn: succeed, afterReserve: nothing, cause: &refhost.ArgumentError{Arg: 0, Offset: 1, Rule: refhost.RuleWrongType}},
		{name: "missing argument", payload: `[7]`, want: trigger.OutcomeInvalidArguments,
			fn: succeed, afterReserve: nothing, cause: &refhost.ArgumentError{Arg: -1, Offset: 2, Rule: refhost.RuleArgCount}},
		{name: "not json", payload: `SECRET`, want: trigger.OutcomeInvalidArguments,
			fn: succeed, afterReserve: nothing, cause: &refhost.ArgumentError{Arg: -1, Offset: 0, Rule: refhost.RuleSyntax}},
		{name: "declared failure without the function's text", payload: ok, want: trigger.OutcomeDeclaredFailure,
			fn: func(context.Context, refhost.Call) error {
				return fmt.Errorf("placing SECRET: %w", &refhost.ApplicationError{Code: "out-of-stock"})
			},
			afterReserve: nothing, cause: &refhost.ApplicationError{Code: "out-of-stock"}},
		{name: "plain error", payload: ok, want: trigger.OutcomePlatformFailure,
			fn: func(context.Context, refhost.Call) error { return errors.New("SECRET") }, afterReserve: nothing},
		{name: "publication revoked", payload: ok, want: trigger.OutcomePermissionRejected, fn: succeed,
			afterReserve: func(h *refhost.Host) { h.RevokePublication(testPublication()) },
			cause:        refhost.ErrNotPublished},
		{name: "principal revoked", payload: ok, want: trigger.OutcomeAuthenticationRejected, fn: succeed,
			afterReserve: func(h *refhost.Host) { h.RevokePrincipal("svc-orders") }},
	}
	// Errors are equal when they are the same value or deeply equal
	// values (two *ArgumentError with the same fields).
	sameError := cmp.Comparer(func(a, b error) bool { return reflect.DeepEqual(a, b) })
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, defaultConfig(), tc.fn)
			in := reserve(t, h, 64)
			tc.afterReserve(h)
			got := in.Activate(context.Background(), activation(in, tc.payload, time.Minute))
			in.Release()
			if got.Outcome != tc.want {
				t.Errorf("Activate = %v, want %v", got.Outcome, tc.want)
			}
			if diff := cmp.Diff(tc.cause, got.Err, sameError); diff != "" {
				t.Errorf("Err (-want +got):\n%s", diff)
			}
			if strings.Contains(fmt.Sprint(got.Err), "SECRET") {
				t.Errorf("Err %q holds the payload or the function's text", got.Err)
			}
			if err := h.WaitIdle(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}
