package trigger

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/pull"
)

// observingHost is the fake host with StepObserver: each observation also
// records what the host and the monitor held at that moment.
type observingHost struct {
	*fakeHost
	mon      *Monitor
	reports  []StepReport
	held     []int    // reservations outstanding when observed
	counted  []uint64 // the monitor's step count when observed
	observed []string // the event log's last entry when observed
}

func (h *observingHost) ObserveStep(r StepReport) {
	h.reports = append(h.reports, r)
	h.held = append(h.held, h.fakeHost.held())
	h.counted = append(h.counted, h.mon.Snapshot().Steps)
	log := h.ev.take()
	last := ""
	if len(log) > 0 {
		last = log[len(log)-1]
	}
	h.observed = append(h.observed, last)
}

// TestStepObserver: a host that implements StepObserver sees every step's
// report, exactly as Step returns it, after the step's reservation was
// released and the monitor counted the step; a delivered, an empty and a
// skipped step alike. A host without it is not asked.
func TestStepObserver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		h := &observingHost{fakeHost: r.host, mon: r.mon}
		r.net.publish(0, `["hello"]`)
		var want []StepReport
		for range 2 {
			rep, err := r.trig.Step(t.Context(), h)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, rep)
		}
		r.host.reserve = func(InboundRequest) error { return ErrUnavailable }
		rep, err := r.trig.Step(t.Context(), h)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, rep)

		if diff := cmp.Diff(want, h.reports); diff != "" {
			t.Errorf("observed reports (-want +got):\n%s", diff)
		}
		results := []StepResult{want[0].Result, want[1].Result, want[2].Result}
		if diff := cmp.Diff([]StepResult{ResultDelivered, ResultEmpty, ResultSkipped}, results); diff != "" {
			t.Errorf("results (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]int{0, 0, 0}, h.held); diff != "" {
			t.Errorf("reservations held when observed (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]uint64{1, 2, 3}, h.counted); diff != "" {
			t.Errorf("monitor steps when observed (-want +got):\n%s", diff)
		}
		wantLast := []string{"release b0", "release b0", "reserve b0"}
		if diff := cmp.Diff(wantLast, h.observed); diff != "" {
			t.Errorf("last event before each observation (-want +got):\n%s", diff)
		}
	})
}

// TestStepObserverShutdown: a step the owner stopped during the activation
// is observed too, as a shutdown with nothing sent for its delivery.
func TestStepObserverShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		h := &observingHost{fakeHost: r.host, mon: r.mon}
		r.net.publish(0, `["hello"]`)
		ctx, cancel := context.WithCancel(t.Context())
		r.host.activate = func(context.Context, Activation) Outcome {
			cancel()
			return OutcomeCancelled
		}
		if _, err := r.trig.Step(ctx, h); err == nil {
			t.Fatal("Step after the owner stopped returned no error")
		}
		if len(h.reports) != 1 {
			t.Fatalf("%d reports observed, want 1", len(h.reports))
		}
		got := h.reports[0]
		if got.Result != ResultShutdown || got.StreamSeq != 1 || got.Delivered != 1 || got.Ack != pull.AckNone || got.Action != pull.ActionNone {
			t.Errorf("observed %+v, want a shutdown of delivery 1 with nothing sent", got)
		}
	})
}

// causeError is a host's typed reason for an outcome in these tests.
type causeError struct{ arg int }

func (e *causeError) Error() string { return "test: argument " + strconv.Itoa(e.arg) }

// TestStepReportCause: the host's typed reason for an outcome (Result.Err)
// reaches Step's caller, the StepObserver and the Monitor's LastStep as
// StepReport.Cause (issue 20: refhost's argument error was dropped), the
// same value in each.
func TestStepReportCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		h := &observingHost{fakeHost: r.host, mon: r.mon}
		cause := &causeError{arg: 1}
		r.host.activate = func(context.Context, Activation) Outcome { return OutcomeInvalidArguments }
		r.host.cause = cause
		r.net.publish(0, `[1]`)
		rep, err := r.trig.Step(t.Context(), h)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Outcome != OutcomeInvalidArguments || rep.Action != pull.ActionTerm {
			t.Fatalf("outcome %v, action %v; want invalid arguments, term", rep.Outcome, rep.Action)
		}
		var ce *causeError
		if !errors.As(rep.Cause, &ce) || ce.arg != 1 {
			t.Errorf("Step's report Cause = %v, want the host's *causeError", rep.Cause)
		}
		if len(h.reports) != 1 || h.reports[0].Cause != error(cause) {
			t.Errorf("observed reports %v, want one with the host's cause", h.reports)
		}
		if last, ok := r.mon.LastStep(); !ok || last != rep {
			t.Errorf("LastStep = %+v, %v; want Step's report %+v", last, ok, rep)
		}
	})
}
