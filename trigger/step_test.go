package trigger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/pull"
)

// ignoreAt drops the step's start time from report comparisons.
var ignoreAt = cmpopts.IgnoreFields(StepReport{}, "At")

// TestStepFlow pins the order of one delivering step: the checks before
// any network, the host's reservation, the dial, consumer info, the checks
// again, the pull, the activation, the credential again, the
// acknowledgement and the release.
func TestStepFlow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.net.publish(0, `["hello"]`)
		rep := r.step(t)
		want := []string{
			"eligible b0", "credential t0", "reserve b0", "dial t0", "inspect b0",
			"eligible b0", "credential t0", "next b0", "activate b0",
			"credential t0", "ack b0 +ACK", "release b0",
		}
		if diff := cmp.Diff(want, r.ev.take()); diff != "" {
			t.Errorf("flow (-want +got):\n%s", diff)
		}
		wantRep := StepReport{
			Step: 1, Epoch: 1, Binding: 0, Result: ResultDelivered,
			StreamSeq: 1, Delivered: 1, RouteGeneration: 1,
			Outcome: OutcomeSuccess, Action: pull.ActionAck, Ack: pull.AckVerified,
		}
		if diff := cmp.Diff(wantRep, rep, ignoreAt); diff != "" {
			t.Errorf("report (-want +got):\n%s", diff)
		}
		last, ok := r.mon.LastStep()
		if diff := cmp.Diff(wantRep, last, ignoreAt); !ok || diff != "" {
			t.Errorf("LastStep ok=%v (-want +got):\n%s", ok, diff)
		}
		acts, payloads := r.host.acts()
		if diff := cmp.Diff([]string{`["hello"]`}, payloads); diff != "" {
			t.Errorf("payloads (-want +got):\n%s", diff)
		}
		a := acts[0]
		wantP := Principal{Subject: "svc:orders", Tenant: "t0", Binding: "b0"}
		if diff := cmp.Diff(wantP, a.Principal); diff != "" {
			t.Errorf("principal (-want +got):\n%s", diff)
		}
		if a.ActivationID == (ActivationID{}) || a.Trace == (TraceID{}) || a.ActivationID == ActivationID(a.Trace) {
			t.Errorf("activation id %v and trace %v not fresh", a.ActivationID, a.Trace)
		}
		if a.RouteGeneration != 1 || a.StreamSeq != 1 || a.Delivered != 1 || a.MaxDeliver != 5 || a.Budget != 1500*time.Millisecond {
			t.Errorf("activation %+v", a)
		}
		if r.host.held() != 0 {
			t.Errorf("host reservations held after the step: %d", r.host.held())
		}
	})
}

// TestActivationIDsFresh: every activation gets its own ID and trace.
func TestActivationIDsFresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		for range 3 {
			r.net.publish(0, `[]`)
		}
		for range 3 {
			r.step(t)
		}
		acts, _ := r.host.acts()
		seen := map[[iDLen]byte]bool{}
		for _, a := range acts {
			for _, id := range [][iDLen]byte{a.ActivationID, a.Trace} {
				if seen[id] {
					t.Errorf("id %x repeated", id)
				}
				seen[id] = true
			}
		}
		if len(seen) != 6 {
			t.Errorf("%d distinct ids, want 6", len(seen))
		}
	})
}

// TestStepOutcomes runs one delivery per outcome, at the first delivery
// and at the last, and checks the command the broker received, the report
// and the counts.
func TestStepOutcomes(t *testing.T) {
	type want struct {
		ack    string
		action pull.Action
	}
	tests := []struct {
		outcome     Outcome
		first, last want
	}{
		{OutcomeSuccess, want{"+ACK", pull.ActionAck}, want{"+ACK", pull.ActionAck}},
		{OutcomeDeclaredFailure, want{"+TERM declared failure", pull.ActionTerm}, want{"+TERM declared failure", pull.ActionTerm}},
		{OutcomeInvalidArguments, want{"+TERM invalid arguments", pull.ActionTerm}, want{"+TERM invalid arguments", pull.ActionTerm}},
		{OutcomeIncompatibleContract, want{"+TERM incompatible contract", pull.ActionTerm}, want{"+TERM incompatible contract", pull.ActionTerm}},
		{OutcomeAuthenticationRejected, want{"+TERM authentication rejected", pull.ActionTerm}, want{"+TERM authentication rejected", pull.ActionTerm}},
		{OutcomePermissionRejected, want{"+TERM permission rejected", pull.ActionTerm}, want{"+TERM permission rejected", pull.ActionTerm}},
		{OutcomeTimeout, want{`-NAK {"delay":500000000}`, pull.ActionNak}, want{"+TERM exhausted", pull.ActionExhausted}},
		{OutcomeCancelled, want{`-NAK {"delay":500000000}`, pull.ActionNak}, want{"+TERM exhausted", pull.ActionExhausted}},
		{OutcomePlatformFailure, want{`-NAK {"delay":500000000}`, pull.ActionNak}, want{"+TERM exhausted", pull.ActionExhausted}},
	}
	for _, tc := range tests {
		for _, at := range []struct {
			name  string
			prior uint64
			want  want
		}{{"first", 0, tc.first}, {"last", 1, tc.last}} {
			t.Run(tc.outcome.String()+"/"+at.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					cfg := rtConfig(t, 1)
					cfg.Bindings[0].MaxDeliver = 2
					r := newRig(t, cfg, PoolLimits{})
					r.host.activate = func(context.Context, Activation) Outcome { return tc.outcome }
					r.net.publish(0, `[]`)
					r.net.queues[0][0].delivered = at.prior
					rep := r.step(t)
					want := StepReport{
						Step: 1, Epoch: 1, Result: ResultDelivered, StreamSeq: 1, Delivered: at.prior + 1,
						RouteGeneration: 1, Outcome: tc.outcome, Action: at.want.action, Ack: pull.AckVerified,
					}
					if diff := cmp.Diff(want, rep, ignoreAt); diff != "" {
						t.Errorf("report (-want +got):\n%s", diff)
					}
					wantAck := fmt.Sprintf("b0 seq=1 n=%d %s", at.prior+1, at.want.ack)
					if diff := cmp.Diff([]string{wantAck}, r.net.ackLog()); diff != "" {
						t.Errorf("commands (-want +got):\n%s", diff)
					}
					var c Counts
					c.Visits, c.Delivered = 1, 1
					c.SetOutcome(tc.outcome, 1)
					switch at.want.action {
					case pull.ActionAck:
						c.Acked = 1
					case pull.ActionTerm:
						c.Termed = 1
					case pull.ActionNak:
						c.Nacked = 1
					case pull.ActionExhausted:
						c.Exhausted = 1
					}
					if diff := cmp.Diff(c, r.mon.Snapshot().Totals, cmp.AllowUnexported(Counts{})); diff != "" {
						t.Errorf("counts (-want +got):\n%s", diff)
					}
				})
			})
		}
	}
}

// TestEmptyVisitOneRoundTrip: consumer info proving the consumer empty
// ends the visit (no pull), releases everything and leaves LastStep alone.
func TestEmptyVisitOneRoundTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.net.publish(0, `[]`)
		r.step(t)
		before, _ := r.mon.LastStep()
		r.ev.take()
		rep := r.step(t)
		want := []string{"eligible b0", "credential t0", "reserve b0", "check 0", "inspect b0", "release b0"}
		if diff := cmp.Diff(want, r.ev.take()); diff != "" {
			t.Errorf("empty visit (-want +got):\n%s", diff)
		}
		if rep.Result != ResultEmpty || rep.Ack != pull.AckNone || rep.Error != 0 {
			t.Errorf("report %+v", rep)
		}
		after, _ := r.mon.LastStep()
		if diff := cmp.Diff(before, after); diff != "" {
			t.Errorf("an empty poll changed LastStep (-want +got):\n%s", diff)
		}
		if got := r.mon.Snapshot().Totals.Empty; got != 1 {
			t.Errorf("Empty = %d, want 1", got)
		}
		if u := r.pools.Usage(); u.Requests != 0 || r.host.held() != 0 {
			t.Errorf("after an empty visit: usage %+v, host held %d", u, r.host.held())
		}
	})
}

// TestEmptyPull: consumer info shows something, the pull finds nothing
// (404 or 408): an empty pull, counted apart.
func TestEmptyPull(t *testing.T) {
	for _, k := range []jspull.Kind{jspull.KindNoMessages, jspull.KindRequestTimeout} {
		t.Run(k.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rtConfig(t, 1), PoolLimits{})
				r.net.publish(0, `[]`)
				r.net.nextReply = func(int) (jspull.Kind, bool, error) { return k, true, nil }
				rep := r.step(t)
				if rep.Result != ResultEmpty {
					t.Errorf("result %v, want empty", rep.Result)
				}
				s := r.mon.Snapshot().Totals
				if s.EmptyPulls != 1 || s.Empty != 0 {
					t.Errorf("counts %+v", s)
				}
				if _, ok := r.mon.LastStep(); ok {
					t.Errorf("an empty pull set LastStep")
				}
			})
		})
	}
}

// TestPullStatuses: every pull reply other than a message or empty is a
// typed, counted failure; the connection survives it.
func TestPullStatuses(t *testing.T) {
	tests := []struct {
		kind jspull.Kind
		want ErrorClass
	}{
		{jspull.KindRequestsPending, ClassBusy},
		{jspull.KindMaxWaiting, ClassBusy},
		{jspull.KindMessageTooLarge, ClassOversize},
		{jspull.KindMaxRequestBatch, ClassMisconfigured},
		{jspull.KindMaxRequestExpires, ClassMisconfigured},
		{jspull.KindMaxRequestMaxBytes, ClassMisconfigured},
		{jspull.KindPushBased, ClassMisconfigured},
		{jspull.KindConsumerDeleted, ClassConsumerMissing},
		{jspull.KindNoResponders, ClassConsumerMissing},
		{jspull.KindLeadershipChange, ClassBrokerUnavailable},
		{jspull.KindServerShutdown, ClassBrokerUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.kind.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rtConfig(t, 1), PoolLimits{})
				r.net.publish(0, `[]`)
				r.net.nextReply = func(int) (jspull.Kind, bool, error) { return tc.kind, true, nil }
				rep := r.step(t)
				if rep.Result != ResultFailed || rep.Error != tc.want {
					t.Errorf("report %+v, want failed %v", rep, tc.want)
				}
				if got := r.mon.Snapshot().Totals.Error(tc.want); got != 1 {
					t.Errorf("Errors[%v] = %d, want 1", tc.want, got)
				}
				if r.net.openLinks() != 1 {
					t.Errorf("open links %d, want 1", r.net.openLinks())
				}
			})
		})
	}
}

// TestExchangeErrors: errors of consumer info or the pull are classified,
// and those that close the connection return its reservation.
func TestExchangeErrors(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		class  ErrorClass
		closes bool
	}{
		{"profile", &jspull.ProfileError{Mismatches: []jspull.Mismatch{{Field: "ack_policy"}}}, ClassProfile, false},
		{"consumer not found", jspull.ErrConsumerNotFound, ClassConsumerMissing, false},
		{"stream not found", jspull.ErrStreamNotFound, ClassConsumerMissing, false},
		{"no responders", jspull.ErrNoResponders, ClassConsumerMissing, false},
		{"api", &jspull.APIError{Code: 500, ErrCode: 10001}, ClassAPI, false},
		{"permission", &conn.ServerError{Kind: conn.KindPermission}, ClassBrokerPermission, false},
		{"reply", &jspull.ReplyError{Err: jspull.ErrWrongConsumer}, ClassProtocol, true},
		{"foreign", &conn.ClosedError{Err: conn.ErrForeignFrame}, ClassProtocol, true},
		{"deadline", &conn.ClosedError{Err: context.DeadlineExceeded}, ClassConnection, true},
		{"other", errTest, ClassInternal, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := classify(tc.err); got != tc.class {
				t.Errorf("classify = %v, want %v", got, tc.class)
			}
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rtConfig(t, 1), PoolLimits{})
				r.net.publish(0, `[]`)
				r.net.inspectErr = func(int) error { return tc.err }
				rep := r.step(t)
				if rep.Result != ResultFailed || rep.Error != tc.class {
					t.Errorf("report %+v", rep)
				}
				wantConns := 1
				if tc.closes {
					wantConns = 0
				}
				if u := r.pools.Usage(); u.Connections != wantConns || r.net.openLinks() != wantConns {
					t.Errorf("connections: usage %d, open %d, want %d", u.Connections, r.net.openLinks(), wantConns)
				}
				if _, ok := r.mon.LastStep(); !ok {
					t.Errorf("a failure left no LastStep")
				}
			})
		})
	}
}

// TestConsumerPausedSkipsPull: consumer info saying the consumer is paused
// ends the visit without a pull, as a skipped visit of class paused that
// keeps the connection; once it resumes the message is delivered.
func TestConsumerPausedSkipsPull(t *testing.T) {
	if got := classify(jspull.ErrConsumerPaused); got != ClassPaused {
		t.Errorf("classify = %v, want %v", got, ClassPaused)
	}
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.net.publish(0, `[]`)
		paused := true
		r.net.inspectErr = func(int) error {
			if paused {
				return jspull.ErrConsumerPaused
			}
			return nil
		}
		rep := r.step(t)
		if rep.Result != ResultSkipped || rep.Error != ClassPaused || rep.Delivered != 0 {
			t.Errorf("report %+v, want skipped, class paused", rep)
		}
		for _, e := range r.ev.take() {
			if strings.HasPrefix(e, "next ") {
				t.Errorf("a pull was sent to a paused consumer: %q", e)
			}
		}
		if r.net.pending(0) != 1 {
			t.Errorf("pending %d, want the message still queued", r.net.pending(0))
		}
		if u := r.pools.Usage(); u.Connections != 1 || r.net.openLinks() != 1 {
			t.Errorf("connections: usage %d, open %d, want 1 kept", u.Connections, r.net.openLinks())
		}
		if s := r.mon.Snapshot(); s.Bindings[0].Error(ClassPaused) != 1 {
			t.Errorf("paused count %d, want 1", s.Bindings[0].Error(ClassPaused))
		}
		paused = false
		if rep := r.step(t); rep.Result != ResultDelivered {
			t.Errorf("after resuming: report %+v, want delivered", rep)
		}
	})
}

// TestDeliveryPastMaxDeliver: a delivery whose count is above the
// binding's max_deliver (the operator lowered it and the broker delivered
// the message once more) is terminated as exhausted without running the
// function; a delivery at max_deliver still runs.
func TestDeliveryPastMaxDeliver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		maxDeliver := uint64(r.trig.cfg.Bindings[0].MaxDeliver)
		r.net.publish(0, `["at"]`)
		r.net.publish(0, `["past"]`)
		r.net.mu.Lock()
		r.net.queues[0][0].delivered = maxDeliver - 1 // delivered maxDeliver next
		r.net.queues[0][1].delivered = maxDeliver     // delivered maxDeliver+1 next
		r.net.mu.Unlock()

		if rep := r.step(t); rep.Delivered != maxDeliver || rep.Outcome != OutcomeSuccess || rep.Action != pull.ActionAck {
			t.Errorf("delivery at max_deliver: report %+v, want run and acknowledged", rep)
		}
		r.ev.take()
		rep := r.step(t)
		want := StepReport{
			Step: 2, Epoch: 1, Binding: 0, Result: ResultDelivered,
			StreamSeq: 2, Delivered: maxDeliver + 1, RouteGeneration: 1,
			Action: pull.ActionExhausted, Ack: pull.AckVerified,
		}
		if diff := cmp.Diff(want, rep, ignoreAt, cmpopts.IgnoreFields(StepReport{}, "Wait")); diff != "" {
			t.Errorf("report (-want +got):\n%s", diff)
		}
		for _, e := range r.ev.take() {
			if strings.HasPrefix(e, "activate ") {
				t.Errorf("the function ran for a delivery past max_deliver: %q", e)
			}
		}
		if _, payloads := r.host.acts(); len(payloads) != 1 {
			t.Errorf("activations %q, want only the delivery at max_deliver", payloads)
		}
		acks := r.net.ackLog()
		if len(acks) != 2 || acks[1] != fmt.Sprintf("b0 seq=2 n=%d +TERM exhausted", maxDeliver+1) {
			t.Errorf("acks %q", acks)
		}
		if c := r.mon.Snapshot().Totals; c.Exhausted != 1 || c.Acked != 1 || c.outcomes != ([numOutcomes + 1]uint64{OutcomeSuccess: 1}) {
			t.Errorf("counts %+v", c)
		}
		if r.host.held() != 0 {
			t.Errorf("host reservations held: %d", r.host.held())
		}
	})
}

// TestUnsupportedAckKeepsConnection: a delivery whose ack subject names a
// JetStream domain is a failed visit of class unsupported ack subject: the
// function does not run, nothing is sent and the connection is kept for
// the next visit.
func TestUnsupportedAckKeepsConnection(t *testing.T) {
	if got := classify(fmt.Errorf("pull: next: %w", jspull.ErrUnsupportedAck)); got != ClassUnsupportedAck {
		t.Errorf("classify = %v, want %v", got, ClassUnsupportedAck)
	}
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.net.publish(0, `[]`)
		r.net.nextReply = func(int) (jspull.Kind, bool, error) { return 0, true, jspull.ErrUnsupportedAck }
		for range 2 {
			rep := r.step(t)
			if rep.Result != ResultFailed || rep.Error != ClassUnsupportedAck || rep.Delivered != 0 || rep.Ack != pull.AckNone {
				t.Errorf("report %+v, want failed, class unsupported ack subject", rep)
			}
		}
		if _, payloads := r.host.acts(); len(payloads) != 0 || len(r.net.ackLog()) != 0 {
			t.Errorf("activations %q, acks %q, want none", payloads, r.net.ackLog())
		}
		if n := r.net.dialCount(); n != 1 || r.net.openLinks() != 1 {
			t.Errorf("dials %d, open links %d: want the connection kept", n, r.net.openLinks())
		}
		if c := r.mon.Snapshot().Totals; c.Failed != 2 || c.Error(ClassUnsupportedAck) != 2 {
			t.Errorf("counts %+v", c)
		}
		if last, ok := r.mon.LastStep(); !ok || last.Error != ClassUnsupportedAck {
			t.Errorf("LastStep %+v %v", last, ok)
		}
	})
}

// TestLastSkip: a skipped visit is kept in the monitor's second slot,
// LastSkip, and leaves LastStep alone; the next skip replaces it.
func TestLastSkip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		if _, ok := r.mon.LastSkip(); ok {
			t.Errorf("LastSkip before any step")
		}
		r.net.publish(0, `[]`)
		delivered := r.step(t)
		r.host.reserve = func(InboundRequest) error { return ErrUnavailable }
		first := r.step(t)
		got, ok := r.mon.LastSkip()
		if diff := cmp.Diff(first, got); !ok || diff != "" || got.Error != ClassUnavailable {
			t.Errorf("LastSkip ok=%v (-want +got):\n%s", ok, diff)
		}
		r.host.reserve = nil
		r.host.mu.Lock()
		r.host.credential = func(string, int) error { return errTest }
		r.host.mu.Unlock()
		second := r.step(t)
		if got, _ := r.mon.LastSkip(); got.Step != second.Step || got.Error != ClassCredential {
			t.Errorf("LastSkip %+v, want the credential skip", got)
		}
		if last, _ := r.mon.LastStep(); last.Step != delivered.Step {
			t.Errorf("a skip replaced LastStep: %+v", last)
		}
	})
}

// TestAdmissionUnavailableNoNetwork: a refused host reservation means no
// dial and no request; so does a refused pool reservation.
func TestAdmissionUnavailableNoNetwork(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		class ErrorClass
	}{
		{"unavailable", ErrUnavailable, ClassUnavailable},
		{"wrapped unavailable", errors.Join(errTest, ErrUnavailable), ClassUnavailable},
		{"host error", errTest, ClassHost},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rtConfig(t, 1), PoolLimits{})
				r.net.publish(0, `[]`)
				r.host.reserve = func(InboundRequest) error { return tc.err }
				rep := r.step(t)
				want := []string{"eligible b0", "credential t0", "reserve b0"}
				if diff := cmp.Diff(want, r.ev.take()); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
				if rep.Result != ResultSkipped || rep.Error != tc.class {
					t.Errorf("report %+v", rep)
				}
				s := r.mon.Snapshot().Totals
				if s.Skipped != 1 || s.Error(tc.class) != 1 {
					t.Errorf("counts %+v", s)
				}
				if u := r.pools.Usage(); u.Requests != 0 || u.Connections != 0 || u.Clients != 0 {
					t.Errorf("usage %+v", u)
				}
				if _, ok := r.mon.LastStep(); ok {
					t.Errorf("a skip set LastStep")
				}
			})
		})
	}
}

// TestPoolExhaustedNoNetwork: the host reserved, but the pools cannot give
// the ingress request or the connection: no dial, the host's reservation
// is released.
func TestPoolExhaustedNoNetwork(t *testing.T) {
	cfg := rtConfig(t, 1)
	install := installCharge(cfg)
	req := requestCharge(cfg.Bindings[0].MaxPayloadBytes)
	tests := []struct {
		name string
		edit func(*PoolLimits)
	}{
		{"bytes for the request", func(l *PoolLimits) { l.MaxBytes = install + req - 1 }},
		{"bytes for the connection", func(l *PoolLimits) { l.MaxBytes = install + req + connectionBytes - 1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lim := DefaultPoolLimits()
				tc.edit(&lim)
				r := newRig(t, rtConfig(t, 1), lim)
				r.net.publish(0, `[]`)
				rep := r.step(t)
				if rep.Result != ResultSkipped || rep.Error != ClassPoolExhausted {
					t.Errorf("report %+v", rep)
				}
				if r.net.dialCount() != 0 || r.host.held() != 0 {
					t.Errorf("dials %d, host held %d", r.net.dialCount(), r.host.held())
				}
				if u := r.pools.Usage(); u.Requests != 0 || u.Connections != 0 || u.Bytes != install {
					t.Errorf("usage %+v", u)
				}
			})
		})
	}
	t.Run("exactly enough", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			lim := DefaultPoolLimits()
			lim.MaxBytes = install + req + connectionBytes
			r := newRig(t, rtConfig(t, 1), lim)
			r.net.publish(0, `[]`)
			if rep := r.step(t); rep.Result != ResultDelivered {
				t.Errorf("report %+v", rep)
			}
		})
	})
}

// TestChecksAtEachCheckpoint revokes the publication or the credential at
// each of their checkpoints and checks how far the step went.
func TestChecksAtEachCheckpoint(t *testing.T) {
	tests := []struct {
		name       string
		eligible   func(BindingRef, int) error
		credential func(string, int) error
		events     []string
		result     StepResult
		class      ErrorClass
		ack        pull.AckState
	}{
		{
			name:     "publication before network",
			eligible: func(_ BindingRef, n int) error { return ErrNotEligible },
			events:   []string{"eligible b0"},
			result:   ResultSkipped, class: ClassIneligible, ack: pull.AckNone,
		},
		{
			name:       "credential before network",
			credential: func(string, int) error { return ErrCredentialRevoked },
			events:     []string{"eligible b0", "credential t0"},
			result:     ResultSkipped, class: ClassCredential, ack: pull.AckNone,
		},
		{
			name: "publication before the pull",
			eligible: func(_ BindingRef, n int) error {
				if n == 2 {
					return ErrNotEligible
				}
				return nil
			},
			events: []string{"eligible b0", "credential t0", "reserve b0", "dial t0", "inspect b0", "eligible b0", "release b0"},
			result: ResultSkipped, class: ClassIneligible, ack: pull.AckNone,
		},
		{
			name: "credential before the pull",
			credential: func(_ string, n int) error {
				if n == 2 {
					return ErrCredentialRevoked
				}
				return nil
			},
			events: []string{"eligible b0", "credential t0", "reserve b0", "dial t0", "inspect b0", "eligible b0", "credential t0", "release b0"},
			result: ResultSkipped, class: ClassCredential, ack: pull.AckNone,
		},
		{
			name: "credential before the ack",
			credential: func(_ string, n int) error {
				if n == 3 {
					return ErrCredentialRevoked
				}
				return nil
			},
			events: []string{
				"eligible b0", "credential t0", "reserve b0", "dial t0", "inspect b0",
				"eligible b0", "credential t0", "next b0", "activate b0", "credential t0", "release b0",
			},
			result: ResultDelivered, class: ClassCredential, ack: pull.AckNone,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rtConfig(t, 1), PoolLimits{})
				r.net.publish(0, `[]`)
				r.host.eligible = tc.eligible
				r.host.credential = tc.credential
				rep := r.step(t)
				if diff := cmp.Diff(tc.events, r.ev.take()); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
				if rep.Result != tc.result || rep.Error != tc.class || rep.Ack != tc.ack {
					t.Errorf("report %+v", rep)
				}
				if r.host.held() != 0 {
					t.Errorf("host reservation held")
				}
			})
		})
	}
	t.Run("expired secret", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newRig(t, rtConfig(t, 1), PoolLimits{})
			r.creds[0].Secret.Wipe()
			rep := r.step(t)
			if rep.Result != ResultSkipped || rep.Error != ClassCredential || r.net.dialCount() != 0 {
				t.Errorf("report %+v, dials %d", rep, r.net.dialCount())
			}
		})
	})
	t.Run("unacknowledged is counted", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newRig(t, rtConfig(t, 1), PoolLimits{})
			r.net.publish(0, `[]`)
			r.host.credential = func(_ string, n int) error {
				if n == 3 {
					return ErrCredentialRevoked
				}
				return nil
			}
			r.step(t)
			s := r.mon.Snapshot().Totals
			if s.Unacknowledged != 1 || s.Acked != 0 || len(r.net.ackLog()) != 0 {
				t.Errorf("counts %+v, acks %q", s, r.net.ackLog())
			}
		})
	})
}

// TestRouteGenerationPinned: the activation keeps the generation pinned by
// its reservation; the next visit resolves the current one.
func TestRouteGenerationPinned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.net.publish(0, `[]`)
		r.net.publish(0, `[]`)
		r.host.setGeneration(7)
		r.host.activate = func(context.Context, Activation) Outcome {
			r.host.generation = 8 // replaced while the first activation runs
			return OutcomeSuccess
		}
		r.step(t)
		r.host.activate = nil
		r.step(t)
		acts, _ := r.host.acts()
		if got := []uint64{acts[0].RouteGeneration, acts[1].RouteGeneration}; !cmp.Equal(got, []uint64{7, 8}) {
			t.Errorf("generations %v, want [7 8]", got)
		}
	})
}

// TestAckStates: a verified-late receipt, an uncertain one and a command
// refused before writing.
func TestAckStates(t *testing.T) {
	tests := []struct {
		name  string
		rec   jspull.Receipt
		err   error
		state pull.AckState
		class ErrorClass
	}{
		{"late", jspull.Receipt{Outcome: pull.AckVerifiedLate, Action: pull.ActionAck}, nil, pull.AckVerifiedLate, 0},
		{"uncertain", jspull.Receipt{Outcome: pull.AckUncertain, Action: pull.ActionAck}, &jspull.ReceiptError{Err: &conn.ClosedError{Err: context.DeadlineExceeded}}, pull.AckUncertain, ClassAckUncertain},
		{"not written", jspull.Receipt{}, conn.ErrClosed, pull.AckNone, ClassConnection},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rtConfig(t, 1), PoolLimits{})
				r.net.publish(0, `[]`)
				r.net.ackReply = func(int, jspull.Command) (jspull.Receipt, bool, error) { return tc.rec, true, tc.err }
				rep := r.step(t)
				if rep.Ack != tc.state || rep.Error != tc.class || rep.Action != pull.ActionAck {
					t.Errorf("report %+v", rep)
				}
				last, _ := r.mon.LastStep()
				if last.Ack != tc.state {
					t.Errorf("LastStep ack %v, want %v", last.Ack, tc.state)
				}
				// Never replayed: one command only, also on the next visit.
				r.step(t)
				if n := len(r.net.ackLog()); n != 1 {
					t.Errorf("%d commands, want 1", n)
				}
			})
		})
	}
}

// TestDeadlineSplit: the activation ends before the delivery deadline minus
// the ack slice and within its budget; the ack keeps its slice even after
// an activation that overran.
func TestDeadlineSplit(t *testing.T) {
	for _, tc := range []struct {
		timeout, slice time.Duration
	}{
		{100 * time.Millisecond, 25 * time.Millisecond},
		{99 * time.Millisecond, 25 * time.Millisecond},
		{400 * time.Millisecond, 100 * time.Millisecond},
		{4 * time.Second, time.Second},
		{10 * time.Second, time.Second},
	} {
		if got := ackSlice(tc.timeout); got != tc.slice {
			t.Errorf("ackSlice(%v) = %v, want %v", tc.timeout, got, tc.slice)
		}
	}
	tests := []struct {
		name         string
		timeoutMS    int
		budgetMS     int
		run          time.Duration
		wantDeadline time.Duration // activation deadline after the pull
		wantAckLeft  time.Duration // time left for the ack
	}{
		{"budget first", 2000, 1000, 100 * time.Millisecond, time.Second, 1900 * time.Millisecond},
		{"slice first", 2000, 2000, 100 * time.Millisecond, 1500 * time.Millisecond, 1900 * time.Millisecond},
		{"overrun keeps the slice", 2000, 2000, 3 * time.Second, 1500 * time.Millisecond, 500 * time.Millisecond},
		{"smallest timeout", 100, 100, 10 * time.Millisecond, 75 * time.Millisecond, 90 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := rtConfig(t, 1)
				cfg.Bindings[0].OperationTimeoutMS = tc.timeoutMS
				cfg.Bindings[0].RootBudgetMS = tc.budgetMS
				cfg.Bindings[0].AckWaitMS = tc.timeoutMS + AckWaitMarginMS
				r := newRig(t, cfg, PoolLimits{})
				r.net.publish(0, `[]`)
				var pulledAt time.Time
				r.net.onNext = func() { pulledAt = time.Now() }
				var gotDeadline time.Duration
				var ctxDeadline time.Time
				r.host.activate = func(ctx context.Context, a Activation) Outcome {
					gotDeadline = a.Deadline.Sub(pulledAt)
					ctxDeadline, _ = ctx.Deadline()
					time.Sleep(tc.run)
					return OutcomeSuccess
				}
				rep := r.step(t)
				if rep.Ack != pull.AckVerified {
					t.Errorf("report %+v", rep)
				}
				if gotDeadline != tc.wantDeadline {
					t.Errorf("activation deadline %v after the pull, want %v", gotDeadline, tc.wantDeadline)
				}
				if ctxDeadline.Sub(pulledAt) != tc.wantDeadline {
					t.Errorf("activation context deadline %v after the pull, want %v", ctxDeadline.Sub(pulledAt), tc.wantDeadline)
				}
				if diff := cmp.Diff([]time.Duration{tc.wantAckLeft}, r.net.ackDeadline); diff != "" {
					t.Errorf("time left for the ack (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// TestInboundRequest: the host is asked for the payload ceiling and a
// deadline covering the whole step.
func TestInboundRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		start := time.Now()
		r.step(t)
		got := r.host.requests[0]
		if got.MaxInputBytes != 4096 || got.Binding.ID != "b0" || got.Binding.Index != 0 || got.Binding.Epoch != 1 || got.Binding.LogicalID != "orders" {
			t.Errorf("request %+v", got)
		}
		// T of 2 s: the phase before the pull, the pull's bound (T within
		// 250 ms and 1.1 s), T again and the ack slice.
		want := 2*time.Second + 1100*time.Millisecond + 2*time.Second + 500*time.Millisecond
		if d := got.Deadline.Sub(start); d != want {
			t.Errorf("deadline %v after the start, want %v", d, want)
		}
	})
}

// TestUncertainAckRedelivered: an acknowledgement whose receipt is lost is
// reported uncertain and never replayed; the broker's redelivery runs the
// activation again and is acknowledged on its own.
func TestUncertainAckRedelivered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.net.publish(0, `["once"]`)
		lost := true
		r.net.ackReply = func(int, jspull.Command) (jspull.Receipt, bool, error) {
			if !lost {
				return jspull.Receipt{}, false, nil
			}
			lost = false
			return jspull.Receipt{Outcome: pull.AckUncertain, Action: pull.ActionAck},
				true, &jspull.ReceiptError{Err: &conn.ClosedError{Err: context.DeadlineExceeded}}
		}
		if rep := r.step(t); rep.Ack != pull.AckUncertain {
			t.Fatalf("report %+v", rep)
		}
		r.net.redeliver() // the ack never reached the broker: ack wait expires
		// The receipt met its deadline: the binding is backed off, its
		// next visit skipped without network until the backoff passed.
		if rep := r.step(t); rep.Result != ResultSkipped || rep.Error != ClassBindingBackoff {
			t.Fatalf("visit after the uncertain ack %+v, want a binding backoff skip", rep)
		}
		time.Sleep(time.Until(r.trig.bindings[0].backoff.retryAt))
		rep := r.step(t)
		if rep.Ack != pull.AckVerified || rep.Delivered != 2 || rep.StreamSeq != 1 {
			t.Errorf("redelivery %+v", rep)
		}
		want := []string{"b0 seq=1 n=1 +ACK", "b0 seq=1 n=2 +ACK"}
		if diff := cmp.Diff(want, r.net.ackLog()); diff != "" {
			t.Errorf("commands (-want +got):\n%s", diff)
		}
		s := r.mon.Snapshot().Totals
		if s.Uncertain != 1 || s.Acked != 2 || s.Delivered != 2 || s.Error(ClassBindingBackoff) != 1 {
			t.Errorf("counts %+v", s)
		}
	})
}

// TestPullBound: the pull waits for the broker's answer up to the
// operation timeout, never less than its 100 ms expiry plus 150 ms nor
// more than the expiry plus 1 s. Regression: the bound was a fixed 250 ms,
// so on a link slower than that every pull's answer came after the
// runtime had closed its connection, the broker counted each such delivery
// against max_deliver, and gave the event up without it ever running.
func TestPullBound(t *testing.T) {
	tests := []struct {
		timeout, want time.Duration
	}{
		{100 * time.Millisecond, 250 * time.Millisecond},
		{250 * time.Millisecond, 250 * time.Millisecond},
		{400 * time.Millisecond, 400 * time.Millisecond},
		{time.Second, time.Second},
		{1100 * time.Millisecond, 1100 * time.Millisecond},
		{2 * time.Second, 1100 * time.Millisecond},
		{10 * time.Second, 1100 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.timeout.String(), func(t *testing.T) {
			if got := pullBound(tc.timeout); got != tc.want {
				t.Errorf("pullBound(%v) = %v, want %v", tc.timeout, got, tc.want)
			}
			if m := pullMargin(tc.timeout); m < jspull.MinNextMargin || m > jspull.MaxNextMargin {
				t.Errorf("pullMargin(%v) = %v, outside jspull's bounds", tc.timeout, m)
			}
		})
	}
}
