package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
	"github.com/latent-systems/latent-nats/trigger/wasmhost"
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

// guestHost returns the scenario's reference host with its functions
// registered as the guest, built from ./guest, every activation recorded
// by the returned log (its lines written to out); the wasmhost Runtime is
// closed when the test ends.
func guestHost(t *testing.T, sc scenario, out io.Writer) (*refhost.Host, *activationLog) {
	t.Helper()
	bin, err := readGuest(buildGuest(t))
	if err != nil {
		t.Fatal(err)
	}
	log := newActivationLog(&lockedWriter{w: out}, sc.Bindings)
	h, rt, err := sc.newHost(t.Context(), bin, wasmhost.Config{OnActivation: log.record, CacheDir: guestCache})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		if err := h.WaitIdle(ctx); err != nil {
			t.Errorf("WaitIdle: %v", err)
		}
		if live := rt.Stats().Live; live != 0 {
			t.Errorf("%d guest instances live once the host is idle", live)
		}
		if err := rt.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h, log
}

// activate runs payload through h as the runtime would deliver it to
// binding i at stream sequence seq, first delivery, and returns the
// outcome.
func activate(t *testing.T, h *refhost.Host, sc scenario, i int, seq uint64, payload string) trigger.Outcome {
	t.Helper()
	b := sc.Bindings[i]
	ref := trigger.BindingRef{
		LogicalID: logicalID, Epoch: 1, Index: i, ID: b.ID, Tenant: b.Tenant,
		Principal: b.Principal, Service: b.Service, Contract: b.Contract, Function: b.Function,
	}
	if err := h.PublicationEligible(ref); err != nil {
		t.Fatalf("publication not eligible: %v", err)
	}
	in, err := h.ReserveInbound(t.Context(), trigger.InboundRequest{Binding: ref, MaxInputBytes: b.MaxPayloadBytes})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Release()
	return in.Activate(t.Context(), trigger.Activation{
		Principal: trigger.Principal{Subject: b.Principal, Tenant: b.Tenant, Binding: b.ID},
		Binding:   ref, RouteGeneration: in.RouteGeneration(),
		Deadline: time.Now().Add(b.RootBudget()), Budget: b.RootBudget(),
		StreamSeq: seq, Delivered: 1, MaxDeliver: b.MaxDeliver,
		Payload: []byte(payload),
	}).Outcome
}

// TestScenarioOutcomes runs every event of the scenario through the
// reference host and the guest as the runtime would, without a broker:
// each kind ends with the outcome it is meant to exercise, and the runtime
// maps it to the intended broker action at the first and the last
// delivery. Every activation ran in a fresh instance, and every ok result
// counted one call; the invalid payload never reached the guest.
func TestScenarioOutcomes(t *testing.T) {
	sc := newScenario()
	var out bytes.Buffer
	h, log := guestHost(t, sc, &out)
	wantOutcome := map[eventKind]trigger.Outcome{
		kindGood:     trigger.OutcomeSuccess,
		kindDeclared: trigger.OutcomeDeclaredFailure,
		kindInvalid:  trigger.OutcomeInvalidArguments,
		kindPoison:   trigger.OutcomePlatformFailure,
	}
	wantFirst := map[eventKind]pull.Action{
		kindGood: pull.ActionAck, kindDeclared: pull.ActionTerm,
		kindInvalid: pull.ActionTerm, kindPoison: pull.ActionNak,
	}
	wantLast := map[eventKind]pull.Action{
		kindGood: pull.ActionAck, kindDeclared: pull.ActionTerm,
		kindInvalid: pull.ActionTerm, kindPoison: pull.ActionExhausted,
	}
	for i, e := range sc.Events {
		b := sc.Bindings[e.Binding]
		t.Run(b.ID+"/"+e.Kind.String(), func(t *testing.T) {
			o := activate(t, h, sc, e.Binding, uint64(i+1), e.Payload)
			if o != wantOutcome[e.Kind] {
				t.Errorf("outcome %v, want %v", o, wantOutcome[e.Kind])
			}
			if got := trigger.ActionFor(o, 1, b.MaxDeliver); got != wantFirst[e.Kind] {
				t.Errorf("action at delivery 1: %v, want %v", got, wantFirst[e.Kind])
			}
			if got := trigger.ActionFor(o, uint64(b.MaxDeliver), b.MaxDeliver); got != wantLast[e.Kind] {
				t.Errorf("action at delivery %d: %v, want %v", b.MaxDeliver, got, wantLast[e.Kind])
			}
		})
	}
	if err := h.WaitIdle(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s := h.Stats(); s.Slots != 0 || s.InputBytes != 0 || s.MemoryBytes != 0 || s.Running != 0 {
		t.Errorf("host holds %+v after every release", s)
	}
	// Each event was delivered once, as if max_deliver were 1.
	once := append([]trigger.Binding(nil), sc.Bindings...)
	for i := range once {
		once[i].MaxDeliver = 1
	}
	want := expectedActivations(once, sc.Events)
	if diff := cmp.Diff(want, log.totals()); diff != "" {
		t.Errorf("activations (-want +got):\n%s", diff)
	}
	if n := strings.Count(out.String(), "  activation "); uint64(n) != want.Activations {
		t.Errorf("%d activation lines, want %d:\n%s", n, want.Activations, out.String())
	}
	assertNoPayload(t, out.String())
}

// TestGuestBoundaries pins the guest's behaviour the scenario relies on
// at its bounds: an order of outOfStockQty succeeds and one more is the
// declared failure; the charge of poisonAccount traps (a platform
// failure) and its neighbours succeed.
func TestGuestBoundaries(t *testing.T) {
	sc := newScenario()
	h, _ := guestHost(t, sc, io.Discard)
	charge := func(account int) string {
		return `[{"account": ` + strconv.Itoa(account) + `, "amount": 5, "currency": "eur"}]`
	}
	tests := []struct {
		name    string
		binding int
		payload string
		want    trigger.Outcome
	}{
		{"order at the stock limit", 0, `["Q", ` + strconv.Itoa(outOfStockQty) + `]`, trigger.OutcomeSuccess},
		{"order one past it", 0, `["Q", ` + strconv.Itoa(outOfStockQty+1) + `]`, trigger.OutcomeDeclaredFailure},
		{"charge below the poison account", 2, charge(poisonAccount - 1), trigger.OutcomeSuccess},
		{"charge of the poison account", 2, charge(poisonAccount), trigger.OutcomePlatformFailure},
		{"charge above the poison account", 2, charge(poisonAccount + 1), trigger.OutcomeSuccess},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := activate(t, h, sc, tt.binding, uint64(i+1), tt.payload); got != tt.want {
				t.Errorf("outcome %v, want %v", got, tt.want)
			}
		})
	}
}

// TestScenarioModules: the scenario's functions become one module per
// service, each exporting its functions with the types parsed from their
// one declaration, under the guest's bounds; a malformed type is refused.
func TestScenarioModules(t *testing.T) {
	sc := newScenario()
	mods, err := sc.modules([]byte("wasm"))
	if err != nil {
		t.Fatal(err)
	}
	type export struct{ Name, Params, Result string }
	type module struct {
		Service, Revision, Contract string
		Pages                       uint32
		Grants                      wasmhost.Grant
		Exports                     []export
	}
	var got []module
	for _, m := range mods {
		g := module{Service: m.Service, Revision: m.Revision, Contract: m.Contract, Pages: m.MemoryPages, Grants: m.Grants}
		for _, e := range m.Functions {
			var ps []string
			for _, p := range e.Params {
				ps = append(ps, p.String())
			}
			g.Exports = append(g.Exports, export{e.Name, strings.Join(ps, ", "), e.Result.String()})
		}
		got = append(got, g)
	}
	want := []module{
		{"orders", revision, "latent:orders/checkout@1.0.0", guestMemoryPages, wasmhost.GrantWASI, []export{
			{"place", "string, u32", "result<u32, enum{out-of-stock}>"},
			{"cancel", "string", "u32"},
		}},
		{"payments", revision, "latent:payments/ledger@1.0.0", guestMemoryPages, wasmhost.GrantWASI, []export{
			{"charge", "record{account: u64, amount: u32, currency: enum{eur, usd}}", "result<u32, enum{declined}>"},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("modules (-want +got):\n%s", diff)
	}
	sc.Functions[1].Result = "u33"
	if _, err := sc.modules(nil); !errors.Is(err, refhost.ErrInvalidType) {
		t.Errorf("a malformed result type: %v, want refhost.ErrInvalidType", err)
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

func TestExpectedActivations(t *testing.T) {
	bindings := []trigger.Binding{{ID: "a", MaxDeliver: 3}, {ID: "b", MaxDeliver: 5}}
	tests := []struct {
		name   string
		events []event
		want   activationCounts
	}{
		{"none", nil, activationCounts{}},
		{"good", []event{{Binding: 0, Kind: kindGood}}, activationCounts{Activations: 1, Fresh: 1, Counted: 1, One: 1}},
		{"declared", []event{{Binding: 0, Kind: kindDeclared}}, activationCounts{Activations: 1, Fresh: 1}},
		{"invalid never reaches the guest", []event{{Binding: 1, Kind: kindInvalid}}, activationCounts{}},
		{"poison at max_deliver 3 and 5", []event{{Binding: 0, Kind: kindPoison}, {Binding: 1, Kind: kindPoison}}, activationCounts{Activations: 8, Fresh: 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, expectedActivations(bindings, tt.events)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// goodSummary is a summary that meets every expectation of want and
// guest.
func goodSummary(want []row, guest activationCounts) summary {
	s := summary{Rows: append([]row(nil), want...), Events: 8, Settled: 8, Guest: guest}
	for _, r := range want {
		s.Consumers = append(s.Consumers, consumerState{Binding: r.Binding, Checked: true})
	}
	return s
}

func TestVerify(t *testing.T) {
	sc := newScenario()
	want := expectedRows(sc.Bindings, sc.Events)
	guest := expectedActivations(sc.Bindings, sc.Events)
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
		{"guest memory held", func(s *summary) { s.Host.MemoryBytes = wasmhost.PageSize }, []problem{{"host guest memory bytes", 0, wasmhost.PageSize}}},
		{"instance reused", func(s *summary) { s.Guest.Fresh-- }, []problem{{"guest activations in a fresh instance", 9, 8}}},
		{"an extra activation in a reused instance", func(s *summary) { s.Guest.Activations++ }, []problem{
			{"guest activations", 9, 10},
			{"guest activations in a fresh instance", 10, 9},
		}},
		{"a call counter of 2", func(s *summary) { s.Guest.One-- }, []problem{{"guest ok results counting one call", 5, 4}}},
		{"an ok result missing", func(s *summary) { s.Guest.Counted--; s.Guest.One-- }, []problem{{"guest ok results", 5, 4}}},
		{"instance live", func(s *summary) { s.GuestLive = 1 }, []problem{{"guest instances live", 0, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := goodSummary(want, guest)
			tt.modify(&s)
			err := verify(s, want, guest)
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
		{"defaults", nil, options{Guest: "g.wasm", Deadline: DefaultDeadline}, nil},
		{"keep", []string{"-keep"}, options{Guest: "g.wasm", Keep: true, Deadline: DefaultDeadline}, nil},
		{"min deadline", []string{"-deadline", MinDeadline.String()}, options{Guest: "g.wasm", Deadline: MinDeadline}, nil},
		{"below min", []string{"-deadline", (MinDeadline - time.Millisecond).String()}, options{}, errUsage},
		{"max deadline", []string{"-deadline", MaxDeadline.String()}, options{Guest: "g.wasm", Deadline: MaxDeadline}, nil},
		{"above max", []string{"-deadline", (MaxDeadline + time.Millisecond).String()}, options{}, errUsage},
		{"smallest cluster", []string{"-cluster", "2"}, options{Guest: "g.wasm", Deadline: DefaultDeadline, Cluster: 2}, nil},
		{"largest cluster", []string{"-cluster", "5"}, options{Guest: "g.wasm", Deadline: DefaultDeadline, Cluster: 5}, nil},
		{"cluster of one", []string{"-cluster", "1"}, options{}, errUsage},
		{"cluster of six", []string{"-cluster", "6"}, options{}, errUsage},
		{"cluster kept", []string{"-cluster", "3", "-keep"}, options{}, errUsage},
		{"verbose", []string{"-v"}, options{Guest: "g.wasm", Deadline: DefaultDeadline, Verbose: true}, nil},
		{"argument", []string{"extra"}, options{}, errUsage},
		{"help", []string{"-h"}, options{}, flag.ErrHelp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(append([]string{"-guest", "g.wasm"}, tt.args...), io.Discard)
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

// TestParseFlagsNeedsGuest: without -guest (or with an empty one) the
// demo refuses to start.
func TestParseFlagsNeedsGuest(t *testing.T) {
	for _, args := range [][]string{nil, {"-guest", ""}, {"-v"}} {
		if _, err := parseFlags(args, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("parseFlags(%q): %v, want errUsage", args, err)
		}
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
		{"deadline out of range", []string{"-guest", "g.wasm", "-deadline", "1ms"}, exitUsage},
		{"no guest", nil, exitUsage},
		{"guest missing", []string{"-guest", filepath.Join(t.TempDir(), "missing.wasm")}, exitFailed},
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
		{"empty", trigger.StepReport{Result: trigger.ResultEmpty, Ack: pull.AckNone}, row{}},
		{"acked", trigger.StepReport{Result: trigger.ResultDelivered, Delivered: 1, Action: pull.ActionAck, Ack: pull.AckVerified}, row{Delivered: 1, Acked: 1}},
		{"nacked late", trigger.StepReport{Result: trigger.ResultDelivered, Delivered: 2, Action: pull.ActionNak, Ack: pull.AckVerifiedLate}, row{Delivered: 1, Nacked: 1}},
		{"exhausted uncertain", trigger.StepReport{Result: trigger.ResultDelivered, Delivered: 3, Action: pull.ActionExhausted, Ack: pull.AckUncertain}, row{Delivered: 1, Exhausted: 1, Uncertain: 1}},
		{"shutdown", trigger.StepReport{Result: trigger.ResultShutdown, Delivered: 1, Action: pull.ActionNone, Ack: pull.AckNone}, row{Delivered: 1}},
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
		Outcome: trigger.OutcomePlatformFailure, Action: pull.ActionExhausted, Ack: pull.AckVerified,
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

func TestReadGuest(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, size int64) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(size); err != nil { // sparse: no disk for the zeros
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name    string
		path    string
		size    int
		wantErr error
	}{
		{"one byte", file("one", 1), 1, nil},
		{"at the limit", file("limit", wasmhost.MaxModuleBytes), wasmhost.MaxModuleBytes, nil},
		{"one past the limit", file("past", wasmhost.MaxModuleBytes+1), 0, errGuest},
		{"empty", file("empty", 0), 0, errGuest},
		{"missing", filepath.Join(dir, "missing"), 0, errGuest},
		{"a directory", dir, 0, errGuest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := readGuest(tt.path)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("readGuest: %v, want %v", err, tt.wantErr)
			}
			if len(b) != tt.size {
				t.Errorf("%d bytes, want %d", len(b), tt.size)
			}
		})
	}
}

func TestActivationLine(t *testing.T) {
	ref := trigger.BindingRef{Index: 0, ID: "orders-place"}
	ms := func(tenths int) time.Duration { return time.Duration(tenths) * 100 * time.Microsecond }
	tests := []struct {
		name  string
		r     wasmhost.Report
		fresh bool
		want  string
	}{
		{"ok", wasmhost.Report{Binding: ref, StreamSeq: 3, Delivered: 1, Instance: 4, Result: refhost.ResultValue{Value: uint32(1)}, Instantiate: ms(9), Call: ms(1)}, true,
			"  activation orders-place seq 3 delivery 1/3: instance #4 (fresh), guest call count 1, 0.9 ms instantiate, 0.1 ms call -> ok(1)"},
		{"a bare count", wasmhost.Report{Binding: ref, StreamSeq: 5, Delivered: 1, Instance: 6, Result: uint32(1), Instantiate: ms(12), Call: ms(0)}, true,
			"  activation orders-place seq 5 delivery 1/3: instance #6 (fresh), guest call count 1, 1.2 ms instantiate, 0.0 ms call -> 1"},
		{"declared failure", wasmhost.Report{Binding: ref, StreamSeq: 3, Delivered: 1, Instance: 5, Err: &refhost.ApplicationError{Code: "out-of-stock"},
			Result: refhost.ResultValue{Err: true, Value: "out-of-stock"}}, true,
			"  activation orders-place seq 3 delivery 1/3: instance #5 (fresh), 0.0 ms instantiate, 0.0 ms call -> err(out-of-stock)"},
		{"trap", wasmhost.Report{Binding: ref, StreamSeq: 2, Delivered: 3, Instance: 8, Err: &wasmhost.GuestError{Cause: wasmhost.CauseTrap}}, true,
			"  activation orders-place seq 2 delivery 3/3: instance #8 (fresh), 0.0 ms instantiate, 0.0 ms call -> platform failure (trap)"},
		{"reused", wasmhost.Report{Binding: ref, StreamSeq: 1, Delivered: 1, Instance: 4, Result: refhost.ResultValue{Value: uint32(2)}}, false,
			"  activation orders-place seq 1 delivery 1/3: instance #4 (REUSED), guest call count 2, 0.0 ms instantiate, 0.0 ms call -> ok(2)"},
		{"no instance", wasmhost.Report{Binding: ref, StreamSeq: 1, Delivered: 2, Err: &wasmhost.GuestError{Cause: wasmhost.CauseInterrupted}}, false,
			"  activation orders-place seq 1 delivery 2/3: no instance, 0.0 ms instantiate, 0.0 ms call -> platform failure (interrupted)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, activationLine(&tt.r, maxDeliver, tt.fresh)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestActivationLog: an instance number reported twice is fresh only the
// first time, a report without an instance never is, and only ok results
// count calls; each report is one line.
func TestActivationLog(t *testing.T) {
	bindings := newScenario().Bindings
	ref := trigger.BindingRef{Index: 2, ID: "payments-charge"}
	reports := []wasmhost.Report{
		{Binding: ref, StreamSeq: 1, Delivered: 1, Instance: 1, Result: refhost.ResultValue{Value: uint32(1)}},
		{Binding: ref, StreamSeq: 3, Delivered: 1, Instance: 1, Result: refhost.ResultValue{Value: uint32(2)}},
		{Binding: ref, StreamSeq: 2, Delivered: 1, Instance: 2, Err: &wasmhost.GuestError{Cause: wasmhost.CauseTrap}},
		{Binding: ref, StreamSeq: 2, Delivered: 2, Err: &wasmhost.GuestError{Cause: wasmhost.CauseInterrupted}},
	}
	var out bytes.Buffer
	log := newActivationLog(&lockedWriter{w: &out}, bindings)
	for i := range reports {
		log.record(&reports[i])
	}
	if diff := cmp.Diff(activationCounts{Activations: 4, Fresh: 2, Counted: 2, One: 1}, log.totals()); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	want := "" +
		"  activation payments-charge seq 1 delivery 1/3: instance #1 (fresh), guest call count 1, 0.0 ms instantiate, 0.0 ms call -> ok(1)\n" +
		"  activation payments-charge seq 3 delivery 1/3: instance #1 (REUSED), guest call count 2, 0.0 ms instantiate, 0.0 ms call -> ok(2)\n" +
		"  activation payments-charge seq 2 delivery 1/3: instance #2 (fresh), 0.0 ms instantiate, 0.0 ms call -> platform failure (trap)\n" +
		"  activation payments-charge seq 2 delivery 2/3: no instance, 0.0 ms instantiate, 0.0 ms call -> platform failure (interrupted)\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}
