package ledger_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/trigger"
)

// cfg is a configuration with two bindings, a (index 0) and b (index 1).
var cfg = trigger.Config{Bindings: []trigger.Binding{{ID: "a"}, {ID: "b"}}}

// report is the step report of delivery d of seq on binding index i.
func report(i int, seq, d uint64, action pull.Action, ack pull.AckState) trigger.StepReport {
	return trigger.StepReport{Binding: i, Result: trigger.ResultDelivered, StreamSeq: seq, Delivered: d, Outcome: trigger.OutcomeSuccess, Action: action, Ack: ack}
}

// run records one delivery on which the function ran, then its report.
func run(l *ledger.Ledger, id string, i int, seq, d uint64, action pull.Action, ack pull.AckState) {
	l.Activated(id, seq, d)
	l.ObserveStep(report(i, seq, d, action, ack))
}

func TestCauses(t *testing.T) {
	tests := []struct {
		name  string
		prev  trigger.StepReport
		want  ledger.Cause
		clean bool // Err is nil
	}{
		{"nak asks for it", report(0, 1, 1, pull.ActionNak, pull.AckVerified), ledger.CauseNak, true},
		{"uncertain", report(0, 1, 1, pull.ActionAck, pull.AckUncertain), ledger.CauseUncertain, true},
		{"late receipt", report(0, 1, 1, pull.ActionAck, pull.AckVerifiedLate), ledger.CauseLate, true},
		{"nothing sent", report(0, 1, 1, pull.ActionAck, pull.AckNone), ledger.CauseNotSent, true},
		{"refused", func() trigger.StepReport {
			r := report(0, 1, 1, pull.ActionAck, pull.AckNone)
			r.Error = trigger.ClassBrokerPermission
			return r
		}(), ledger.CauseRefused, true},
		{"shutdown", func() trigger.StepReport {
			r := report(0, 1, 1, pull.ActionNone, pull.AckNone)
			r.Result, r.Error = trigger.ResultShutdown, trigger.ClassShutdown
			return r
		}(), ledger.CauseShutdown, true},
		{"verified ack", report(0, 1, 1, pull.ActionAck, pull.AckVerified), ledger.CauseAfterVerified, false},
		{"verified term", report(0, 1, 1, pull.ActionTerm, pull.AckVerified), ledger.CauseAfterVerified, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := ledger.New(cfg)
			l.Published("a", 1)
			l.Activated("a", 1, 1)
			l.ObserveStep(tc.prev)
			run(l, "a", 0, 1, 2, pull.ActionAck, pull.AckVerified)
			v := l.Verdict([]ledger.ConsumerView{{Binding: "a", AckFloor: 1}})
			want := []ledger.Reexecution{{Key: ledger.Key{Binding: "a", Seq: 1}, Delivered: 2, Cause: tc.want}}
			if diff := cmp.Diff(want, v.Reexecutions); diff != "" {
				t.Errorf("re-executions (-want +got):\n%s", diff)
			}
			if v.ByCause[tc.want] != 1 || v.Executions != 2 || v.Deliveries != 2 {
				t.Errorf("verdict %s", v)
			}
			if err := v.ErrNoLoss(); err != nil {
				t.Errorf("ErrNoLoss = %v", err)
			}
			if err := v.Err(); (err == nil) != tc.clean || (err != nil && !errors.Is(err, ledger.ErrVerdict)) {
				t.Errorf("Err = %v, want clean %v", err, tc.clean)
			}
		})
	}
}

// TestUnreported: an activation without a report (the runtime's process
// died during the step) explains the next one.
func TestUnreported(t *testing.T) {
	l := ledger.New(cfg)
	l.Published("b", 7)
	l.Activated("b", 7, 1)
	run(l, "b", 1, 7, 2, pull.ActionAck, pull.AckVerified)
	v := l.Verdict([]ledger.ConsumerView{{Binding: "b", AckFloor: 7}})
	if len(v.Reexecutions) != 1 || v.Reexecutions[0].Cause != ledger.CauseUnreported || v.Err() != nil {
		t.Errorf("verdict %s; re-executions %+v", v, v.Reexecutions)
	}
}

// TestDeliveryWithoutRun: a delivery on which the function did not run
// (refused by the host, or the owner stopped first) is a delivery, not an
// execution: the next run is the first execution, and the event is not
// lost.
func TestDeliveryWithoutRun(t *testing.T) {
	l := ledger.New(cfg)
	l.Published("a", 3)
	r := report(0, 3, 1, pull.ActionNone, pull.AckNone)
	r.Result, r.Outcome, r.Error = trigger.ResultShutdown, 0, trigger.ClassShutdown
	l.ObserveStep(r)
	v := l.Verdict(nil)
	if v.Deliveries != 1 || v.Executions != 0 || len(v.Lost) != 0 {
		t.Errorf("after the shutdown: %s", v)
	}
	run(l, "a", 0, 3, 2, pull.ActionAck, pull.AckVerified)
	v = l.Verdict([]ledger.ConsumerView{{Binding: "a", AckFloor: 3}})
	if v.Deliveries != 2 || v.Executions != 1 || len(v.Reexecutions) != 0 || v.Err() != nil {
		t.Errorf("after the redelivery: %s", v)
	}
}

// TestSameDeliveryCountAgain: a broker that lost its consumer's state
// delivers an event with the same delivery count again: two deliveries,
// the second a re-execution caused by the first's settlement.
func TestSameDeliveryCountAgain(t *testing.T) {
	l := ledger.New(cfg)
	l.Published("a", 1)
	run(l, "a", 0, 1, 1, pull.ActionAck, pull.AckVerified)
	run(l, "a", 0, 1, 1, pull.ActionAck, pull.AckVerified)
	v := l.Verdict([]ledger.ConsumerView{{Binding: "a", AckFloor: 1}})
	if len(v.AfterVerified) != 1 || v.Deliveries != 2 || v.ErrNoLoss() != nil || v.Err() == nil {
		t.Errorf("verdict %s", v)
	}
}

func TestLossesAndForeign(t *testing.T) {
	l := ledger.New(cfg)
	l.Published("a", 1)
	l.Published("a", 2)
	l.Published("a", 2) // once
	l.Published("b", 3)
	run(l, "a", 0, 1, 1, pull.ActionAck, pull.AckVerified)
	run(l, "b", 1, 9, 1, pull.ActionAck, pull.AckVerified) // never published
	l.ObserveStep(report(5, 1, 1, pull.ActionAck, pull.AckVerified))
	views := []ledger.ConsumerView{{Binding: "a", AckFloor: 1, NumPending: 1}}
	v := l.Verdict(views)
	if diff := cmp.Diff([]ledger.Key{{Binding: "a", Seq: 2}, {Binding: "b", Seq: 3}}, v.Lost); diff != "" {
		t.Errorf("lost (-want +got):\n%s", diff)
	}
	wantUnsettled := []ledger.ConsumerView{{Binding: "a", AckFloor: 1, NumPending: 1}, {Binding: "b"}}
	if diff := cmp.Diff(wantUnsettled, v.Unsettled); diff != "" {
		t.Errorf("unsettled (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]ledger.Key{{Binding: "b", Seq: 9}}, v.Foreign); diff != "" {
		t.Errorf("foreign (-want +got):\n%s", diff)
	}
	if v.Published != 3 || v.BadReports != 1 || v.Reports != 3 {
		t.Errorf("verdict %s, bad reports %d, reports %d", v, v.BadReports, v.Reports)
	}
	var ve *ledger.VerdictError
	if err := v.ErrNoLoss(); !errors.As(err, &ve) || !errors.Is(err, ledger.ErrVerdict) {
		t.Errorf("ErrNoLoss = %v, want a *VerdictError", err)
	}
}

// TestUnsettledViews: a consumer with something pending, something
// awaiting an ack, or a message of its binding left in a work-queue
// stream is unsettled; an ack floor below the last sequence with nothing
// pending, nothing awaiting an ack and nothing left is settled (the
// broker restores a stale floor after a crash: the message was removed
// by its acknowledgement, and nothing moves the floor again).
func TestUnsettledViews(t *testing.T) {
	tests := []struct {
		name string
		view ledger.ConsumerView
		ok   bool
	}{
		{"settled", ledger.ConsumerView{Binding: "a", AckFloor: 2}, true},
		{"floor past the last", ledger.ConsumerView{Binding: "a", AckFloor: 5}, true},
		{"awaiting ack", ledger.ConsumerView{Binding: "a", AckFloor: 2, NumAckPending: 1}, false},
		{"pending", ledger.ConsumerView{Binding: "a", AckFloor: 2, NumPending: 1}, false},
		{"floor below, nothing left", ledger.ConsumerView{Binding: "a", AckFloor: 1}, true},
		{"left in the stream", ledger.ConsumerView{Binding: "a", AckFloor: 2, Left: 1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := ledger.New(cfg)
			l.Published("a", 2)
			run(l, "a", 0, 2, 1, pull.ActionAck, pull.AckVerified)
			if got := l.Verdict([]ledger.ConsumerView{tc.view}).ErrNoLoss() == nil; got != tc.ok {
				t.Errorf("settled = %v, want %v", got, tc.ok)
			}
		})
	}
}

// TestHost: a host wrapped by the ledger reports steps to the ledger and
// to its own observer.
func TestHost(t *testing.T) {
	l := ledger.New(cfg)
	inner := &innerObserver{}
	h := l.Host(inner)
	o, ok := h.(trigger.StepObserver)
	if !ok {
		t.Fatal("the wrapped host is no StepObserver")
	}
	o.ObserveStep(report(0, 1, 1, pull.ActionAck, pull.AckVerified))
	if inner.n != 1 || l.Verdict(nil).Reports != 1 || l.Verdict(nil).Deliveries != 1 {
		t.Errorf("inner saw %d, ledger %s", inner.n, l.Verdict(nil))
	}
}

type innerObserver struct {
	trigger.Host
	n int
}

func (o *innerObserver) ObserveStep(trigger.StepReport) { o.n++ }

// TestWaitSettled polls until every consumer is settled, retrying read
// errors, and gives up with ErrNotSettled when ctx ends.
func TestWaitSettled(t *testing.T) {
	l := ledger.New(cfg)
	l.Published("a", 4)
	reads := 0
	view := func(_ context.Context, b string) (ledger.ConsumerView, error) {
		reads++
		switch {
		case reads == 1:
			return ledger.ConsumerView{}, errors.New("broker down")
		case reads < 4:
			return ledger.ConsumerView{Binding: b, AckFloor: 3, NumAckPending: 1}, nil
		}
		return ledger.ConsumerView{Binding: b, AckFloor: 4}, nil
	}
	views, _, err := l.WaitSettled(t.Context(), time.Millisecond, view)
	if err != nil || reads != 4 {
		t.Fatalf("WaitSettled = %v after %d reads", err, reads)
	}
	if diff := cmp.Diff([]ledger.ConsumerView{{Binding: "a", AckFloor: 4}}, views); diff != "" {
		t.Errorf("views (-want +got):\n%s", diff)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	never := func(_ context.Context, b string) (ledger.ConsumerView, error) {
		return ledger.ConsumerView{Binding: b, NumPending: 1}, nil
	}
	if _, _, err := l.WaitSettled(ctx, time.Millisecond, never); !errors.Is(err, ledger.ErrNotSettled) {
		t.Errorf("WaitSettled = %v, want ErrNotSettled", err)
	}
}

// TestWaitSettledError: when ctx ends first the error says how the reads
// went, and the views are each binding's last one read, so a broker that
// answered with something pending is told apart from one that stopped
// answering.
func TestWaitSettledError(t *testing.T) {
	l := ledger.New(cfg)
	l.Published("a", 4)
	down := errors.New("broker down")
	t.Run("answered, not settled", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		reads := 0
		view := func(_ context.Context, b string) (ledger.ConsumerView, error) {
			reads++
			if reads == 1 {
				return ledger.ConsumerView{}, down
			}
			return ledger.ConsumerView{Binding: b, AckFloor: 3, NumAckPending: 1}, nil
		}
		views, _, err := l.WaitSettled(ctx, time.Millisecond, view)
		var se *ledger.SettleError
		if !errors.As(err, &se) || !errors.Is(err, ledger.ErrNotSettled) || !errors.Is(err, down) {
			t.Fatalf("WaitSettled = %v, want a *SettleError matching ErrNotSettled and the read error", err)
		}
		if se.Reads != reads || se.Failed != 1 || se.First != down || se.LastOK < se.FirstAt {
			t.Errorf("SettleError = %+v after %d reads, want 1 failed, first %v, a later success", se, reads, down)
		}
		if diff := cmp.Diff([]ledger.ConsumerView{{Binding: "a", AckFloor: 3, NumAckPending: 1}}, views); diff != "" {
			t.Errorf("views (-want +got):\n%s", diff)
		}
		if v := l.Verdict(views); len(v.Unsettled) != 1 || len(v.Unread) != 0 {
			t.Errorf("verdict: unsettled %v, unread %v, want one unsettled view, none unread", v.Unsettled, v.Unread)
		}
	})
	t.Run("never answered", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		view := func(context.Context, string) (ledger.ConsumerView, error) { return ledger.ConsumerView{}, down }
		views, _, err := l.WaitSettled(ctx, time.Millisecond, view)
		var se *ledger.SettleError
		if !errors.As(err, &se) || se.LastOK != -1 || se.Failed != se.Reads || se.Reads == 0 {
			t.Fatalf("WaitSettled = %v (%+v), want every read failed and none succeeded", err, se)
		}
		if !strings.Contains(err.Error(), "none succeeded") {
			t.Errorf("message %q does not say no read succeeded", err)
		}
		v := l.Verdict(views)
		if len(views) != 0 || !slices.Equal(v.Unread, []string{"a"}) || !strings.Contains(v.String(), "unsettled: a, no view read") {
			t.Errorf("views %v, unread %v, verdict %q: want binding a unread", views, v.Unread, v.String())
		}
	})
}

// TestHealth: the baseline is met at once when nothing changed, and
// goroutines left running past ctx are reported.
func TestHealth(t *testing.T) {
	pools, err := trigger.NewPools(trigger.PoolConfig{Limits: trigger.DefaultPoolLimits()})
	if err != nil {
		t.Fatal(err)
	}
	defer pools.Close()
	h := ledger.NewHealth(pools)
	if err := h.Wait(t.Context(), time.Millisecond); err != nil {
		t.Fatalf("Wait with nothing changed: %v", err)
	}
	// Sixteen goroutines left running: more than any of the test
	// framework's own that may end meanwhile.
	const left = 16
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range left {
		wg.Go(func() { <-stop })
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	var he *ledger.HealthError
	if err := h.Wait(ctx, time.Millisecond); !errors.As(err, &he) || !errors.Is(err, ledger.ErrUnhealthy) || he.Now.Goroutines <= he.Baseline.Goroutines {
		t.Errorf("Wait with a goroutine left = %v", err)
	}
	close(stop)
	wg.Wait()
	if err := h.Wait(t.Context(), time.Millisecond); err != nil {
		t.Errorf("Wait after it ended: %v", err)
	}
}

// TestKeptAfterAck: a message a work-queue stream still holds though the
// function ran on it, its ACK or TERM was verified and the consumer's ack
// floor is past it is the broker's state: set aside in KeptAfterAck, the
// consumer settled, nothing lost. Any other message left keeps the
// consumer unsettled: one above the floor, one never run, one whose last
// command was uncertain (given up at max_deliver included, where the
// configuration names no max_deliver: see TestGivenUp), a list of
// sequences cut short, or anything pending or awaiting an acknowledgement.
func TestKeptAfterAck(t *testing.T) {
	build := func() *ledger.Ledger {
		l := ledger.New(cfg)
		for seq := uint64(1); seq <= 3; seq++ {
			l.Published("a", seq)
			run(l, "a", 0, seq, 1, pull.ActionAck, pull.AckVerified)
		}
		// Seq 5: given up at max_deliver with its last TERM uncertain;
		// seq 6: its ACK uncertain; seq 7: exhausted, the TERM verified.
		for seq := uint64(5); seq <= 7; seq++ {
			l.Published("a", seq)
		}
		run(l, "a", 0, 5, 1, pull.ActionNak, pull.AckVerified)
		run(l, "a", 0, 5, 2, pull.ActionExhausted, pull.AckUncertain)
		run(l, "a", 0, 6, 1, pull.ActionAck, pull.AckUncertain)
		run(l, "a", 0, 7, 2, pull.ActionExhausted, pull.AckVerified)
		return l
	}
	tests := []struct {
		name     string
		view     ledger.ConsumerView
		wantKept []ledger.Key
	}{
		{"run and below the floor", ledger.ConsumerView{Binding: "a", AckFloor: 3, Left: 2, LeftSeqs: []uint64{1, 3}},
			[]ledger.Key{{Binding: "a", Seq: 1}, {Binding: "a", Seq: 3}}},
		{"above the floor", ledger.ConsumerView{Binding: "a", AckFloor: 2, Left: 1, LeftSeqs: []uint64{3}}, nil},
		{"never run", ledger.ConsumerView{Binding: "a", AckFloor: 4, Left: 1, LeftSeqs: []uint64{4}}, nil}, // a message the ledger never saw run
		{"sequences cut short", ledger.ConsumerView{Binding: "a", AckFloor: 3, Left: 2, LeftSeqs: []uint64{1}}, nil},
		{"something pending", ledger.ConsumerView{Binding: "a", AckFloor: 3, NumPending: 1, Left: 1, LeftSeqs: []uint64{1}}, nil},
		{"awaiting an acknowledgement", ledger.ConsumerView{Binding: "a", AckFloor: 3, NumAckPending: 1, Left: 1, LeftSeqs: []uint64{1}}, nil},
		{"given up, the last TERM uncertain", ledger.ConsumerView{Binding: "a", AckFloor: 7, Left: 1, LeftSeqs: []uint64{5}}, nil},
		{"the ACK uncertain", ledger.ConsumerView{Binding: "a", AckFloor: 7, Left: 1, LeftSeqs: []uint64{6}}, nil},
		{"exhausted, the TERM verified", ledger.ConsumerView{Binding: "a", AckFloor: 7, Left: 2, LeftSeqs: []uint64{1, 7}},
			[]ledger.Key{{Binding: "a", Seq: 1}, {Binding: "a", Seq: 7}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := build()
			v := l.Verdict([]ledger.ConsumerView{tc.view})
			if diff := cmp.Diff(tc.wantKept, v.KeptAfterAck); diff != "" {
				t.Errorf("KeptAfterAck (-want +got):\n%s", diff)
			}
			if settled := len(v.Unsettled) == 0; settled != (tc.wantKept != nil) {
				t.Errorf("unsettled %v, want settled %v", v.Unsettled, tc.wantKept != nil)
			}
			if tc.wantKept != nil && !strings.Contains(v.String(), "kept: a seq 1") {
				t.Errorf("verdict %q does not list the kept messages", v.String())
			}
			// Nothing lost; but where the broker promises that a verified
			// acknowledgement survives, its removal did not.
			if tc.wantKept != nil && (v.ErrNoLoss() != nil || v.Err() == nil) {
				t.Errorf("ErrNoLoss = %v, Err = %v; want nil, then a failure", v.ErrNoLoss(), v.Err())
			}
			if tc.name == "given up, the last TERM uncertain" {
				want := "left: a seq 5, ran 2 times, last delivery 2, last exhausted, ack uncertain"
				if len(v.LeftUnsettled) != 1 || !strings.Contains(v.String(), want) {
					t.Errorf("LeftUnsettled %v, verdict %q: want %q", v.LeftUnsettled, v.String(), want)
				}
			}
			// WaitSettled draws the same line.
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
			defer cancel()
			_, _, err := l.WaitSettled(ctx, time.Millisecond, func(context.Context, string) (ledger.ConsumerView, error) { return tc.view, nil })
			if (err == nil) != (tc.wantKept != nil) {
				t.Errorf("WaitSettled = %v, want settled %v", err, tc.wantKept != nil)
			}
		})
	}
}

// TestDroppedRetries: a message a work-queue stream still holds whose last
// delivery ran and was NAK'd, the NAK verified, below max_deliver, the
// delivery recorded before a kill of the broker, while its consumer holds
// nothing pending and nothing awaiting an acknowledgement, is a retry the
// broker dropped: set aside in DroppedRetries, the consumer settled,
// nothing lost, and Err fails. A NAK not verified, one at max_deliver, a
// later delivery not reported, a report with no run recorded (a late
// one), a delivery after the last kill, a binding with no max_deliver
// known, or a consumer still holding something leaves the message in
// LeftUnsettled and the consumer unsettled.
func TestDroppedRetries(t *testing.T) {
	cfg := trigger.Config{Bindings: []trigger.Binding{{ID: "a", MaxDeliver: 3}, {ID: "z"}}}
	build := func() *ledger.Ledger {
		l := ledger.New(cfg)
		for seq := uint64(1); seq <= 7; seq++ {
			l.Published("a", seq)
		}
		l.Published("z", 1)
		l.Published("q", 1) // a binding outside the configuration
		run(l, "a", 0, 1, 1, pull.ActionNak, pull.AckVerified)
		run(l, "a", 0, 1, 2, pull.ActionNak, pull.AckVerifiedLate)
		run(l, "a", 0, 2, 1, pull.ActionNak, pull.AckUncertain)
		run(l, "a", 0, 3, 3, pull.ActionNak, pull.AckVerified) // at max_deliver: the runtime's own fault
		run(l, "a", 0, 4, 1, pull.ActionNak, pull.AckVerified)
		l.Activated("a", 4, 2) // a later delivery, never reported
		run(l, "a", 0, 5, 1, pull.ActionAck, pull.AckVerified)
		l.ObserveStep(report(0, 6, 1, pull.ActionNak, pull.AckVerified)) // no run recorded
		run(l, "z", 1, 1, 1, pull.ActionNak, pull.AckVerified)
		l.Activated("q", 1, 1)
		l.Killing()
		run(l, "a", 0, 7, 1, pull.ActionNak, pull.AckVerified) // after the kill
		return l
	}
	tests := []struct {
		name        string
		view        ledger.ConsumerView
		wantDropped []uint64
	}{
		{"NAK verified, late", ledger.ConsumerView{Binding: "a", AckFloor: 5, Left: 1, LeftSeqs: []uint64{1}}, []uint64{1}},
		{"beside one kept", ledger.ConsumerView{Binding: "a", AckFloor: 5, Left: 2, LeftSeqs: []uint64{1, 5}}, []uint64{1}},
		{"NAK uncertain", ledger.ConsumerView{Binding: "a", AckFloor: 5, Left: 1, LeftSeqs: []uint64{2}}, nil},
		{"at max_deliver", ledger.ConsumerView{Binding: "a", AckFloor: 5, Left: 1, LeftSeqs: []uint64{3}}, nil},
		{"a later delivery", ledger.ConsumerView{Binding: "a", AckFloor: 5, Left: 1, LeftSeqs: []uint64{4}}, nil},
		{"no run recorded", ledger.ConsumerView{Binding: "a", AckFloor: 5, Left: 1, LeftSeqs: []uint64{6}}, nil},
		{"after the last kill", ledger.ConsumerView{Binding: "a", AckFloor: 5, Left: 1, LeftSeqs: []uint64{7}}, nil},
		{"no max_deliver", ledger.ConsumerView{Binding: "z", AckFloor: 1, Left: 1, LeftSeqs: []uint64{1}}, nil},
		{"awaiting an acknowledgement", ledger.ConsumerView{Binding: "a", AckFloor: 5, NumAckPending: 1, Left: 1, LeftSeqs: []uint64{1}}, nil},
		{"something pending", ledger.ConsumerView{Binding: "a", AckFloor: 5, NumPending: 1, Left: 1, LeftSeqs: []uint64{1}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := build()
			views := []ledger.ConsumerView{tc.view}
			for _, b := range []string{"a", "z", "q"} {
				if b != tc.view.Binding {
					views = append(views, ledger.ConsumerView{Binding: b})
				}
			}
			v := l.Verdict(views)
			if diff := cmp.Diff(tc.wantDropped, seqsOf(v.DroppedRetries)); diff != "" {
				t.Errorf("DroppedRetries (-want +got):\n%s", diff)
			}
			settled := tc.wantDropped != nil
			if (len(v.Unsettled) == 0) != settled {
				t.Errorf("unsettled %v, want settled %v", v.Unsettled, settled)
			}
			if settled {
				want := "dropped: a seq 1, ran 2 times, last delivery 2, last nak, ack verified late"
				if !strings.Contains(v.String(), want) {
					t.Errorf("verdict %q does not contain %q", v.String(), want)
				}
				if v.ErrNoLoss() != nil || v.Err() == nil {
					t.Errorf("ErrNoLoss = %v, Err = %v; want nil, then a failure", v.ErrNoLoss(), v.Err())
				}
			} else if len(v.LeftUnsettled) != 1 || v.LeftUnsettled[0].Key != (ledger.Key{Binding: tc.view.Binding, Seq: tc.view.LeftSeqs[0]}) {
				t.Errorf("LeftUnsettled %v, want the message left", v.LeftUnsettled)
			}
			if err := waitSettled(t, l, views); (err == nil) != settled {
				t.Errorf("WaitSettled = %v, want settled %v", err, settled)
			}
		})
	}
}

// TestGivenUp: a message a work-queue stream still holds whose last
// delivery, the max_deliver-th, ran and was given up on with a TERM whose
// receipt was not verified, at or below the consumer's floor with nothing
// pending or awaiting an acknowledgement, is one the broker gave up on at
// max_deliver: set aside in GivenUp, the consumer settled, and neither
// ErrNoLoss nor Err fails. A TERM not sent counts only when the
// connection failed. Below or past max_deliver, above the floor, with a later
// delivery, with no run recorded, with max_deliver unknown, or with
// something pending, it stays in LeftUnsettled.
func TestGivenUp(t *testing.T) {
	cfg := trigger.Config{Bindings: []trigger.Binding{{ID: "a", MaxDeliver: 2}, {ID: "z"}}}
	build := func() *ledger.Ledger {
		l := ledger.New(cfg)
		for seq := uint64(1); seq <= 9; seq++ {
			l.Published("a", seq)
		}
		l.Published("z", 1)
		run(l, "a", 0, 1, 1, pull.ActionNak, pull.AckVerified)
		run(l, "a", 0, 1, 2, pull.ActionExhausted, pull.AckUncertain)
		run(l, "a", 0, 6, 2, pull.ActionNak, pull.AckUncertain)       // a NAK at max_deliver: the runtime's own fault
		run(l, "a", 0, 2, 1, pull.ActionExhausted, pull.AckUncertain) // below max_deliver: the runtime's own fault
		run(l, "a", 0, 3, 2, pull.ActionExhausted, pull.AckNone)
		l.Activated("a", 3, 3) // a later delivery, never reported
		l.Activated("a", 4, 2)
		cut := report(0, 4, 2, pull.ActionExhausted, pull.AckNone)
		cut.Error = trigger.ClassConnection // the TERM not sent: the connection failed
		l.ObserveStep(cut)
		run(l, "a", 0, 7, 2, pull.ActionExhausted, pull.AckNone)                // not sent, no link error: the runtime's own fault
		l.ObserveStep(report(0, 8, 2, pull.ActionExhausted, pull.AckUncertain)) // no run recorded
		run(l, "a", 0, 9, 3, pull.ActionExhausted, pull.AckUncertain)           // past max_deliver: the runtime's own fault
		run(l, "a", 0, 5, 1, pull.ActionAck, pull.AckVerified)
		run(l, "z", 1, 1, 2, pull.ActionExhausted, pull.AckUncertain)
		return l
	}
	tests := []struct {
		name       string
		view       ledger.ConsumerView
		wantGiven  []uint64
		wantKeptTo bool // also a kept message beside it
	}{
		{"TERM uncertain", ledger.ConsumerView{Binding: "a", AckFloor: 5, Left: 1, LeftSeqs: []uint64{1}}, []uint64{1}, false},
		{"TERM not sent on a failed connection, beside one kept", ledger.ConsumerView{Binding: "a", AckFloor: 5, Left: 2, LeftSeqs: []uint64{4, 5}}, []uint64{4}, true},
		{"below max_deliver", ledger.ConsumerView{Binding: "a", AckFloor: 5, Left: 1, LeftSeqs: []uint64{2}}, nil, false},
		{"a NAK at max_deliver", ledger.ConsumerView{Binding: "a", AckFloor: 6, Left: 1, LeftSeqs: []uint64{6}}, nil, false},
		{"TERM not sent, no link error", ledger.ConsumerView{Binding: "a", AckFloor: 8, Left: 1, LeftSeqs: []uint64{7}}, nil, false},
		{"no run recorded", ledger.ConsumerView{Binding: "a", AckFloor: 8, Left: 1, LeftSeqs: []uint64{8}}, nil, false},
		{"past max_deliver", ledger.ConsumerView{Binding: "a", AckFloor: 9, Left: 1, LeftSeqs: []uint64{9}}, nil, false},
		{"a later delivery", ledger.ConsumerView{Binding: "a", AckFloor: 5, Left: 1, LeftSeqs: []uint64{3}}, nil, false},
		{"above the floor", ledger.ConsumerView{Binding: "a", AckFloor: 0, Left: 1, LeftSeqs: []uint64{1}}, nil, false},
		{"awaiting an acknowledgement", ledger.ConsumerView{Binding: "a", AckFloor: 5, NumAckPending: 1, Left: 1, LeftSeqs: []uint64{1}}, nil, false},
		{"no max_deliver", ledger.ConsumerView{Binding: "z", AckFloor: 1, Left: 1, LeftSeqs: []uint64{1}}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := build()
			other := "z"
			if tc.view.Binding == "z" {
				other = "a"
			}
			views := []ledger.ConsumerView{tc.view, {Binding: other}}
			v := l.Verdict(views)
			if diff := cmp.Diff(tc.wantGiven, seqsOf(v.GivenUp)); diff != "" {
				t.Errorf("GivenUp (-want +got):\n%s", diff)
			}
			settled := tc.wantGiven != nil
			if (len(v.Unsettled) == 0) != settled {
				t.Errorf("unsettled %v, want settled %v", v.Unsettled, settled)
			}
			if tc.wantKeptTo && len(v.KeptAfterAck) != 1 {
				t.Errorf("KeptAfterAck %v, want seq 5", v.KeptAfterAck)
			}
			if settled {
				if !strings.Contains(v.String(), "given up: a seq") {
					t.Errorf("verdict %q does not list it", v.String())
				}
				if err := v.ErrNoLoss(); err != nil {
					t.Errorf("ErrNoLoss = %v", err)
				}
				if err := v.Err(); (err != nil) != tc.wantKeptTo {
					t.Errorf("Err = %v, want failing only for the kept message", err)
				}
			} else if len(v.LeftUnsettled) != 1 {
				t.Errorf("LeftUnsettled %v, want the message left", v.LeftUnsettled)
			}
			if err := waitSettled(t, l, views); (err == nil) != settled {
				t.Errorf("WaitSettled = %v, want settled %v", err, settled)
			}
		})
	}
}

// seqsOf returns the sequences of ms, nil when none.
func seqsOf(ms []ledger.LeftMessage) []uint64 {
	var seqs []uint64
	for _, m := range ms {
		seqs = append(seqs, m.Key.Seq)
	}
	return seqs
}

// waitSettled runs l.WaitSettled for 20 ms over views (a binding without
// one reads as an empty view) and returns its error.
func waitSettled(t *testing.T, l *ledger.Ledger, views []ledger.ConsumerView) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	_, _, err := l.WaitSettled(ctx, time.Millisecond, func(_ context.Context, b string) (ledger.ConsumerView, error) {
		for _, cv := range views {
			if cv.Binding == b {
				return cv, nil
			}
		}
		return ledger.ConsumerView{Binding: b}, nil
	})
	return err
}
