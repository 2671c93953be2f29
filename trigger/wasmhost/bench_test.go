package wasmhost_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
	"github.com/latent-systems/latent-nats/trigger/wasmhost"
)

// BenchmarkActivation measures one activation through the reference host,
// as the trigger runtime makes it: ReserveInbound, Activate (decode,
// instantiate, lower, call, lift, close) and Release. It reports the
// per-activation latency's p50 and p99 beside ns/op, and the Report's
// instantiate and call parts.
func BenchmarkActivation(b *testing.B) {
	b.Run("guest=tiny", func(b *testing.B) {
		e := benchEnv(b, handleModule(readGuest(b, "handler"), "r1"))
		benchActivate(b, e, binding(), `["ok"]`)
	})
	b.Run("guest=go", func(b *testing.B) {
		m := handleModule(buildGoGuest(b), "go1")
		m.MemoryPages = goGuestMemoryPages
		m.Grants = wasmhost.GrantWASI
		e := benchEnv(b, m)
		benchActivate(b, e, binding(), `["ok"]`)
	})
	b.Run("closure", func(b *testing.B) {
		ref, err := refhost.New(hostConfig())
		if err != nil {
			b.Fatal(err)
		}
		err = ref.Register(refhost.Function{
			Service: fxService, Revision: "r1", Contract: fxContract, Name: fxFunction,
			Params: []refhost.Type{refhost.String()}, Failures: []string{"rejected"},
			Func: func(context.Context, refhost.Call) error { return nil },
		})
		if err != nil {
			b.Fatal(err)
		}
		e := &env{ref: ref}
		e.route(b, "r1")
		benchActivate(b, e, binding(), `["ok"]`)
	})
}

// benchEnv is an env with m registered, published and routed.
func benchEnv(b *testing.B, m wasmhost.Module) *env {
	b.Helper()
	cfg := hostConfig()
	cfg.MaxMemoryBytes = 4 * int(m.MemoryPages) * wasmhost.PageSize
	ref, err := refhost.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	e := &env{ref: ref}
	rt, err := wasmhost.New(context.Background(), ref, wasmhost.Config{CacheDir: cacheDir, OnActivation: e.timings})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close(context.Background()) })
	e.rt = rt
	if err := rt.Register(context.Background(), m); err != nil {
		b.Fatal(err)
	}
	e.route(b, m.Revision)
	return e
}

// timings keeps the instantiate and call parts of each activation.
func (e *env) timings(r *wasmhost.Report) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reports = append(e.reports, wasmhost.Report{Instantiate: r.Instantiate, Call: r.Call, Err: r.Err})
}

// route publishes the fixture and routes it to revision.
func (e *env) route(b *testing.B, revision string) {
	b.Helper()
	if err := e.ref.Publish(refhost.PublicationKey{Service: fxService, Contract: fxContract, Function: fxFunction}); err != nil {
		b.Fatal(err)
	}
	if _, err := e.ref.SetRoute(fxService, "", revision); err != nil {
		b.Fatal(err)
	}
}

// benchActivate runs b.N activations of payload on binding bref.
func benchActivate(b *testing.B, e *env, bref trigger.BindingRef, payload string) {
	ctx := context.Background()
	req := trigger.InboundRequest{Binding: bref, MaxInputBytes: 64}
	a := trigger.Activation{
		Principal: trigger.Principal{Subject: bref.Principal, Tenant: bref.Tenant, Binding: bref.ID},
		Binding:   bref, Budget: time.Minute, StreamSeq: 1, Delivered: 1, MaxDeliver: 3,
		Payload: []byte(payload),
	}
	lat := make([]time.Duration, 0, 1<<16)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		in, err := e.ref.ReserveInbound(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		a.RouteGeneration = in.RouteGeneration()
		a.Deadline = start.Add(time.Minute)
		o := in.Activate(ctx, a).Outcome
		in.Release()
		if o != trigger.OutcomeSuccess {
			b.Fatalf("outcome %v", o)
		}
		if len(lat) < cap(lat) {
			lat = append(lat, time.Since(start))
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := len(e.reports); n > 0 {
		var inst, call time.Duration
		for _, r := range e.reports {
			inst += r.Instantiate
			call += r.Call
		}
		b.ReportMetric(float64(inst.Microseconds())/float64(n), "instantiate-µs")
		b.ReportMetric(float64(call.Microseconds())/float64(n), "call-µs")
	}
}

// BenchmarkCompile measures Register: validating and compiling a module
// into a new Runtime, cold (an empty cache directory) and from a cache
// directory a first Runtime filled.
func BenchmarkCompile(b *testing.B) {
	goModule := handleModule(buildGoGuest(b), "go1")
	goModule.MemoryPages = goGuestMemoryPages
	goModule.Grants = wasmhost.GrantWASI
	modules := []struct {
		name string
		m    wasmhost.Module
	}{
		{"tiny", handleModule(readGuest(b, "handler"), "r1")},
		{"go", goModule},
	}
	for _, mod := range modules {
		b.Run("guest="+mod.name+"/cache=none", func(b *testing.B) {
			for b.Loop() {
				benchRegister(b, b.TempDir(), mod.m)
			}
		})
		b.Run("guest="+mod.name+"/cache=dir", func(b *testing.B) {
			dir := b.TempDir()
			benchRegister(b, dir, mod.m)
			for b.Loop() {
				benchRegister(b, dir, mod.m)
			}
		})
	}
}

// benchRegister registers m into a new Runtime with a cache in dir.
func benchRegister(b *testing.B, dir string, m wasmhost.Module) {
	ref, err := refhost.New(refhost.Config{MaxActivations: 1, MaxInputBytes: 1, MaxMemoryBytes: int(m.MemoryPages)*wasmhost.PageSize + wasmhost.MaxTableElements*8})
	if err != nil {
		b.Fatal(err)
	}
	rt, err := wasmhost.New(context.Background(), ref, wasmhost.Config{CacheDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	if err := rt.Register(context.Background(), m); err != nil {
		b.Fatal(err)
	}
	if err := rt.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkTerminationChecks measures what close on context done costs a
// guest's loop: spin.wasm's 10^7 turns with wazero's termination checks
// (as every Runtime of this package compiles) and without, in ns per
// turn.
func BenchmarkTerminationChecks(b *testing.B) {
	const turns = 10_000_000
	for _, checks := range []bool{true, false} {
		b.Run(fmt.Sprintf("checks=%v", checks), func(b *testing.B) {
			ctx := context.Background()
			r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(checks))
			defer r.Close(ctx)
			m, err := r.InstantiateWithConfig(ctx, readGuest(b, "spin"), wazero.NewModuleConfig().WithName(""))
			if err != nil {
				b.Fatal(err)
			}
			spin := m.ExportedFunction("spin")
			dctx, cancel := context.WithTimeout(ctx, time.Hour) // a context with a deadline, as an activation's
			defer cancel()
			for b.Loop() {
				res, err := spin.Call(dctx, turns)
				if want := uint64(turns) * (turns - 1) / 2 % (1 << 32); err != nil || res[0] != want {
					b.Fatalf("spin = %v, %v", res, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/turns, "ns/turn")
		})
	}
}
