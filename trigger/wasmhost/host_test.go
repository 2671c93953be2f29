package wasmhost_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
	"github.com/latent-systems/latent-nats/trigger/wasmhost"
)

// The fixture: service "events", contract "events-v1", function "handle:
// func(arg: string) -> result<_, enum{rejected}>" in revision r1, as the
// guests under testdata/guests export it.
const (
	fxService  = "events"
	fxContract = "events-v1"
	fxFunction = "handle"
	fxPages    = 4
)

// handleResult is the declared result of handle.
func handleResult() *refhost.Type {
	e := refhost.Enum("rejected")
	r := refhost.Result(nil, &e)
	return &r
}

// handleModule is a guest exporting handle, under revision.
func handleModule(bin []byte, revision string) wasmhost.Module {
	return wasmhost.Module{
		Service: fxService, Revision: revision, Contract: fxContract, Binary: bin,
		Functions:   []wasmhost.Export{{Name: fxFunction, Params: []refhost.Type{refhost.String()}, Result: handleResult()}},
		MemoryPages: fxPages,
	}
}

// env is a reference host with a wasm runtime, recording reports.
type env struct {
	ref *refhost.Host
	rt  *wasmhost.Runtime

	mu      sync.Mutex
	reports []wasmhost.Report
}

func newEnv(t *testing.T, cfg refhost.Config) *env {
	t.Helper()
	ref, err := refhost.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{ref: ref}
	rt, err := wasmhost.New(context.Background(), ref, wasmhost.Config{OnActivation: e.observe, CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	e.rt = rt
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := ref.WaitIdle(ctx); err != nil {
			t.Errorf("WaitIdle: %v", err)
		}
		if err := rt.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

func hostConfig() refhost.Config {
	return refhost.Config{MaxActivations: 4, MaxInputBytes: 4 * trigger.MaxPayloadBytes, MaxMemoryBytes: 4 * fxPages * wasmhost.PageSize}
}

func (e *env) observe(r *wasmhost.Report) {
	c := *r
	c.Output = append([]byte(nil), r.Output...)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reports = append(e.reports, c)
}

// last returns the last report.
func (e *env) last(t *testing.T) wasmhost.Report {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.reports) == 0 {
		t.Fatal("no activation reported")
	}
	return e.reports[len(e.reports)-1]
}

// install registers m, publishes the fixture and routes to m's revision.
func (e *env) install(t *testing.T, m wasmhost.Module) {
	t.Helper()
	if err := e.rt.Register(context.Background(), m); err != nil {
		t.Fatalf("Register: %v", err)
	}
	if err := e.ref.Publish(refhost.PublicationKey{Service: fxService, Contract: fxContract, Function: fxFunction}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ref.SetRoute(fxService, "", m.Revision); err != nil {
		t.Fatal(err)
	}
}

func binding() trigger.BindingRef {
	return trigger.BindingRef{
		LogicalID: "node-1", Epoch: 1, ID: "b-events", Tenant: "t1", Principal: "svc-events",
		Service: fxService, Contract: fxContract, Function: fxFunction,
	}
}

// activate reserves, activates payload under budget and ctx, and
// releases; it returns the outcome.
func (e *env) activate(t *testing.T, ctx context.Context, payload string, budget time.Duration) trigger.Outcome {
	t.Helper()
	b := binding()
	in, err := e.ref.ReserveInbound(context.Background(), trigger.InboundRequest{Binding: b, MaxInputBytes: 1024, Deadline: time.Now().Add(budget)})
	if err != nil {
		t.Fatalf("ReserveInbound: %v", err)
	}
	defer in.Release()
	return in.Activate(ctx, trigger.Activation{
		Principal: trigger.Principal{Subject: b.Principal, Tenant: b.Tenant, Binding: b.ID},
		Binding:   b, RouteGeneration: in.RouteGeneration(),
		Deadline: time.Now().Add(budget), Budget: budget,
		StreamSeq: 7, Delivered: 1, MaxDeliver: 3,
		Payload: []byte(payload),
	}).Outcome
}

// TestOutcomes runs handler.wasm through the reference host: each of the
// guest's behaviours ends as the outcome docs/GUESTS.md gives it, with
// the report's error of the right type.
func TestOutcomes(t *testing.T) {
	e := newEnv(t, hostConfig())
	e.install(t, handleModule(readGuest(t, "handler"), "r1"))
	cases := []struct {
		name    string
		payload string
		budget  time.Duration
		want    trigger.Outcome
		cause   wasmhost.Cause // 0: no *GuestError
	}{
		{"ok", `["hello"]`, time.Minute, trigger.OutcomeSuccess, 0},
		{"declared failure", `["fail"]`, time.Minute, trigger.OutcomeDeclaredFailure, 0},
		{"trap", `["retry"]`, time.Minute, trigger.OutcomePlatformFailure, wasmhost.CauseTrap},
		{"memory exhausted", `["grow"]`, time.Minute, trigger.OutcomePlatformFailure, wasmhost.CauseMemory},
		{"deadline", `["block"]`, 50 * time.Millisecond, trigger.OutcomeTimeout, wasmhost.CauseInterrupted},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := e.activate(t, context.Background(), tc.payload, tc.budget); got != tc.want {
				t.Fatalf("outcome %v, want %v", got, tc.want)
			}
			if err := e.ref.WaitIdle(context.Background()); err != nil {
				t.Fatal(err)
			}
			r := e.last(t)
			var ge *wasmhost.GuestError
			switch {
			case tc.cause != 0 && (!errors.As(r.Err, &ge) || ge.Cause != tc.cause):
				t.Errorf("report error %v, want cause %v", r.Err, tc.cause)
			case tc.cause == 0 && errors.As(r.Err, &ge):
				t.Errorf("report error %v, want none of the guest's", r.Err)
			}
		})
	}
	t.Run("invalid arguments", func(t *testing.T) {
		before := e.rt.Stats().Instances
		if got := e.activate(t, context.Background(), `[1]`, time.Minute); got != trigger.OutcomeInvalidArguments {
			t.Errorf("outcome %v, want invalid arguments", got)
		}
		if n := e.rt.Stats().Instances; n != before {
			t.Errorf("%d instances made for a payload the signature refuses", n-before)
		}
	})
	s := e.rt.Stats()
	if s.Live != 0 || s.Instances != 5 || s.Modules != 1 {
		t.Errorf("Stats = %+v, want 5 instances, none live, 1 module", s)
	}
	if hs := e.ref.Stats(); hs.MemoryBytes != 0 || hs.Slots != 0 {
		t.Errorf("host Stats = %+v, want nothing held", hs)
	}
}

// TestFreshInstance: handler traps when an instance is reused, so a
// hundred activations that all succeed ran in a hundred instances.
func TestFreshInstance(t *testing.T) {
	e := newEnv(t, hostConfig())
	e.install(t, handleModule(readGuest(t, "handler"), "r1"))
	const n = 100
	for i := range n {
		if got := e.activate(t, context.Background(), `["x"]`, time.Minute); got != trigger.OutcomeSuccess {
			t.Fatalf("activation %d: %v", i, got)
		}
	}
	seen := make(map[uint64]bool)
	for _, r := range e.reports {
		seen[r.Instance] = true
	}
	if len(seen) != n || e.rt.Stats().Instances != n || e.rt.Stats().Live != 0 {
		t.Errorf("%d distinct instances reported, stats %+v; want %d, none live", len(seen), e.rt.Stats(), n)
	}
}

// TestMemoryNeverShared: dirty.wasm traps when its memory is not all zero
// and leaves it all dirty, grown by a page; a hundred activations that all
// succeed, with buffers recycled between instances, saw only fresh
// memory.
func TestMemoryNeverShared(t *testing.T) {
	e := newEnv(t, hostConfig())
	e.install(t, handleModule(readGuest(t, "dirty"), "r1"))
	for i := range 100 {
		if got := e.activate(t, context.Background(), `["x"]`, time.Minute); got != trigger.OutcomeSuccess {
			t.Fatalf("activation %d: %v (%v)", i, got, e.last(t).Err)
		}
	}
}

// TestShutdownInterrupts: the owner's stop (the activation's context
// cancelled) interrupts a guest in an infinite loop, which ends as
// cancelled, its instance closed.
func TestShutdownInterrupts(t *testing.T) {
	e := newEnv(t, hostConfig())
	e.install(t, handleModule(readGuest(t, "loop"), "r1"))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	if got := e.activate(t, ctx, `["x"]`, time.Minute); got != trigger.OutcomeCancelled {
		t.Errorf("outcome %v, want cancelled", got)
	}
	if err := e.ref.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the loop ran %v after a stop at 50ms", took)
	}
	var ge *wasmhost.GuestError
	if r := e.last(t); !errors.As(r.Err, &ge) || ge.Cause != wasmhost.CauseInterrupted || !errors.Is(r.Err, context.Canceled) {
		t.Errorf("report error %v, want interrupted by cancellation", r.Err)
	}
	if s := e.rt.Stats(); s.Live != 0 {
		t.Errorf("%d instances live after the stop", s.Live)
	}
}

// TestHostileGuests: each guest that lies or misbehaves ends as a
// platform failure with its typed cause; the host survives it.
func TestHostileGuests(t *testing.T) {
	cases := []struct {
		guest string
		fn    wasmhost.Export
		cause wasmhost.Cause
		is    error // also matched, when set
	}{
		{"trap", handleExport(), wasmhost.CauseTrap, nil},
		{"recurse", handleExport(), wasmhost.CauseTrap, nil},
		{"badptr", handleExport(), wasmhost.CauseLift, wasmhost.ErrLiftRefused},
		{"hugestr", wasmhost.Export{Name: fxFunction, Params: []refhost.Type{refhost.String()}, Result: &[]refhost.Type{refhost.String()}[0]}, wasmhost.CauseLift, wasmhost.ErrLiftRefused},
		{"badrealloc", handleExport(), wasmhost.CauseLower, wasmhost.ErrLowerRefused},
		{"bomb", handleExport(), wasmhost.CauseMemory, nil},
	}
	for _, tc := range cases {
		t.Run(tc.guest, func(t *testing.T) {
			e := newEnv(t, hostConfig())
			m := handleModule(readGuest(t, tc.guest), "r1")
			m.Functions = []wasmhost.Export{tc.fn}
			e.install(t, m)
			if got := e.activate(t, context.Background(), `["x"]`, time.Minute); got != trigger.OutcomePlatformFailure {
				t.Errorf("outcome %v, want platform failure", got)
			}
			if err := e.ref.WaitIdle(context.Background()); err != nil {
				t.Fatal(err)
			}
			r := e.last(t)
			var ge *wasmhost.GuestError
			if !errors.As(r.Err, &ge) || ge.Cause != tc.cause || tc.is != nil && !errors.Is(r.Err, tc.is) {
				t.Errorf("report error %v, want cause %v (%v)", r.Err, tc.cause, tc.is)
			}
			if s := e.rt.Stats(); s.Live != 0 || s.Failure(tc.cause) != 1 {
				t.Errorf("Stats = %+v, want one failure of %v, none live", s, tc.cause)
			}
		})
	}
}

func handleExport() wasmhost.Export {
	return wasmhost.Export{Name: fxFunction, Params: []refhost.Type{refhost.String()}, Result: handleResult()}
}

// TestMemoryCeiling: the bomb's growth stops at the function's ceiling,
// which the reference host reserved before the activation.
func TestMemoryCeiling(t *testing.T) {
	e := newEnv(t, hostConfig())
	m := handleModule(readGuest(t, "bomb"), "r1")
	e.install(t, m)
	e.activate(t, context.Background(), `["x"]`, time.Minute)
	if err := e.ref.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := e.last(t); r.MemoryPages > fxPages {
		t.Errorf("the guest reached %d pages, over its ceiling of %d", r.MemoryPages, fxPages)
	}
}

// TestMemoryAdmission: with the host's guest memory held by one
// reservation, the next is refused before any activation (the runtime
// then makes no pull).
func TestMemoryAdmission(t *testing.T) {
	cfg := hostConfig()
	cfg.MaxMemoryBytes = fxPages * wasmhost.PageSize
	e := newEnv(t, cfg)
	e.install(t, handleModule(readGuest(t, "handler"), "r1"))
	req := trigger.InboundRequest{Binding: binding(), MaxInputBytes: 64}
	in, err := e.ref.ReserveInbound(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Release()
	_, err = e.ref.ReserveInbound(context.Background(), req)
	var ue *refhost.UnavailableError
	if !errors.As(err, &ue) || ue.Resource != refhost.ResourceMemory || !errors.Is(err, trigger.ErrUnavailable) {
		t.Errorf("second reservation = %v, want guest memory unavailable", err)
	}
}

// TestRegisterRefusals: modules that cannot be run are refused at
// registration, each with the problem named.
func TestRegisterRefusals(t *testing.T) {
	good := readGuest(t, "handler")
	with := func(edit func(*wasmhost.Module)) wasmhost.Module {
		m := handleModule(good, "r1")
		edit(&m)
		return m
	}
	cases := []struct {
		name    string
		m       wasmhost.Module
		problem wasmhost.Problem
		export  string
	}{
		{"not wasm", with(func(m *wasmhost.Module) { m.Binary = []byte("\x00asm\x01\x00\x00\x00garbage") }), wasmhost.ProblemInvalid, ""},
		{"empty binary", with(func(m *wasmhost.Module) { m.Binary = nil }), wasmhost.ProblemModule, ""},
		{"binary past the limit", with(func(m *wasmhost.Module) { m.Binary = make([]byte, wasmhost.MaxModuleBytes+1) }), wasmhost.ProblemModule, ""},
		{"no memory ceiling", with(func(m *wasmhost.Module) { m.MemoryPages = 0 }), wasmhost.ProblemModule, ""},
		{"ceiling past the limit", with(func(m *wasmhost.Module) { m.MemoryPages = wasmhost.MaxMemoryPages + 1 }), wasmhost.ProblemModule, ""},
		{"no functions", with(func(m *wasmhost.Module) { m.Functions = nil }), wasmhost.ProblemModule, ""},
		{"output without wasi", with(func(m *wasmhost.Module) { m.Grants = wasmhost.GrantOutput }), wasmhost.ProblemModule, ""},
		{"bad param type", with(func(m *wasmhost.Module) { m.Functions[0].Params = []refhost.Type{{}} }), wasmhost.ProblemModule, fxFunction},
		{"missing export", with(func(m *wasmhost.Module) { m.Binary = readGuest(t, "noexport") }), wasmhost.ProblemMissingExport, fxFunction},
		{"undeclared function", with(func(m *wasmhost.Module) { m.Functions[0].Name = "absent" }), wasmhost.ProblemMissingExport, "absent"},
		{"wrong export signature", with(func(m *wasmhost.Module) { m.Binary = readGuest(t, "wrongsig") }), wasmhost.ProblemExportSignature, fxFunction},
		{"declared types differ from the export", with(func(m *wasmhost.Module) { m.Functions[0].Params = []refhost.Type{refhost.U64()} }), wasmhost.ProblemExportSignature, fxFunction},
		{"no memory", with(func(m *wasmhost.Module) { m.Binary = readGuest(t, "nomemory") }), wasmhost.ProblemMissingExport, "memory"},
		{"no cabi_realloc", with(func(m *wasmhost.Module) { m.Binary = readGuest(t, "norealloc") }), wasmhost.ProblemMissingExport, "cabi_realloc"},
		{"import not granted", with(func(m *wasmhost.Module) { m.Binary = readGuest(t, "import") }), wasmhost.ProblemImport, "env.evil"},
		{"table past the limit", with(func(m *wasmhost.Module) { m.Binary = readGuest(t, "bigtable") }), wasmhost.ProblemTable, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, hostConfig())
			err := e.rt.Register(context.Background(), tc.m)
			var re *wasmhost.RegisterError
			if !errors.As(err, &re) || re.Problem != tc.problem || re.Name != tc.export || !errors.Is(err, wasmhost.ErrRegister) || !errors.Is(err, tc.problem) {
				t.Errorf("Register = %v, want %v naming %q", err, tc.problem, tc.export)
			}
		})
	}
}

// TestStartFunctionBounded: a module whose start function loops forever
// is stopped at the activation's deadline while it instantiates.
func TestStartFunctionBounded(t *testing.T) {
	e := newEnv(t, hostConfig())
	e.install(t, handleModule(readGuest(t, "startfn"), "r1"))
	if got := e.activate(t, context.Background(), `["x"]`, 50*time.Millisecond); got != trigger.OutcomeTimeout {
		t.Errorf("outcome %v, want timeout", got)
	}
	if err := e.ref.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	var ge *wasmhost.GuestError
	if r := e.last(t); !errors.As(r.Err, &ge) || ge.Cause != wasmhost.CauseInterrupted || r.Instance != 0 {
		t.Errorf("report %+v, want interrupted before any instance was made", r)
	}
	if s := e.rt.Stats(); s.Live != 0 {
		t.Errorf("%d instances live", s.Live)
	}
}

// TestWASIGuest: with GrantWASI, proc_exit ends the activation as an exit
// with its code, and an hour's sleep is cut at the activation's deadline.
// Without the grant, the module is refused.
func TestWASIGuest(t *testing.T) {
	e := newEnv(t, hostConfig())
	m := handleModule(readGuest(t, "wasi"), "r1")
	if err := e.rt.Register(context.Background(), m); !errors.Is(err, wasmhost.ProblemImport) {
		t.Fatalf("Register without GrantWASI = %v, want an import not granted", err)
	}
	m.Revision = "r2"
	m.Grants = wasmhost.GrantWASI
	e.install(t, m)
	if got := e.activate(t, context.Background(), `["exit"]`, time.Minute); got != trigger.OutcomePlatformFailure {
		t.Errorf("exit: %v, want platform failure", got)
	}
	if err := e.ref.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	var ge *wasmhost.GuestError
	if r := e.last(t); !errors.As(r.Err, &ge) || ge.Cause != wasmhost.CauseExit || ge.ExitCode != 3 {
		t.Errorf("exit: report error %v, want exit with code 3", r.Err)
	}
	start := time.Now()
	if got := e.activate(t, context.Background(), `["sleep"]`, 50*time.Millisecond); got != trigger.OutcomeTimeout {
		t.Errorf("sleep: %v, want timeout", got)
	}
	if err := e.ref.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("an hour's sleep under a 50ms budget took %v", took)
	}
	if r := e.last(t); !errors.As(r.Err, &ge) || ge.Cause != wasmhost.CauseInterrupted {
		t.Errorf("sleep: report error %v, want interrupted", r.Err)
	}
	if got := e.activate(t, context.Background(), `["ok"]`, time.Minute); got != trigger.OutcomeSuccess {
		t.Errorf("ok: %v, want success", got)
	}
}

// TestIncompatibleContract: a route to a revision whose module lacks the
// function, or implements it with other types than the declared contract,
// ends as incompatible contract without making an instance.
func TestIncompatibleContract(t *testing.T) {
	e := newEnv(t, hostConfig())
	e.install(t, handleModule(readGuest(t, "handler"), "r1"))
	u32 := refhost.U32()
	bool1 := refhost.Bool()
	err := e.rt.Register(context.Background(), wasmhost.Module{
		Service: fxService, Revision: "r2", Contract: fxContract, Binary: readGuest(t, "types"),
		Functions:   []wasmhost.Export{{Name: "echo-bool", Params: []refhost.Type{bool1}, Result: &bool1}},
		MemoryPages: fxPages,
	})
	if err != nil {
		t.Fatal(err)
	}
	str := refhost.String()
	err = e.rt.Register(context.Background(), wasmhost.Module{
		Service: fxService, Revision: "r3", Contract: fxContract, Binary: readGuest(t, "hugestr"),
		Functions:   []wasmhost.Export{{Name: fxFunction, Params: []refhost.Type{str}, Result: &str}},
		MemoryPages: fxPages,
	})
	if err != nil {
		t.Fatal(err)
	}
	err = e.ref.DeclareContract(refhost.Contract{Name: fxContract, Functions: []refhost.ContractFunction{
		{Name: fxFunction, Params: []refhost.Type{refhost.String()}, Result: handleResult()},
		{Name: "echo-bool", Params: []refhost.Type{u32}, Result: &u32},
	}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		revision string
		want     trigger.Outcome
	}{
		{"r1", trigger.OutcomeSuccess},
		{"r2", trigger.OutcomeIncompatibleContract}, // no handle in r2
		{"r3", trigger.OutcomeIncompatibleContract}, // handle -> string
	}
	for _, tc := range cases {
		t.Run(tc.revision, func(t *testing.T) {
			if _, err := e.ref.SetRoute(fxService, "", tc.revision); err != nil {
				t.Fatal(err)
			}
			before := e.rt.Stats().Instances
			if got := e.activate(t, context.Background(), `["x"]`, time.Minute); got != tc.want {
				t.Errorf("outcome %v, want %v", got, tc.want)
			}
			made := e.rt.Stats().Instances - before
			if tc.want == trigger.OutcomeIncompatibleContract && made != 0 {
				t.Errorf("%d instances made for an incompatible contract", made)
			}
		})
	}
}

// TestWideParamNarrowResult: an i32 result after an i64 or f64 parameter
// is lifted from its low 32 bits, whatever the parameter left above them.
func TestWideParamNarrowResult(t *testing.T) {
	e := newEnv(t, hostConfig())
	u32, b := refhost.U32(), refhost.Bool()
	err := e.rt.Register(context.Background(), wasmhost.Module{
		Service: fxService, Revision: "r1", Contract: fxContract, Binary: readGuest(t, "types"),
		Functions: []wasmhost.Export{
			{Name: "low-u64", Params: []refhost.Type{refhost.U64()}, Result: &u32},
			{Name: "neg-f64", Params: []refhost.Type{refhost.F64()}, Result: &b},
		},
		MemoryPages: fxPages,
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		fn, payload string
		want        any
	}{
		{"low-u64", `[18446744073709551614]`, uint32(0xFFFFFFFE)},
		{"low-u64", `[4294967303]`, uint32(7)},
		{"neg-f64", `[2.5]`, false},
		{"neg-f64", `[-2.5]`, true},
	}
	for _, tc := range cases {
		t.Run(tc.fn+tc.payload, func(t *testing.T) {
			if err := e.ref.Publish(refhost.PublicationKey{Service: fxService, Contract: fxContract, Function: tc.fn}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.ref.SetRoute(fxService, "", "r1"); err != nil {
				t.Fatal(err)
			}
			b := binding()
			b.Function = tc.fn
			in, err := e.ref.ReserveInbound(context.Background(), trigger.InboundRequest{Binding: b, MaxInputBytes: 64})
			if err != nil {
				t.Fatal(err)
			}
			o := in.Activate(context.Background(), trigger.Activation{
				Binding: b, RouteGeneration: in.RouteGeneration(), Deadline: time.Now().Add(time.Minute),
				Budget: time.Minute, StreamSeq: 1, Delivered: 1, MaxDeliver: 1, Payload: []byte(tc.payload),
			}).Outcome
			in.Release()
			if err := e.ref.WaitIdle(context.Background()); err != nil {
				t.Fatal(err)
			}
			if r := e.last(t); o != trigger.OutcomeSuccess || r.Result != tc.want {
				t.Errorf("outcome %v, result %v (%v); want success, %v", o, r.Result, r.Err, tc.want)
			}
		})
	}
}

// TestTableBounded: a table declared without a maximum cannot grow (the
// guest sees table.grow fail), and its elements are reserved with the
// memory: 4 pages and 2 elements of 8 bytes.
func TestTableBounded(t *testing.T) {
	e := newEnv(t, hostConfig())
	e.install(t, handleModule(readGuest(t, "table"), "r1"))
	in, err := e.ref.ReserveInbound(context.Background(), trigger.InboundRequest{Binding: binding(), MaxInputBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.ref.Stats().MemoryBytes, fxPages*wasmhost.PageSize+2*8; got != want {
		t.Errorf("reserved %d bytes, want %d (memory and table)", got, want)
	}
	in.Release()
	if got := e.activate(t, context.Background(), `["x"]`, time.Minute); got != trigger.OutcomeSuccess {
		t.Errorf("outcome %v (%v), want success: table.grow refused", got, e.last(t).Err)
	}
}
