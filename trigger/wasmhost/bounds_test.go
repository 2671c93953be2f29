package wasmhost_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
	"github.com/latent-systems/latent-nats/trigger/wasmhost"
)

// TestModuleBounds: each bound of a Module at its limit (registered) and
// one past it (refused with ProblemModule).
func TestModuleBounds(t *testing.T) {
	handler := readGuest(t, "handler")
	// A custom section pads the handler to exactly n bytes.
	padded := func(n int) []byte {
		name := "pad"
		rest := n - len(handler) - 1 - 5 - 1 - len(name) // id, 5-byte size, name length, name
		b := append([]byte(nil), handler...)
		size := uint32(1 + len(name) + rest)
		b = append(b, 0, byte(size)|0x80, byte(size>>7)|0x80, byte(size>>14)|0x80, byte(size>>21)|0x80, byte(size>>28))
		b = append(b, byte(len(name)))
		b = append(b, name...)
		return append(b, make([]byte, rest)...)
	}
	many := func(n int) []wasmhost.Export {
		out := make([]wasmhost.Export, n)
		for i := range out {
			out[i] = wasmhost.Export{Name: fxFunction, Params: []refhost.Type{refhost.String()}, Result: handleResult()}
			if i > 0 {
				out[i].Name = fmt.Sprintf("f%d", i) // missing from the binary: refused later, not as a bound
			}
		}
		return out
	}
	with := func(edit func(*wasmhost.Module)) wasmhost.Module {
		m := handleModule(handler, "r1")
		edit(&m)
		return m
	}
	cases := []struct {
		name string
		m    wasmhost.Module
		want error // nil: registered
	}{
		{"binary at the limit", with(func(m *wasmhost.Module) { m.Binary = padded(wasmhost.MaxModuleBytes) }), nil},
		{"binary past the limit", with(func(m *wasmhost.Module) { m.Binary = padded(wasmhost.MaxModuleBytes + 1) }), wasmhost.ProblemModule},
		{"ceiling at the limit", with(func(m *wasmhost.Module) { m.MemoryPages = wasmhost.MaxMemoryPages }), nil},
		{"ceiling past the limit", with(func(m *wasmhost.Module) { m.MemoryPages = wasmhost.MaxMemoryPages + 1 }), wasmhost.ProblemModule},
		{"exports at the limit", with(func(m *wasmhost.Module) { m.Functions = many(wasmhost.MaxExports) }), wasmhost.ProblemMissingExport},
		{"exports past the limit", with(func(m *wasmhost.Module) { m.Functions = many(wasmhost.MaxExports + 1) }), wasmhost.ProblemModule},
		{"reserved name", with(func(m *wasmhost.Module) { m.Functions[0].Name = "cabi_realloc" }), wasmhost.ProblemModule},
		{"function twice", with(func(m *wasmhost.Module) { m.Functions = append(m.Functions, m.Functions[0]) }), wasmhost.ProblemModule},
		{"unknown grant", with(func(m *wasmhost.Module) { m.Grants = 1 << 7 }), wasmhost.ProblemModule},
		{"name the host refuses", with(func(m *wasmhost.Module) { m.Service = "a b" }), wasmhost.ProblemRegistration},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, refhost.Config{MaxActivations: 1, MaxInputBytes: 1, MaxMemoryBytes: refhost.MaxMemoryAllocation})
			err := e.rt.Register(context.Background(), tc.m)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("Register = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestCloseWaits: Close waits for a live activation (or its context), and
// from its call activations end without an instance.
func TestCloseWaits(t *testing.T) {
	e := newEnv(t, hostConfig())
	e.install(t, handleModule(readGuest(t, "loop"), "r1"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan trigger.Outcome, 1)
	go func() { done <- e.activate(t, ctx, `["x"]`, time.Minute) }()
	deadline := time.Now().Add(10 * time.Second)
	for e.rt.Stats().Live == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polling a counter no event announces, bounded
	}
	short, stop := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer stop()
	if err := e.rt.Close(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close with a guest live = %v, want its context's deadline", err)
	}
	cancel()
	if o := <-done; o != trigger.OutcomeCancelled {
		t.Errorf("the looping guest ended as %v, want cancelled", o)
	}
	if err := e.ref.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := e.rt.Close(context.Background()); err != nil {
		t.Fatalf("Close once idle = %v", err)
	}
	before := e.rt.Stats().Instances
	if got := e.activate(t, context.Background(), `["x"]`, time.Minute); got != trigger.OutcomePlatformFailure {
		t.Errorf("an activation after Close: %v, want platform failure", got)
	}
	if err := e.ref.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := e.last(t); !errors.Is(r.Err, wasmhost.ErrClosed) || e.rt.Stats().Instances != before {
		t.Errorf("after Close: report %v, %d instances made; want ErrClosed and none", r.Err, e.rt.Stats().Instances-before)
	}
	if err := e.rt.Register(context.Background(), handleModule(readGuest(t, "handler"), "r2")); !errors.Is(err, wasmhost.ErrClosed) {
		t.Errorf("Register after Close = %v, want ErrClosed", err)
	}
}
