package conformance_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
	"github.com/latent-systems/latent-nats/trigger/wasmhost"
)

// The WebAssembly guests of the suite are trigger/wasmhost's test guests
// (testdata/guests, each .wasm next to its .wat). handler.wasm exports the
// suite's function, handle: func(arg: string) -> result<_, enum{rejected}>,
// and reads the suite's arguments as the Go functions do: argFail returns
// err(rejected), a declared failure; argRetry traps, a platform failure;
// argBlock loops forever; anything else, argOK among them, returns ok. It
// traps if an instance is reused. loop.wasm's handle loops forever
// whatever its argument.
const (
	trigGuestDir = "../trigger/wasmhost/testdata/guests"
	// trigWasmPages is the memory ceiling of one activation of a guest,
	// in pages: the guests declare one page and grow only for their
	// arguments.
	trigWasmPages = 2
	// trigWasmMemory is that ceiling in bytes, what the reference host
	// reserves for each activation.
	trigWasmMemory = trigWasmPages * wasmhost.PageSize
)

// trigWasmSpec names the guest registered as each revision of the suite's
// function ("handler" or "loop"); an empty name registers nothing for
// that revision. Each revision is a module of its own.
type trigWasmSpec struct {
	r1, r2 string
}

// trigWasmRun is what one activation of a guest did, from its report
// (wasmhost.Config.OnActivation).
type trigWasmRun struct {
	Binding   string
	Revision  string
	StreamSeq uint64
	Delivered uint64
	// Instance is the number of the fresh instance it ran in, 0 for none.
	Instance uint64
	// Result is the lifted result, nil on error (the suite's guests
	// return an enum's case name or nothing, no bytes of the instance).
	Result any
	// Cause is the *wasmhost.GuestError's, Code the declared
	// *refhost.ApplicationError's; zero otherwise.
	Cause wasmhost.Cause
	Code  string
	// Err is the report's error; At is when the report came, after the
	// instance was closed. Both are left out of comparisons
	// (trigWasmRunCmp).
	Err error
	At  time.Time
}

// trigWasmRunCmp compares trigWasmRuns without their Err and At.
func trigWasmRunCmp() cmp.Option { return cmpopts.IgnoreFields(trigWasmRun{}, "Err", "At") }

// trigWasm is a case's WebAssembly runtime and what its guests did.
type trigWasm struct {
	rt  *wasmhost.Runtime
	led *ledger.Ledger
	// runs receives one trigWasmRun per activation (while it has room).
	runs chan trigWasmRun

	mu  sync.Mutex
	log []trigWasmRun
	// reported counts the reports of activations that made an instance;
	// held are step reports kept from the ledger until every instance made
	// has been reported (observe).
	reported uint64
	held     []trigger.StepReport
}

// installWasm registers spec's guests with the case's reference host, one
// compiled module per revision, and has the ledger record what they ran.
func (e *trigEnv) installWasm(t *testing.T, spec *trigWasmSpec) {
	t.Helper()
	w := &trigWasm{led: e.led, runs: make(chan trigWasmRun, 1024)}
	rt, err := wasmhost.New(t.Context(), e.ref, wasmhost.Config{OnActivation: w.activated})
	if err != nil {
		t.Fatal(err)
	}
	w.rt = rt
	e.wasm = w
	// Registered before trigInstall's own cleanup, so run after it: the
	// runtime has returned and the host is idle.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), trigWait)
		defer cancel()
		if err := rt.Close(ctx); err != nil {
			t.Errorf("closing the wasm runtime: %v", err)
		}
		if held := w.heldReports(); len(held) != 0 {
			t.Errorf("%d step reports never given to the ledger: %+v", len(held), held)
		}
	})
	for _, rev := range []struct{ revision, guest string }{{"r1", spec.r1}, {"r2", spec.r2}} {
		if rev.guest == "" {
			continue
		}
		bin, err := os.ReadFile(filepath.Join(trigGuestDir, rev.guest+".wasm"))
		if err != nil {
			t.Fatal(err)
		}
		if err := rt.Register(t.Context(), trigWasmModule(rev.revision, bin)); err != nil {
			t.Fatalf("registering %s as %s: %v", rev.guest, rev.revision, err)
		}
	}
	e.host.observe = w.observe
}

// trigWasmModule is a guest exporting the suite's function as revision.
func trigWasmModule(revision string, bin []byte) wasmhost.Module {
	rejected := refhost.Enum(trigDeclared)
	result := refhost.Result(nil, &rejected)
	return wasmhost.Module{
		Service: trigService, Revision: revision, Contract: trigContract, Binary: bin,
		Functions:   []wasmhost.Export{{Name: trigFunction, Params: []refhost.Type{refhost.String()}, Result: &result}},
		MemoryPages: trigWasmPages,
	}
}

// activated records one activation's report: in the log, in the ledger
// when the guest ran (an instance was made), and on runs.
func (w *trigWasm) activated(r *wasmhost.Report) {
	run := trigWasmRun{
		Binding: r.Binding.ID, Revision: r.Revision, StreamSeq: r.StreamSeq, Delivered: r.Delivered,
		Instance: r.Instance, Result: r.Result, Err: r.Err, At: time.Now(),
	}
	var ge *wasmhost.GuestError
	if errors.As(r.Err, &ge) {
		run.Cause = ge.Cause
	}
	var ae *refhost.ApplicationError
	if errors.As(r.Err, &ae) {
		run.Code = ae.Code
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.log = append(w.log, run)
	if r.Instance != 0 {
		w.reported++
		w.led.Activated(run.Binding, run.StreamSeq, run.Delivered)
	}
	if w.reported == w.rt.Stats().Instances {
		for _, s := range w.held {
			w.led.ObserveStep(s)
		}
		w.held = nil
	}
	select {
	case w.runs <- run:
	default: // a case that never reads runs; log keeps them all
	}
}

// observe gives a step's report to the ledger after the report of every
// instance made so far. A guest is reported when its instance is closed,
// before its function returns; the reference host's activation returns at
// its context's end without waiting for the function, so a guest the
// owner's stop (or a deadline) interrupted may be reported after the
// step: the ledger would then take its run for one that no step settled.
// Only instances already made are waited for: a case that stops the owner
// during a guest waits for its instance first.
func (w *trigWasm) observe(s trigger.StepReport) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.held) != 0 || w.rt.Stats().Instances > w.reported {
		w.held = append(w.held, s)
		return
	}
	w.led.ObserveStep(s)
}

func (w *trigWasm) heldReports() []trigger.StepReport {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]trigger.StepReport(nil), w.held...)
}

// runLog returns a copy of every activation's record so far.
func (w *trigWasm) runLog() []trigWasmRun {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]trigWasmRun(nil), w.log...)
}

// nextRun waits for the next activation's report.
func (w *trigWasm) nextRun(t *testing.T) trigWasmRun {
	t.Helper()
	timer := time.NewTimer(trigWait)
	defer timer.Stop()
	select {
	case r := <-w.runs:
		return r
	case <-timer.C:
		t.Fatalf("no guest activation reported within %v", trigWait)
	}
	return trigWasmRun{}
}

// trigStepView is the part of a step's report a case compares: what
// became of the visit, without its step number, time and pacing.
type trigStepView struct {
	Binding         int
	Result          trigger.StepResult
	StreamSeq       uint64
	Delivered       uint64
	RouteGeneration uint64
	Outcome         trigger.Outcome
	Action          pull.Action
	Ack             pull.AckState
	Error           trigger.ErrorClass
}

func trigViewOf(r trigger.StepReport) trigStepView {
	return trigStepView{
		Binding: r.Binding, Result: r.Result, StreamSeq: r.StreamSeq, Delivered: r.Delivered,
		RouteGeneration: r.RouteGeneration, Outcome: r.Outcome, Action: r.Action, Ack: r.Ack, Error: r.Error,
	}
}

// trigWasmStats is the part of the wasm runtime's Stats a case compares.
type trigWasmStats struct {
	Modules   int
	Instances uint64
	Live      int
}

func (w *trigWasm) stats() trigWasmStats {
	s := w.rt.Stats()
	return trigWasmStats{Modules: s.Modules, Instances: s.Instances, Live: s.Live}
}
