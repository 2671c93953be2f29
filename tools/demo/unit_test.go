package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

func TestEventKindString(t *testing.T) {
	want := map[eventKind]string{
		kindGood:       "good",
		kindDeclared:   "declared failure",
		kindInvalid:    "invalid payload",
		kindPoison:     "poison",
		0:              "eventKind(0)",
		kindPoison + 1: "eventKind(5)",
	}
	for k := eventKind(0); int(k) <= numEventKinds+1; k++ {
		t.Run(want[k], func(t *testing.T) {
			if got := k.String(); got != want[k] {
				t.Errorf("String() = %q, want %q", got, want[k])
			}
		})
	}
}

// TestScenarioOutcomes runs every event of the scenario through the
// reference host as the runtime would, without a broker: each kind ends
// with the outcome it is meant to exercise, and the runtime maps it to the
// intended broker action at the first and the last delivery.
func TestScenarioOutcomes(t *testing.T) {
	sc := newScenario()
	h, err := sc.newHost()
	if err != nil {
		t.Fatal(err)
	}
	wantOutcome := map[eventKind]trigger.Outcome{
		kindGood:     trigger.OutcomeSuccess,
		kindDeclared: trigger.OutcomeDeclaredFailure,
		kindInvalid:  trigger.OutcomeInvalidArguments,
		kindPoison:   trigger.OutcomePlatformFailure,
	}
	wantFirst := map[eventKind]trigger.Action{
		kindGood: trigger.ActionAck, kindDeclared: trigger.ActionTerm,
		kindInvalid: trigger.ActionTerm, kindPoison: trigger.ActionNak,
	}
	wantLast := map[eventKind]trigger.Action{
		kindGood: trigger.ActionAck, kindDeclared: trigger.ActionTerm,
		kindInvalid: trigger.ActionTerm, kindPoison: trigger.ActionExhausted,
	}
	for i, e := range sc.Events {
		b := sc.Bindings[e.Binding]
		t.Run(b.ID+"/"+e.Kind.String(), func(t *testing.T) {
			ref := trigger.BindingRef{
				LogicalID: logicalID, Epoch: 1, Index: e.Binding, ID: b.ID, Tenant: b.Tenant,
				Principal: b.Principal, Service: b.Service, Contract: b.Contract, Function: b.Function,
			}
			if err := h.PublicationEligible(ref); err != nil {
				t.Fatalf("publication not eligible: %v", err)
			}
			in, err := h.ReserveInbound(t.Context(), trigger.InboundRequest{Binding: ref, MaxInputBytes: b.MaxPayloadBytes})
			if err != nil {
				t.Fatal(err)
			}
			res := in.Activate(t.Context(), trigger.Activation{
				Principal: trigger.Principal{Subject: b.Principal, Tenant: b.Tenant, Binding: b.ID},
				Binding:   ref, RouteGeneration: in.RouteGeneration(),
				Deadline: time.Now().Add(b.RootBudget()), Budget: b.RootBudget(),
				StreamSeq: uint64(i + 1), Delivered: 1, MaxDeliver: b.MaxDeliver,
				Payload: []byte(e.Payload),
			})
			in.Release()
			if res.Outcome != wantOutcome[e.Kind] {
				t.Errorf("outcome %v, want %v", res.Outcome, wantOutcome[e.Kind])
			}
			if got := trigger.ActionFor(res.Outcome, 1, b.MaxDeliver); got != wantFirst[e.Kind] {
				t.Errorf("action at delivery 1: %v, want %v", got, wantFirst[e.Kind])
			}
			if got := trigger.ActionFor(res.Outcome, uint64(b.MaxDeliver), b.MaxDeliver); got != wantLast[e.Kind] {
				t.Errorf("action at delivery %d: %v, want %v", b.MaxDeliver, got, wantLast[e.Kind])
			}
		})
	}
	if err := h.WaitIdle(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s := h.Stats(); s.Slots != 0 || s.InputBytes != 0 || s.Running != 0 {
		t.Errorf("host holds %+v after every release", s)
	}
}

// TestScenarioShape: every kind of event is published, the settings are
// within the profile, and the configuration is valid once destinations are
// known.
func TestScenarioShape(t *testing.T) {
	sc := newScenario()
	seen := map[eventKind]bool{}
	for _, e := range sc.Events {
		seen[e.Kind] = true
	}
	if len(seen) != numEventKinds {
		t.Errorf("events cover %d kinds, want %d", len(seen), numEventKinds)
	}
	if got := tenantIDs(sc.Bindings); len(got) != 2 {
		t.Errorf("tenants %v, want two", got)
	}
	if nakDelayMS != trigger.MinNakDelayMS {
		t.Errorf("NAK delay %d ms, want the profile's minimum %d", nakDelayMS, trigger.MinNakDelayMS)
	}
}

func TestExpectedRows(t *testing.T) {
	bindings := []trigger.Binding{{ID: "a", Tenant: "t1", MaxDeliver: 3}, {ID: "b", Tenant: "t2", MaxDeliver: 5}}
	tests := []struct {
		name   string
		events []event
		want   []row
	}{
		{"none", nil, []row{{Binding: "a", Tenant: "t1"}, {Binding: "b", Tenant: "t2"}}},
		{"good", []event{{Binding: 0, Kind: kindGood}}, []row{
			{Binding: "a", Tenant: "t1", Delivered: 1, Acked: 1}, {Binding: "b", Tenant: "t2"},
		}},
		{"declared and invalid", []event{{Binding: 1, Kind: kindDeclared}, {Binding: 1, Kind: kindInvalid}}, []row{
			{Binding: "a", Tenant: "t1"}, {Binding: "b", Tenant: "t2", Delivered: 2, Termed: 2},
		}},
		{"poison at max_deliver 3 and 5", []event{{Binding: 0, Kind: kindPoison}, {Binding: 1, Kind: kindPoison}}, []row{
			{Binding: "a", Tenant: "t1", Delivered: 3, Nacked: 2, Exhausted: 1},
			{Binding: "b", Tenant: "t2", Delivered: 5, Nacked: 4, Exhausted: 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, expectedRows(bindings, tt.events)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// goodSummary is a summary that meets every expectation of want.
func goodSummary(want []row) summary {
	s := summary{Rows: append([]row(nil), want...), Events: 8, Settled: 8}
	for _, r := range want {
		s.Consumers = append(s.Consumers, consumerState{Binding: r.Binding, Checked: true})
	}
	return s
}

func TestVerify(t *testing.T) {
	sc := newScenario()
	want := expectedRows(sc.Bindings, sc.Events)
	tests := []struct {
		name   string
		modify func(*summary)
		want   []problem
	}{
		{"as expected", func(*summary) {}, nil},
		{"poison acked at once", func(s *summary) {
			s.Rows[2].Delivered, s.Rows[2].Acked, s.Rows[2].Nacked, s.Rows[2].Exhausted = 3, 3, 0, 0
		}, []problem{
			{"payments-charge delivered", 5, 3},
			{"payments-charge acked", 2, 3},
			{"payments-charge nacked", 2, 0},
			{"payments-charge exhausted", 1, 0},
		}},
		{"an uncertain ack", func(s *summary) { s.Rows[0].Uncertain = 1 }, []problem{{"orders-place uncertain", 0, 1}}},
		{"deadline", func(s *summary) { s.Settled = 7 }, []problem{{"events settled", 8, 7}}},
		{"consumer not empty", func(s *summary) { s.Consumers[1].AckPending = 1 }, []problem{{"consumer of orders-cancel num_ack_pending", 0, 1}}},
		{"consumer not inspected", func(s *summary) { s.Consumers[0].Checked = false }, []problem{{"consumer of orders-place inspected", 1, 0}}},
		{"connection left", func(s *summary) { s.Usage.Connections = 1 }, []problem{{"pool connections", 0, 1}}},
		{"function running", func(s *summary) { s.Host.Running = 1 }, []problem{{"host functions running", 0, 1}}},
		{"binding missing", func(s *summary) { s.Rows = s.Rows[:2] }, []problem{{"bindings", 3, 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := goodSummary(want)
			tt.modify(&s)
			err := verify(s, want)
			var oe *outcomeError
			switch {
			case tt.want == nil && err != nil:
				t.Fatalf("verify: %v, want nil", err)
			case tt.want == nil:
				return
			case !errors.As(err, &oe) || !errors.Is(err, errUnexpected):
				t.Fatalf("verify: %v, want an *outcomeError", err)
			}
			if diff := cmp.Diff(tt.want, oe.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOutcomeErrorListsAtMost(t *testing.T) {
	for _, n := range []int{maxListedProblems, maxListedProblems + 1} {
		e := &outcomeError{Problems: make([]problem, n)}
		more := strings.Contains(e.Error(), "more")
		if more != (n > maxListedProblems) {
			t.Errorf("%d problems: message %q", n, e.Error())
		}
	}
}

// TestCheckConnect pins the runtime user's CONNECT against the broker's
// max_control_line: at the limit it fits, one byte past it does not.
func TestCheckConnect(t *testing.T) {
	one, err := connectArgLen("j")
	if err != nil {
		t.Fatal(err)
	}
	base := one - 1
	atLimit := strings.Repeat("j", brokerMaxControlLine-base)
	tests := []struct {
		name    string
		jwt     string
		wantErr error
	}{
		{"at the limit", atLimit, nil},
		{"one past", atLimit + "j", errConnectTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := checkConnect(tt.jwt)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("checkConnect: %v, want %v", err, tt.wantErr)
			}
			if n != base+len(tt.jwt) {
				t.Errorf("length %d, want %d", n, base+len(tt.jwt))
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    options
		wantErr error
	}{
		{"defaults", nil, options{Deadline: DefaultDeadline}, nil},
		{"keep", []string{"-keep"}, options{Keep: true, Deadline: DefaultDeadline}, nil},
		{"min deadline", []string{"-deadline", MinDeadline.String()}, options{Deadline: MinDeadline}, nil},
		{"below min", []string{"-deadline", (MinDeadline - time.Millisecond).String()}, options{}, errUsage},
		{"max deadline", []string{"-deadline", MaxDeadline.String()}, options{Deadline: MaxDeadline}, nil},
		{"above max", []string{"-deadline", (MaxDeadline + time.Millisecond).String()}, options{}, errUsage},
		{"smallest cluster", []string{"-cluster", "2"}, options{Deadline: DefaultDeadline, Cluster: 2}, nil},
		{"largest cluster", []string{"-cluster", "5"}, options{Deadline: DefaultDeadline, Cluster: 5}, nil},
		{"cluster of one", []string{"-cluster", "1"}, options{}, errUsage},
		{"cluster of six", []string{"-cluster", "6"}, options{}, errUsage},
		{"cluster kept", []string{"-cluster", "3", "-keep"}, options{}, errUsage},
		{"verbose", []string{"-v"}, options{Deadline: DefaultDeadline, Verbose: true}, nil},
		{"argument", []string{"extra"}, options{}, errUsage},
		{"help", []string{"-h"}, options{}, flag.ErrHelp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(tt.args, io.Discard)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("parseFlags: %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b func(access)) bool { return a == nil && b == nil })); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunExitCodes: flag errors exit 2 and start nothing; -h exits 0.
func TestRunExitCodes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"unknown flag", []string{"-nope"}, exitUsage},
		{"deadline out of range", []string{"-deadline", "1ms"}, exitUsage},
		{"help", []string{"-help"}, exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := run(context.Background(), tt.args, io.Discard, io.Discard); got != tt.want {
				t.Errorf("exit %d, want %d", got, tt.want)
			}
		})
	}
}

func TestWriteTable(t *testing.T) {
	var b strings.Builder
	writeTable(&b, []row{
		{Binding: "orders-place", Tenant: "acme", Delivered: 4, Acked: 2, Termed: 2},
		{Binding: "payments-charge", Tenant: "globex", Delivered: 5, Acked: 2, Nacked: 2, Exhausted: 1},
	})
	want := "" +
		"  binding          tenant  delivered      acked     termed     nacked  exhausted  uncertain\n" +
		"  orders-place     acme            4          2          2          0          0          0\n" +
		"  payments-charge  globex          5          2          0          2          1          0\n" +
		"  total                            9          4          2          2          1          0\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStepRowMatchesMonitor(t *testing.T) {
	tests := []struct {
		name string
		r    trigger.StepReport
		want row
	}{
		{"empty", trigger.StepReport{Result: trigger.ResultEmpty, Ack: trigger.AckNone}, row{}},
		{"acked", trigger.StepReport{Result: trigger.ResultDelivered, Delivered: 1, Action: trigger.ActionAck, Ack: trigger.AckVerified}, row{Delivered: 1, Acked: 1}},
		{"nacked late", trigger.StepReport{Result: trigger.ResultDelivered, Delivered: 2, Action: trigger.ActionNak, Ack: trigger.AckVerifiedLate}, row{Delivered: 1, Nacked: 1}},
		{"exhausted uncertain", trigger.StepReport{Result: trigger.ResultDelivered, Delivered: 3, Action: trigger.ActionExhausted, Ack: trigger.AckUncertain}, row{Delivered: 1, Exhausted: 1, Uncertain: 1}},
		{"shutdown", trigger.StepReport{Result: trigger.ResultShutdown, Delivered: 1, Action: trigger.ActionNone, Ack: trigger.AckNone}, row{Delivered: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, stepRow(tt.r)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestProgressLine(t *testing.T) {
	bindings := newScenario().Bindings
	r := trigger.StepReport{
		Binding: 2, Result: trigger.ResultDelivered, StreamSeq: 2, Delivered: 3,
		Outcome: trigger.OutcomePlatformFailure, Action: trigger.ActionExhausted, Ack: trigger.AckVerified,
	}
	got := progressLine(130*time.Millisecond, bindings, r, kindPoison)
	want := "    0.130s  payments-charge  seq 2   delivery 3/3  platform failure  -> exhausted ack verified  [poison]"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	failed := trigger.StepReport{Binding: 0, Result: trigger.ResultFailed, Error: trigger.ClassConnection}
	if diff := cmp.Diff("    0.010s  orders-place     failed: connection", progressLine(10*time.Millisecond, bindings, failed, 0)); diff != "" {
		t.Errorf("failed step (-want +got):\n%s", diff)
	}
}

// TestDeclaredFailureIsDeclared: the order function's failure over stock
// is one its contract declares, so it is terminated, not retried.
func TestDeclaredFailureIsDeclared(t *testing.T) {
	for _, f := range newScenario().Functions {
		if f.Name != "place" {
			continue
		}
		err := f.Func(context.Background(), refhost.Call{Args: []any{"C-3", uint32(outOfStockQty + 1)}})
		var ae *refhost.ApplicationError
		if !errors.As(err, &ae) || len(f.Failures) != 1 || ae.Code != f.Failures[0] {
			t.Errorf("place over stock: %v, want the declared failure %v", err, f.Failures)
		}
	}
}
