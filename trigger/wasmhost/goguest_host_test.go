package wasmhost_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
	"github.com/latent-systems/latent-nats/trigger/wasmhost"
)

// goModule is tools/demo/guest as the demo's shop: place, cancel and
// charge, under contract "shop-v1" of service "shop".
func goModule(t *testing.T, pages uint32, grants wasmhost.Grant) wasmhost.Module {
	t.Helper()
	oos := refhost.Enum("out-of-stock")
	declined := refhost.Enum("declined")
	u32 := refhost.U32()
	place := refhost.Result(&u32, &oos)
	charge := refhost.Result(&u32, &declined)
	rec, err := refhost.ParseType("record{account: u64, amount: u32, currency: enum{eur, usd}}")
	if err != nil {
		t.Fatal(err)
	}
	return wasmhost.Module{
		Service: "shop", Revision: "go1", Contract: "shop-v1", Binary: buildGoGuest(t),
		Functions: []wasmhost.Export{
			{Name: "place", Params: []refhost.Type{refhost.String(), refhost.U32()}, Result: &place},
			{Name: "cancel", Params: []refhost.Type{refhost.String()}, Result: &u32},
			{Name: "charge", Params: []refhost.Type{rec}, Result: &charge},
		},
		MemoryPages: pages,
		Grants:      grants,
	}
}

// goEnv is an env with the Go guest registered, published and routed.
func goEnv(t *testing.T, grants wasmhost.Grant) *env {
	t.Helper()
	cfg := hostConfig()
	cfg.MaxMemoryBytes = 4 * goGuestMemoryPages * wasmhost.PageSize
	e := newEnv(t, cfg)
	if err := e.rt.Register(context.Background(), goModule(t, goGuestMemoryPages, grants)); err != nil {
		t.Fatalf("Register: %v", err)
	}
	for _, fn := range []string{"place", "cancel", "charge"} {
		if err := e.ref.Publish(refhost.PublicationKey{Service: "shop", Contract: "shop-v1", Function: fn}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.ref.SetRoute("shop", "", "go1"); err != nil {
		t.Fatal(err)
	}
	return e
}

// call activates function fn of the shop with payload.
func (e *env) call(t *testing.T, fn, payload string) trigger.Outcome {
	t.Helper()
	b := trigger.BindingRef{LogicalID: "node-1", Epoch: 1, ID: "b-" + fn, Tenant: "shop", Principal: "svc-shop",
		Service: "shop", Contract: "shop-v1", Function: fn}
	in, err := e.ref.ReserveInbound(context.Background(), trigger.InboundRequest{Binding: b, MaxInputBytes: 1024})
	if err != nil {
		t.Fatalf("ReserveInbound: %v", err)
	}
	defer in.Release()
	o := in.Activate(context.Background(), trigger.Activation{
		Principal: trigger.Principal{Subject: b.Principal, Tenant: b.Tenant, Binding: b.ID},
		Binding:   b, RouteGeneration: in.RouteGeneration(),
		Deadline: time.Now().Add(time.Minute), Budget: time.Minute,
		StreamSeq: 1, Delivered: 1, MaxDeliver: 3, Payload: []byte(payload),
	}).Outcome
	if err := e.ref.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestGoGuest runs the Go guest's functions through the host: a record
// and strings lowered, a result lifted from memory, a declared failure,
// and a panic as a platform failure (a Go reactor's panic prints its
// message and aborts with a trap); every activation in a fresh instance,
// so the guest's call count is 1 each time.
func TestGoGuest(t *testing.T) {
	e := goEnv(t, wasmhost.GrantWASI)
	cases := []struct {
		fn, payload string
		want        trigger.Outcome
		result      any
	}{
		{"place", `["A-1", 2]`, trigger.OutcomeSuccess, refhost.ResultValue{Value: uint32(1)}},
		{"place", `["C-3", 500]`, trigger.OutcomeDeclaredFailure, refhost.ResultValue{Err: true, Value: "out-of-stock"}},
		{"cancel", `["ord-1"]`, trigger.OutcomeSuccess, uint32(1)},
		{"charge", `[{"account": 7, "amount": 1250, "currency": "eur"}]`, trigger.OutcomeSuccess, refhost.ResultValue{Value: uint32(1)}},
		{"charge", `[{"account": 8, "amount": 0, "currency": "usd"}]`, trigger.OutcomeDeclaredFailure, refhost.ResultValue{Err: true, Value: "declined"}},
		{"charge", `[{"account": 13, "amount": 99, "currency": "usd"}]`, trigger.OutcomePlatformFailure, nil},
	}
	for _, tc := range cases {
		t.Run(tc.fn+" "+tc.payload, func(t *testing.T) {
			if got := e.call(t, tc.fn, tc.payload); got != tc.want {
				t.Fatalf("outcome %v, want %v", got, tc.want)
			}
			r := e.last(t)
			if diff := cmp.Diff(tc.result, r.Result); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if r.MemoryPages == 0 || r.MemoryPages > goGuestMemoryPages {
				t.Errorf("the instance ended at %d pages, want 1..%d", r.MemoryPages, goGuestMemoryPages)
			}
		})
	}
	var ge *wasmhost.GuestError
	if r := e.last(t); !errors.As(r.Err, &ge) || ge.Cause != wasmhost.CauseTrap {
		t.Errorf("the panic's report error %v, want a trap", r.Err)
	}
	if r := e.last(t); len(r.Output) != 0 || r.OutputDropped == 0 {
		t.Errorf("output not granted: kept %d bytes, dropped %d; want none kept, the panic's message dropped", len(r.Output), r.OutputDropped)
	}
}

// TestGoGuestOutput: with GrantOutput, the panic's message is kept, at
// most maxOutputBytes of it.
func TestGoGuestOutput(t *testing.T) {
	e := goEnv(t, wasmhost.GrantWASI|wasmhost.GrantOutput)
	if got := e.call(t, "charge", `[{"account": 13, "amount": 99, "currency": "usd"}]`); got != trigger.OutcomePlatformFailure {
		t.Fatalf("outcome %v, want platform failure", got)
	}
	r := e.last(t)
	if len(r.Output) == 0 || len(r.Output) > wasmhost.MaxOutputBytes {
		t.Errorf("kept %d bytes of output, want 1..%d", len(r.Output), wasmhost.MaxOutputBytes)
	}
}

// TestGoGuestNeedsWASI: without GrantWASI the Go guest's imports are
// refused, and a ceiling under its initial memory is refused.
func TestGoGuestNeedsWASI(t *testing.T) {
	e := newEnv(t, refhost.Config{MaxActivations: 1, MaxInputBytes: 1, MaxMemoryBytes: goGuestMemoryPages * wasmhost.PageSize})
	err := e.rt.Register(context.Background(), goModule(t, goGuestMemoryPages, 0))
	if !errors.Is(err, wasmhost.ProblemImport) {
		t.Errorf("Register without GrantWASI = %v, want an import not granted", err)
	}
	err = e.rt.Register(context.Background(), goModule(t, 16, wasmhost.GrantWASI))
	var re *wasmhost.RegisterError
	if !errors.As(err, &re) || re.Problem != wasmhost.ProblemMemory {
		t.Errorf("Register with 16 pages = %v, want memory outside its ceiling", err)
	}
}

// TestGoGuestMemoryCeiling: a Go guest that keeps allocating is stopped
// by its ceiling: the runtime's out-of-memory exit is a memory failure.
func TestGoGuestMemoryCeiling(t *testing.T) {
	cfg := hostConfig()
	cfg.MaxMemoryBytes = goGuestMemoryPages*wasmhost.PageSize + wasmhost.MaxTableElements*8 // its memory and its table
	e := newEnv(t, cfg)
	m := handleModule(buildGoGuest(t), "go1")
	m.MemoryPages = goGuestMemoryPages
	m.Grants = wasmhost.GrantWASI
	e.install(t, m)
	if got := e.activate(t, context.Background(), `["grow"]`, time.Minute); got != trigger.OutcomePlatformFailure {
		t.Fatalf("outcome %v, want platform failure", got)
	}
	if err := e.ref.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	var ge *wasmhost.GuestError
	r := e.last(t)
	if !errors.As(r.Err, &ge) || ge.Cause != wasmhost.CauseMemory || r.MemoryPages > goGuestMemoryPages {
		t.Errorf("report %v at %d pages, want memory exhausted within %d pages", r.Err, r.MemoryPages, goGuestMemoryPages)
	}
	if got := e.activate(t, context.Background(), `["block"]`, 100*time.Millisecond); got != trigger.OutcomeTimeout {
		t.Errorf("a busy Go guest: %v, want timeout", got)
	}
}
