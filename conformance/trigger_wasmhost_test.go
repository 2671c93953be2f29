package conformance_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
	"github.com/latent-systems/latent-nats/trigger/wasmhost"
)

// The function-side scenarios of the specification, run with WebAssembly
// guests (trigger/wasmhost) behind the reference host in place of the Go
// functions of TestTriggerDeclaredFailure, TestTriggerInvalidPayloads,
// TestTriggerPoisonRetries, TestTriggerRouteReplacement,
// TestTriggerShutdown, TestTriggerOverload and TestTriggerIdleBindings.
// Each ends with the ledger's verdict (trigWasm records a run when a guest
// was instantiated).

// trigWasmStopCap bounds how long Run takes to return, and the reference
// host to be idle (the guest's instance closed), after the owner stops
// with a guest in an infinite loop. wazero closes the instance when the
// activation's context is done (Runtime's close-on-context-done); the
// figure measured is logged. The cap is half the activation's budget in
// TestTriggerWasmShutdown, so that only the stop, not the deadline, meets
// it.
const trigWasmStopCap = 2 * time.Second

func trigIsDelivered(r trigger.StepReport) bool { return r.Result == trigger.ResultDelivered }

// TestTriggerWasmDeclaredFailure delivers a message whose guest returns
// the failure its contract declares (err(rejected)): the delivery is
// terminated with the broker's receipt, the guest ran once, in one
// instance, and nothing is redelivered.
func TestTriggerWasmDeclaredFailure(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{tenants: []string{"wdecl"}, perTenant: []int{1}, wasm: &trigWasmSpec{r1: "handler"}})
	id := e.cfg.Bindings[0].ID
	seq := e.publish(0, 0, argFail)
	r := e.stepUntil(t, "delivery", 4, trigIsDelivered)
	want := trigStepView{Result: trigger.ResultDelivered, StreamSeq: seq, Delivered: 1, RouteGeneration: 1,
		Outcome: trigger.OutcomeDeclaredFailure, Action: pull.ActionTerm, Ack: pull.AckVerified}
	if diff := cmp.Diff(want, trigViewOf(r)); diff != "" {
		t.Errorf("step (-want +got):\n%s", diff)
	}
	run := e.wasm.nextRun(t)
	wantRun := trigWasmRun{Binding: id, Revision: "r1", StreamSeq: seq, Delivered: 1, Instance: 1,
		Result: refhost.ResultValue{Err: true, Value: trigDeclared}, Code: trigDeclared}
	if diff := cmp.Diff(wantRun, run, trigWasmRunCmp()); diff != "" {
		t.Errorf("guest run (-want +got):\n%s", diff)
	}
	var ae *refhost.ApplicationError
	if !errors.As(run.Err, &ae) {
		t.Errorf("guest error %v, want a *refhost.ApplicationError", run.Err)
	}
	trigTerminated(t, e.tenant(0), 0, seq)
	if r := e.step(t); r.Result != trigger.ResultEmpty {
		t.Errorf("visit after the TERM %+v, want empty", r)
	}
	if s := e.mon.Snapshot().Totals; s.Termed != 1 || s.Acked+s.Nacked+s.Exhausted+s.Uncertain != 0 || s.Outcome(trigger.OutcomeDeclaredFailure) != 1 {
		t.Errorf("counts %+v", s)
	}
	if diff := cmp.Diff(trigWasmStats{Modules: 1, Instances: 1}, e.wasm.stats()); diff != "" {
		t.Errorf("wasm stats (-want +got):\n%s", diff)
	}
	v, _ := e.settle(t)
	checkVerdict(t, v, true)
	if v.Executions != 1 || v.Deliveries != 1 || len(v.Reexecutions) != 0 {
		t.Errorf("verdict %s: want one delivery, run once", v)
	}
	e.trig.CloseIdle()
}

// TestTriggerWasmInvalidPayloads delivers payloads the function's
// signature refuses: each is terminated as invalid arguments by the
// reference host's decoder, and no instance of the guest is made for it.
// A valid payload afterwards runs in the first instance.
func TestTriggerWasmInvalidPayloads(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{tenants: []string{"winval"}, perTenant: []int{1}, wasm: &trigWasmSpec{r1: "handler"}})
	te := e.tenant(0)
	id := e.cfg.Bindings[0].ID
	payloads := []struct {
		name    string
		payload []byte
	}{
		{"wrong type", []byte(`[1]`)},
		{"two arguments", []byte(`["a","b"]`)},
		{"not JSON", []byte(`ok`)},
		{"not an array", []byte(`"ok"`)},
		{"no argument", []byte(`[]`)},
		{"record for string", []byte(`[{"ok":true}]`)},
		{"truncated", []byte(`["ok"`)},
		{"trailing data", []byte(`["ok"] 1`)},
		{"invalid UTF-8", []byte("[\"\xff\"]")},
		{"lone surrogate", []byte(`["\ud800"]`)},
	}
	for _, p := range payloads {
		t.Run(p.name, func(t *testing.T) {
			seq := te.publishRaw(trigSubject(te.id, 0), p.payload)
			e.led.Published(id, seq)
			r := e.stepUntil(t, p.name, 4, trigIsDelivered)
			want := trigStepView{Result: trigger.ResultDelivered, StreamSeq: seq, Delivered: 1, RouteGeneration: 1,
				Outcome: trigger.OutcomeInvalidArguments, Action: pull.ActionTerm, Ack: pull.AckVerified}
			if diff := cmp.Diff(want, trigViewOf(r)); diff != "" {
				t.Errorf("step (-want +got):\n%s", diff)
			}
			trigTerminated(t, te, 0, seq)
			if diff := cmp.Diff(trigWasmStats{Modules: 1}, e.wasm.stats()); diff != "" {
				t.Errorf("wasm stats (-want +got): an instance was made for a refused payload:\n%s", diff)
			}
		})
	}
	if runs := e.wasm.runLog(); len(runs) != 0 {
		t.Errorf("the guest ran for invalid payloads: %+v", runs)
	}
	n := uint64(len(payloads))
	if s := e.ref.Stats(); s.Outcome(trigger.OutcomeInvalidArguments) != n || s.Activations != n {
		t.Errorf("host stats %+v: want %d activations, all invalid arguments", s, n)
	}
	if s := e.mon.Snapshot().Totals; s.Termed != n || s.Outcome(trigger.OutcomeInvalidArguments) != n || s.Delivered != n {
		t.Errorf("counts %+v", s)
	}

	// A valid payload afterwards runs, in the first instance made.
	seq := e.publish(0, 0, argOK)
	r := e.stepUntil(t, "valid payload", 4, trigIsDelivered)
	want := trigStepView{Result: trigger.ResultDelivered, StreamSeq: seq, Delivered: 1, RouteGeneration: 1,
		Outcome: trigger.OutcomeSuccess, Action: pull.ActionAck, Ack: pull.AckVerified}
	if diff := cmp.Diff(want, trigViewOf(r)); diff != "" {
		t.Errorf("valid payload: step (-want +got):\n%s", diff)
	}
	wantRun := trigWasmRun{Binding: id, Revision: "r1", StreamSeq: seq, Delivered: 1, Instance: 1, Result: refhost.ResultValue{}}
	if diff := cmp.Diff(wantRun, e.wasm.nextRun(t), trigWasmRunCmp()); diff != "" {
		t.Errorf("valid payload: guest run (-want +got):\n%s", diff)
	}
	trigTerminated(t, te, 0, seq)
	if diff := cmp.Diff(trigWasmStats{Modules: 1, Instances: 1}, e.wasm.stats()); diff != "" {
		t.Errorf("wasm stats (-want +got):\n%s", diff)
	}
	v, _ := e.settle(t)
	checkVerdict(t, v, true)
	if v.Published != int(n)+1 || v.Deliveries != int(n)+1 || v.Executions != 1 {
		t.Errorf("verdict %s: want %d deliveries, one run", v, n+1)
	}
	e.trig.CloseIdle()
}

// TestTriggerWasmPoisonRetries delivers a message whose guest always traps,
// a platform failure: each delivery but the last is negatively
// acknowledged with the binding's delay, the broker redelivers no sooner,
// and the delivery at max_deliver is terminated and reported exhausted.
// The guest ran exactly max_deliver times, each in a fresh instance.
func TestTriggerWasmPoisonRetries(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{
		tenants:   []string{"wpoison"},
		perTenant: []int{1},
		binding:   func(_, _ int, b *trigger.Binding) { b.MaxDeliver, b.NakDelayMS = 3, 200 },
		wasm:      &trigWasmSpec{r1: "handler"},
	})
	te := e.tenant(0)
	b := e.cfg.Bindings[0]
	seq := e.publish(0, 0, argRetry)
	run := e.run(t)
	trigEventually(t, "exhausted", trigWait, func() bool { return e.mon.Snapshot().Totals.Exhausted == 1 })
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}

	var want []trigWasmRun
	for n := range uint64(b.MaxDeliver) {
		want = append(want, trigWasmRun{Binding: b.ID, Revision: "r1", StreamSeq: seq, Delivered: n + 1, Instance: n + 1, Cause: wasmhost.CauseTrap})
	}
	runs := e.wasm.runLog()
	if diff := cmp.Diff(want, runs, trigWasmRunCmp()); diff != "" {
		t.Fatalf("guest runs (-want +got): want max_deliver runs, each in a fresh instance:\n%s", diff)
	}
	// Each report comes after its instance closed, before the NAK; the
	// broker holds the redelivery for the delay counted from the NAK.
	for n := 1; n < len(runs); n++ {
		if gap := runs[n].At.Sub(runs[n-1].At); gap < b.NakDelay() {
			t.Errorf("delivery %d ran %v after the previous one, before the %v delay", n+1, gap, b.NakDelay())
		}
	}
	got := e.mon.Snapshot().Bindings[0]
	retries := uint64(b.MaxDeliver - 1)
	if got.Delivered != uint64(b.MaxDeliver) || got.Nacked != retries || got.Exhausted != 1 || got.Termed != 0 ||
		got.Acked != 0 || got.Uncertain != 0 || got.Outcome(trigger.OutcomePlatformFailure) != uint64(b.MaxDeliver) {
		t.Errorf("counts %+v: want %d NAKs then one exhausted TERM of platform failures", got, retries)
	}
	last, _ := e.mon.LastStep()
	wantLast := trigStepView{Result: trigger.ResultDelivered, StreamSeq: seq, Delivered: uint64(b.MaxDeliver), RouteGeneration: 1,
		Outcome: trigger.OutcomePlatformFailure, Action: pull.ActionExhausted, Ack: pull.AckVerified}
	if diff := cmp.Diff(wantLast, trigViewOf(last)); diff != "" {
		t.Errorf("LastStep (-want +got):\n%s", diff)
	}
	trigTerminated(t, te, 0, seq)
	if info := te.info(0); info.Delivered.ConsumerSeq != uint64(b.MaxDeliver) {
		t.Errorf("consumer delivered %d times, want %d", info.Delivered.ConsumerSeq, b.MaxDeliver)
	}
	if r := e.step(t); r.Result != trigger.ResultEmpty {
		t.Errorf("visit after exhaustion %+v, want empty", r)
	}
	s := e.wasm.rt.Stats()
	if diff := cmp.Diff(trigWasmStats{Modules: 1, Instances: uint64(b.MaxDeliver)}, e.wasm.stats()); diff != "" || s.Failure(wasmhost.CauseTrap) != uint64(b.MaxDeliver) {
		t.Errorf("wasm stats %+v, %d traps (-want +got):\n%s", s, s.Failure(wasmhost.CauseTrap), diff)
	}
	v, _ := e.settle(t)
	checkVerdict(t, v, true)
	key := ledger.Key{Binding: b.ID, Seq: seq}
	wantRe := []ledger.Reexecution{{Key: key, Delivered: 2, Cause: ledger.CauseNak}, {Key: key, Delivered: 3, Cause: ledger.CauseNak}}
	if diff := cmp.Diff(wantRe, v.Reexecutions); diff != "" {
		t.Errorf("re-executions (-want +got):\n%s", diff)
	}
	e.trig.CloseIdle()
}

// TestTriggerWasmRouteReplacement registers revisions r1 and r2 as two
// modules and replaces the route after the host pinned r1 for a visit and
// before its activation: the accepted input runs r1 under the generation
// it pinned, and the next pull runs r2. Without a route nothing is pulled;
// the route set again is resolved at the next visit.
func TestTriggerWasmRouteReplacement(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{tenants: []string{"wroute"}, perTenant: []int{1}, wasm: &trigWasmSpec{r1: "handler", r2: "handler"}})
	te := e.tenant(0)
	id := e.cfg.Bindings[0].ID
	check := func(what string, r trigger.StepReport, seq, gen uint64, revision string, instance uint64) {
		t.Helper()
		want := trigStepView{Result: trigger.ResultDelivered, StreamSeq: seq, Delivered: 1, RouteGeneration: gen,
			Outcome: trigger.OutcomeSuccess, Action: pull.ActionAck, Ack: pull.AckVerified}
		if diff := cmp.Diff(want, trigViewOf(r)); diff != "" {
			t.Errorf("%s: step (-want +got):\n%s", what, diff)
		}
		wantRun := trigWasmRun{Binding: id, Revision: revision, StreamSeq: seq, Delivered: 1, Instance: instance, Result: refhost.ResultValue{}}
		if diff := cmp.Diff(wantRun, e.wasm.nextRun(t), trigWasmRunCmp()); diff != "" {
			t.Errorf("%s: guest run (-want +got):\n%s", what, diff)
		}
	}

	// The route moves to r2 (generation 2) right after this visit pinned
	// r1 (generation 1), before anything was pulled.
	var replaced uint64
	e.host.set(func(trigger.BindingRef) {
		gen, err := e.ref.SetRoute(trigService, "", "r2")
		if err != nil {
			t.Error(err)
		}
		replaced = gen
		e.host.set(nil, nil) // once
	}, nil)
	seq := e.publish(0, 0, argOK)
	r := e.stepUntil(t, "first delivery", 4, trigIsDelivered)
	if replaced != 2 {
		t.Fatalf("route generation after replacement %d, want 2", replaced)
	}
	check("accepted input", r, seq, 1, "r1", 1)

	// The next pull resolves the current route.
	seq = e.publish(0, 0, argOK)
	r = e.stepUntil(t, "delivery after replacement", 4, trigIsDelivered)
	check("next pull", r, seq, 2, "r2", 2)

	// Without a route the host reserves nothing and nothing is pulled.
	e.ref.RemoveRoute(trigService, "")
	seq = e.publish(0, 0, argOK)
	before := te.info(0)
	for i := range 3 {
		if r := e.step(t); r.Result != trigger.ResultSkipped || r.Error != trigger.ClassHost {
			t.Fatalf("visit %d without a route: %+v, want skipped by the host", i, r)
		}
	}
	if got := te.info(0); got != before || got.NumPending != 1 {
		t.Errorf("consumer %+v before, %+v after visits without a route", before, got)
	}
	gen, err := e.ref.SetRoute(trigService, "", "r1")
	if err != nil {
		t.Fatal(err)
	}
	if gen != 4 {
		t.Errorf("route generation %d after removal and return, want 4", gen)
	}
	r = e.stepUntil(t, "delivery after the route returned", 4, trigIsDelivered)
	check("route returned", r, seq, gen, "r1", 3)
	if s := e.ref.Stats(); s.NoRoute != 3 || s.Misuse != 0 {
		t.Errorf("host stats %+v: want 3 refused for want of a route, no misuse", s)
	}
	if diff := cmp.Diff(trigWasmStats{Modules: 2, Instances: 3}, e.wasm.stats()); diff != "" {
		t.Errorf("wasm stats (-want +got):\n%s", diff)
	}
	v, _ := e.settle(t)
	checkVerdict(t, v, true)
	if v.Executions != 3 || len(v.Reexecutions) != 0 {
		t.Errorf("verdict %s: want three runs, none again", v)
	}
	e.trig.CloseIdle()
}

// TestTriggerWasmShutdown stops the owner twice with work in hand. First
// with a guest executing: loop.wasm (revision r1) loops forever under a
// 4 s budget, and the stop makes Run return and closes the instance
// within trigWasmStopCap, the guest reported interrupted by the
// cancellation. Then with work pending and nothing executing: one
// delivery pulled, its activation not started, two more in the stream.
// Each time nothing is acknowledged and the broker keeps the pulled
// delivery awaiting acknowledgement; after the ack wait a new Run, routed
// to handler.wasm (r2), runs both again and the rest, and the verdict
// explains the one re-execution by the shutdown.
func TestTriggerWasmShutdown(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{
		tenants:   []string{"wstop"},
		perTenant: []int{2},
		binding: func(_, _ int, b *trigger.Binding) {
			b.OperationTimeoutMS, b.RootBudgetMS, b.AckWaitMS = 4000, 4000, 5000
		},
		wasm: &trigWasmSpec{r1: "loop", r2: "handler"},
	})
	te := e.tenant(0)
	id0, id1 := e.cfg.Bindings[0].ID, e.cfg.Bindings[1].ID
	reclaimed := func(what string) {
		t.Helper()
		if s := e.ref.Stats(); s.Slots != 0 || s.InputBytes != 0 || s.MemoryBytes != 0 || s.Running != 0 || s.Reservations != s.Releases || s.Misuse != 0 {
			t.Errorf("%s: host holds %+v", what, s)
		}
		if u := e.pools.Usage(); u.Requests != 0 || u.Clients != 0 || u.Connections != 0 {
			t.Errorf("%s: pools hold %+v", what, u)
		}
	}

	// Executing: binding 1's guest loops; the owner stops.
	seq1 := e.publish(0, 1, argOK)
	run := e.run(t)
	// Executing means its instance is made: an activation counts as live
	// from before its instantiation, and a step reported before the
	// instance exists would not be held for the guest's report (see
	// trigWasm.observe).
	trigEventually(t, "a guest executing", trigWait, func() bool {
		s := e.wasm.stats()
		return s.Live == 1 && s.Instances == 1
	})
	stopped := time.Now()
	if err := run.stop(); err != nil {
		t.Fatalf("Run with a guest executing: %v", err)
	}
	returned := time.Since(stopped)
	ctx, cancel := context.WithTimeout(t.Context(), trigWait)
	err := e.ref.WaitIdle(ctx)
	cancel()
	idle := time.Since(stopped)
	if err != nil {
		t.Fatalf("reference host not idle after the stop: %v", err)
	}
	if returned > trigWasmStopCap || idle > trigWasmStopCap {
		t.Errorf("Run returned %v and the host was idle %v after the stop, want both within %v", returned, idle, trigWasmStopCap)
	}
	interrupted := e.wasm.nextRun(t)
	wantRun := trigWasmRun{Binding: id1, Revision: "r1", StreamSeq: seq1, Delivered: 1, Instance: 1, Cause: wasmhost.CauseInterrupted}
	if diff := cmp.Diff(wantRun, interrupted, trigWasmRunCmp()); diff != "" {
		t.Errorf("interrupted guest (-want +got):\n%s", diff)
	}
	if !errors.Is(interrupted.Err, context.Canceled) {
		t.Errorf("guest error %v, want the owner's cancellation (not the deadline)", interrupted.Err)
	}
	if diff := cmp.Diff(trigWasmStats{Modules: 2, Instances: 1}, e.wasm.stats()); diff != "" {
		t.Errorf("wasm stats after the stop (-want +got):\n%s", diff)
	}
	last, _ := e.mon.LastStep()
	wantLast := trigStepView{Binding: 1, Result: trigger.ResultShutdown, StreamSeq: seq1, Delivered: 1, RouteGeneration: 1,
		Outcome: trigger.OutcomeCancelled, Action: pull.ActionNone, Ack: pull.AckNone, Error: trigger.ClassShutdown}
	if diff := cmp.Diff(wantLast, trigViewOf(last)); diff != "" {
		t.Errorf("executing: LastStep (-want +got):\n%s", diff)
	}
	if got := te.info(1); got.NumAckPending != 1 || got.NumPending != 0 || got.AckFloor.StreamSeq != 0 || got.Delivered.ConsumerSeq != 1 {
		t.Errorf("executing: consumer %+v, want the delivery awaiting acknowledgement", got)
	}
	reclaimed("executing")
	t.Logf("stop with a guest executing: Run returned in %v, host idle in %v, guest reported %v after the stop",
		returned, idle, interrupted.At.Sub(stopped))

	// Pending: the owner stops between the pull and the activation, with
	// two more messages in the stream.
	pending := []uint64{e.publish(0, 0, argOK), e.publish(0, 0, argOK), e.publish(0, 0, argOK)}
	ctx, cancel = context.WithCancel(t.Context())
	e.host.set(nil, func(trigger.Activation) { cancel() })
	run = runOwnerCtx(t, e.trig, e.host, ctx, cancel)
	if err := run.wait(t); err != nil {
		t.Fatalf("Run with pending work: %v", err)
	}
	e.host.set(nil, nil)
	last, _ = e.mon.LastStep()
	wantLast = trigStepView{Binding: 0, Result: trigger.ResultShutdown, StreamSeq: pending[0], Delivered: 1, RouteGeneration: 1,
		Outcome: trigger.OutcomeCancelled, Action: pull.ActionNone, Ack: pull.AckNone, Error: trigger.ClassShutdown}
	if diff := cmp.Diff(wantLast, trigViewOf(last)); diff != "" {
		t.Errorf("pending: LastStep (-want +got):\n%s", diff)
	}
	if got := te.info(0); got.NumAckPending != 1 || got.NumPending != 2 || got.AckFloor.StreamSeq != 0 || got.Delivered.ConsumerSeq != 1 {
		t.Errorf("pending: consumer %+v, want one delivery awaiting acknowledgement, two pending", got)
	}
	if diff := cmp.Diff(trigWasmStats{Modules: 2, Instances: 1}, e.wasm.stats()); diff != "" {
		t.Errorf("pending: an instance was made (-want +got):\n%s", diff)
	}
	reclaimed("pending")
	if s := e.mon.Snapshot().Totals; s.Unacknowledged != 2 || s.Acked+s.Termed+s.Nacked+s.Exhausted != 0 || s.Delivered != 2 {
		t.Errorf("counts %+v: want two deliveries, nothing sent", s)
	}

	// After the ack wait a new Run, routed to handler.wasm, runs both
	// deliveries again and the two never pulled.
	if gen, err := e.ref.SetRoute(trigService, "", "r2"); err != nil || gen != 2 {
		t.Fatalf("SetRoute r2: generation %d, %v", gen, err)
	}
	run = e.run(t)
	v, took := e.settle(t)
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkVerdict(t, v, true)
	wantRe := []ledger.Reexecution{{Key: ledger.Key{Binding: id1, Seq: seq1}, Delivered: 2, Cause: ledger.CauseShutdown}}
	if diff := cmp.Diff(wantRe, v.Reexecutions); diff != "" {
		t.Errorf("re-executions (-want +got):\n%s", diff)
	}
	if v.Executions != 5 || v.Deliveries != 6 {
		t.Errorf("verdict %s: want 6 deliveries, 5 runs", v)
	}
	runs := e.wasm.runLog()[1:]
	slices.SortFunc(runs, func(a, b trigWasmRun) int {
		if c := strings.Compare(a.Binding, b.Binding); c != 0 {
			return c
		}
		return int(a.StreamSeq) - int(b.StreamSeq)
	})
	instances := make(map[uint64]bool)
	for i := range runs {
		instances[runs[i].Instance] = true
		runs[i].Instance = 0 // the order of the bindings' visits is the runtime's
	}
	wantRuns := []trigWasmRun{
		{Binding: id0, Revision: "r2", StreamSeq: pending[0], Delivered: 2, Result: refhost.ResultValue{}},
		{Binding: id0, Revision: "r2", StreamSeq: pending[1], Delivered: 1, Result: refhost.ResultValue{}},
		{Binding: id0, Revision: "r2", StreamSeq: pending[2], Delivered: 1, Result: refhost.ResultValue{}},
		{Binding: id1, Revision: "r2", StreamSeq: seq1, Delivered: 2, Result: refhost.ResultValue{}},
	}
	if diff := cmp.Diff(wantRuns, runs, trigWasmRunCmp()); diff != "" {
		t.Errorf("runs after the restart (-want +got):\n%s", diff)
	}
	if len(instances) != len(wantRuns) || instances[0] || instances[1] {
		t.Errorf("instances %v: want each run in a fresh instance", instances)
	}
	if diff := cmp.Diff(trigWasmStats{Modules: 2, Instances: 5}, e.wasm.stats()); diff != "" {
		t.Errorf("wasm stats (-want +got):\n%s", diff)
	}
	reclaimed("after the redelivery")
	t.Logf("redelivered and settled %v after the new Run", took)
}

// TestTriggerWasmOverload holds the reference host's guest memory outside
// the runtime (one reservation of the guest's ceiling, all the host
// has), with slots and input to spare: a visit makes no pull and the
// broker sees no request at all (no dial before the tenant's first
// connection, no message on it afterwards, the consumer unchanged); no
// instance is made. Once the reservation is released, the message is
// delivered.
func TestTriggerWasmOverload(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{
		tenants:   []string{"wover"},
		perTenant: []int{1},
		host:      &refhost.Config{MaxActivations: 16, MaxInputBytes: 16 * 256, MaxMemoryBytes: trigWasmMemory},
		wasm:      &trigWasmSpec{r1: "handler"},
	})
	te := e.tenant(0)
	sys := newTrigSys(t, e.b)
	// Another binding of the same function: its reservation pins r1 and
	// holds the guest's ceiling, as its running guest would.
	other := trigger.BindingRef{LogicalID: "other", Epoch: 1, ID: "other", Tenant: "other", Principal: "svc:other",
		Service: trigService, Contract: trigContract, Function: trigFunction}
	hold := func() trigger.Inbound {
		t.Helper()
		req := trigger.InboundRequest{Binding: other, MaxInputBytes: 1}
		in, err := e.ref.ReserveInbound(t.Context(), req)
		if err != nil {
			t.Fatalf("holding the guest memory: %v", err)
		}
		// The guest memory, and nothing else, is now exhausted.
		_, err = e.ref.ReserveInbound(t.Context(), req)
		var ue *refhost.UnavailableError
		if !errors.As(err, &ue) || ue.Resource != refhost.ResourceMemory || !errors.Is(err, trigger.ErrUnavailable) {
			t.Fatalf("a second reservation: %v, want guest memory unavailable", err)
		}
		if s := e.ref.Stats(); s.MemoryBytes != trigWasmMemory || s.Slots != 1 {
			t.Fatalf("host holds %+v, want one slot and the guest's ceiling", s)
		}
		return in
	}
	const visits = 5
	unavailable := func(what string) {
		t.Helper()
		before, host, wasm := e.mon.Snapshot().Totals, e.ref.Stats(), e.wasm.stats()
		for i := range visits {
			r := e.step(t)
			if r.Result != trigger.ResultSkipped || r.Error != trigger.ClassUnavailable || r.RouteGeneration != 0 {
				t.Fatalf("%s: visit %d: %+v, want skipped as unavailable", what, i, r)
			}
		}
		after := e.mon.Snapshot().Totals
		if got := after.Error(trigger.ClassUnavailable) - before.Error(trigger.ClassUnavailable); got != visits || after.Skipped-before.Skipped != visits {
			t.Errorf("%s: %d visits counted unavailable, want %d", what, got, visits)
		}
		if after.Delivered != before.Delivered || after.Empty != before.Empty || after.EmptyPulls != before.EmptyPulls {
			t.Errorf("%s: counts moved from %+v to %+v", what, before, after)
		}
		if got := e.ref.Stats().Unavailable - host.Unavailable; got != visits {
			t.Errorf("%s: host refused %d reservations, want %d", what, got, visits)
		}
		if u := e.pools.Usage(); u.Requests != 0 {
			t.Errorf("%s: %d ingress requests held", what, u.Requests)
		}
		if diff := cmp.Diff(wasm, e.wasm.stats()); diff != "" {
			t.Errorf("%s: wasm stats moved (-before +after):\n%s", what, diff)
		}
	}
	deliver := func(what string, seq uint64, instance uint64) {
		t.Helper()
		r := e.stepUntil(t, what, 4, trigIsDelivered)
		if r.StreamSeq != seq || r.Outcome != trigger.OutcomeSuccess || r.Ack != pull.AckVerified {
			t.Errorf("%s: delivery %+v, want seq %d acknowledged", what, r, seq)
		}
		wantRun := trigWasmRun{Binding: e.cfg.Bindings[0].ID, Revision: "r1", StreamSeq: seq, Delivered: 1, Instance: instance, Result: refhost.ResultValue{}}
		if diff := cmp.Diff(wantRun, e.wasm.nextRun(t), trigWasmRunCmp()); diff != "" {
			t.Errorf("%s: guest run (-want +got):\n%s", what, diff)
		}
	}

	// Before the tenant's first connection: no dial at all.
	seq := e.publish(0, 0, argOK)
	in := hold()
	unavailable("no connection yet")
	if snap := e.mon.Snapshot(); snap.Dials != 0 {
		t.Errorf("%d dials while the guest memory was held, want none", snap.Dials)
	}
	if conns := sys.runtimeConns(te.account); len(conns) != 0 {
		t.Errorf("broker sees %d runtime connections, want none", len(conns))
	}
	if got := te.info(0); got.NumPending != 1 || got.Delivered.ConsumerSeq != 0 || got.NumWaiting != 0 || got.NumAckPending != 0 {
		t.Errorf("consumer after refused visits: %+v, want the message pending and nothing delivered", got)
	}
	in.Release()
	deliver("first connection", seq, 1)

	// With the connection open: no request on it.
	seq = e.publish(0, 0, argOK)
	conns := sys.runtimeConns(te.account)
	if len(conns) != 1 {
		t.Fatalf("broker sees %d runtime connections, want 1", len(conns))
	}
	infoBefore := te.info(0)
	in = hold()
	unavailable("connection open")
	after := sys.runtimeConns(te.account)
	if len(after) != 1 || after[0].CID != conns[0].CID || after[0].InMsgs != conns[0].InMsgs {
		t.Errorf("broker saw %+v then %+v: want no request in between", conns, after)
	}
	if diff := cmp.Diff(infoBefore, te.info(0)); diff != "" || infoBefore.NumPending != 1 || infoBefore.NumWaiting != 0 {
		t.Errorf("consumer %+v before the refused visits, changed (-before +after):\n%s", infoBefore, diff)
	}
	in.Release()
	deliver("memory released", seq, 2)

	if s := e.ref.Stats(); s.Slots != 0 || s.InputBytes != 0 || s.MemoryBytes != 0 {
		t.Errorf("host still holds %+v", s)
	}
	if diff := cmp.Diff(trigWasmStats{Modules: 1, Instances: 2}, e.wasm.stats()); diff != "" {
		t.Errorf("wasm stats (-want +got):\n%s", diff)
	}
	v, _ := e.settle(t)
	checkVerdict(t, v, true)
	if v.Executions != 2 || len(v.Reexecutions) != 0 {
		t.Errorf("verdict %s: want two runs, none again", v)
	}
	e.trig.CloseIdle()
}

// TestTriggerWasmIdleBindings routes the profile's most bindings, 256 of
// one tenant, to one guest module and makes two laps of visits with
// nothing published: the module was compiled once and no instance exists
// or was made, though every visit reserved the guest's ceiling and
// released it. Events published to three bindings then make exactly three
// instances.
func TestTriggerWasmIdleBindings(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{
		tenants:      []string{"widle"},
		perTenant:    []int{trigger.MaxBindings},
		prefixGrants: true, // see TestTriggerIdleBindings
		wasm:         &trigWasmSpec{r1: "handler"},
	})
	const laps = 2
	for i := range laps * trigger.MaxBindings {
		if r := e.step(t); r.Result != trigger.ResultEmpty || r.Binding != i%trigger.MaxBindings {
			t.Fatalf("step %d: %+v, want an empty visit of binding %d", i+1, r, i%trigger.MaxBindings)
		}
	}
	if diff := cmp.Diff(trigWasmStats{Modules: 1}, e.wasm.stats()); diff != "" {
		t.Errorf("wasm stats after %d idle laps (-want +got):\n%s", laps, diff)
	}
	if s := e.ref.Stats(); s.Reservations != laps*trigger.MaxBindings || s.Releases != s.Reservations || s.Activations != 0 ||
		s.Slots != 0 || s.MemoryBytes != 0 {
		t.Errorf("host stats %+v: want %d reservations released, no activation", s, laps*trigger.MaxBindings)
	}

	targets := []int{0, trigger.MaxBindings / 2, trigger.MaxBindings - 1}
	var want []trigWasmRun
	for n, i := range targets {
		seq := e.publish(0, i, argOK)
		want = append(want, trigWasmRun{Binding: e.cfg.Bindings[i].ID, Revision: "r1", StreamSeq: seq, Delivered: 1, Instance: uint64(n + 1), Result: refhost.ResultValue{}})
	}
	// One lap from binding 0 visits them in order.
	delivered := 0
	deadline := time.Now().Add(trigWait)
	for n := 0; n < trigger.MaxBindings && delivered < len(targets) && time.Now().Before(deadline); n++ {
		if r := e.step(t); r.Result == trigger.ResultDelivered && r.Ack == pull.AckVerified {
			delivered++
		}
	}
	if delivered != len(targets) {
		t.Fatalf("%d of %d events delivered and acknowledged within one lap", delivered, len(targets))
	}
	if diff := cmp.Diff(want, e.wasm.runLog(), trigWasmRunCmp()); diff != "" {
		t.Errorf("guest runs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(trigWasmStats{Modules: 1, Instances: uint64(len(targets))}, e.wasm.stats()); diff != "" {
		t.Errorf("wasm stats (-want +got):\n%s", diff)
	}
	v, _ := e.settle(t)
	checkVerdict(t, v, true)
	if v.Executions != len(targets) || len(v.Reexecutions) != 0 {
		t.Errorf("verdict %s: want %d runs, none again", v, len(targets))
	}
	e.trig.CloseIdle()
}
