package refhost_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// TestMemoryReservation reserves the guest memory of the function the
// route leads to: at the host's limit, the next reservation is refused
// before anything else is taken, and a release makes room again.
func TestMemoryReservation(t *testing.T) {
	nop := func(context.Context, refhost.Call) error { return nil }
	h, err := refhost.New(refhost.Config{MaxActivations: 8, MaxInputBytes: 1 << 20, MaxMemoryBytes: 300})
	if err != nil {
		t.Fatal(err)
	}
	f := testFunction("r1", nop)
	f.Memory = 100
	if err := h.Register(f); err != nil {
		t.Fatal(err)
	}
	if err := h.Publish(testPublication()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.SetRoute("orders", "", "r1"); err != nil {
		t.Fatal(err)
	}
	held := []trigger.Inbound{reserve(t, h, 10), reserve(t, h, 10), reserve(t, h, 10)}
	if s := h.Stats(); s.MemoryBytes != 300 || s.Slots != 3 {
		t.Fatalf("Stats = %+v, want 300 memory bytes in 3 slots", s)
	}
	_, err = h.ReserveInbound(context.Background(), trigger.InboundRequest{Binding: testBinding(), MaxInputBytes: 10})
	var ue *refhost.UnavailableError
	if !errors.Is(err, trigger.ErrUnavailable) || !errors.As(err, &ue) || ue.Resource != refhost.ResourceMemory {
		t.Fatalf("fourth ReserveInbound = %v, want guest memory unavailable", err)
	}
	if s := h.Stats(); s.Slots != 3 || s.InputBytes != 30 || s.Unavailable != 1 {
		t.Errorf("after the refusal: %+v, want nothing more taken", s)
	}
	held[0].Release()
	in := reserve(t, h, 10)
	if r := in.Activate(context.Background(), activation(in, `[1,"x"]`, time.Minute)); r.Outcome != trigger.OutcomeSuccess {
		t.Errorf("Activate = %v, want success", r.Outcome)
	}
	in.Release()
	held[1].Release()
	held[2].Release()
	checkDrained(t, h)
}

// TestMemoryKeptWhileRunning: a function that outlives its activation
// keeps its guest memory until it returns, as it keeps its slot.
func TestMemoryKeptWhileRunning(t *testing.T) {
	release := make(chan struct{})
	block := func(context.Context, refhost.Call) error { <-release; return nil }
	h, err := refhost.New(refhost.Config{MaxActivations: 2, MaxInputBytes: 1 << 20, MaxMemoryBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	f := testFunction("r1", block)
	f.Memory = 64
	if err := h.Register(f); err != nil {
		t.Fatal(err)
	}
	if err := h.Publish(testPublication()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.SetRoute("orders", "", "r1"); err != nil {
		t.Fatal(err)
	}
	in := reserve(t, h, 10)
	if r := in.Activate(context.Background(), activation(in, `[1,"x"]`, 10*time.Millisecond)); r.Outcome != trigger.OutcomeTimeout {
		t.Errorf("Activate = %v, want timeout", r.Outcome)
	}
	in.Release()
	if s := h.Stats(); s.MemoryBytes != 64 || s.Running != 1 {
		t.Errorf("while the function runs: %+v, want its 64 memory bytes held", s)
	}
	close(release)
	if err := h.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkDrained(t, h)
}

// TestContractCheck declares the contract after revisions were registered:
// a revision whose function has other types, or lacks it in the
// declaration, ends as incompatible contract without running; removing
// the declaration takes revisions as registered again.
func TestContractCheck(t *testing.T) {
	ran := 0
	count := func(context.Context, refhost.Call) error { ran++; return nil }
	h := newHost(t, defaultConfig(), count)
	other := testFunction("r2", count)
	other.Params = []refhost.Type{refhost.U64(), refhost.String()}
	if err := h.Register(other); err != nil {
		t.Fatal(err)
	}
	declare := func(params ...refhost.Type) {
		t.Helper()
		err := h.DeclareContract(refhost.Contract{Name: "orders-v1", Functions: []refhost.ContractFunction{{Name: "place", Params: params}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	run := func(revision, payload string) trigger.Outcome {
		t.Helper()
		if _, err := h.SetRoute("orders", "", revision); err != nil {
			t.Fatal(err)
		}
		in := reserve(t, h, 64)
		defer in.Release()
		return in.Activate(context.Background(), activation(in, payload, time.Minute)).Outcome
	}
	declare(refhost.U32(), refhost.String())
	cases := []struct {
		name, revision, payload string
		want                    trigger.Outcome
	}{
		{"matching revision", "r1", `[1,"x"]`, trigger.OutcomeSuccess},
		{"revision with other types", "r2", `[1,"x"]`, trigger.OutcomeIncompatibleContract},
	}
	for _, tc := range cases {
		if got := run(tc.revision, tc.payload); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	declare(refhost.U64(), refhost.String())
	if got := run("r1", `[1,"x"]`); got != trigger.OutcomeIncompatibleContract {
		t.Errorf("r1 after the contract changed: %v, want incompatible contract", got)
	}
	if got := run("r2", `[1,"x"]`); got != trigger.OutcomeSuccess {
		t.Errorf("r2 after the contract changed: %v, want success", got)
	}
	h.RemoveContract("orders-v1")
	if got := run("r1", `[1,"x"]`); got != trigger.OutcomeSuccess {
		t.Errorf("r1 without a declaration: %v, want success", got)
	}
	if ran != 3 {
		t.Errorf("functions ran %d times, want 3", ran)
	}
	checkDrained(t, h)
}

// TestContractResultChecked: the declared result type is part of the
// contract.
func TestContractResultChecked(t *testing.T) {
	nop := func(context.Context, refhost.Call) error { return nil }
	h := newHost(t, defaultConfig(), nop)
	u32 := refhost.U32()
	err := h.DeclareContract(refhost.Contract{Name: "orders-v1", Functions: []refhost.ContractFunction{
		{Name: "place", Params: []refhost.Type{refhost.U32(), refhost.String()}, Result: &u32},
	}})
	if err != nil {
		t.Fatal(err)
	}
	in := reserve(t, h, 64)
	defer in.Release()
	if got := in.Activate(context.Background(), activation(in, `[1,"x"]`, time.Minute)).Outcome; got != trigger.OutcomeIncompatibleContract {
		t.Errorf("a function without the declared result: %v, want incompatible contract", got)
	}
}

func TestDeclareContractRefusals(t *testing.T) {
	h, err := refhost.New(defaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	fn := refhost.ContractFunction{Name: "place", Params: []refhost.Type{refhost.U32()}}
	many := make([]refhost.ContractFunction, refhost.MaxContractFunctions+1)
	for i := range many {
		many[i] = refhost.ContractFunction{Name: "f" + string(rune('a'+i%26)) + string(rune('a'+i/26))}
	}
	cases := []struct {
		name string
		c    refhost.Contract
		want error
	}{
		{"at the limit", refhost.Contract{Name: "c", Functions: many[:refhost.MaxContractFunctions]}, nil},
		{"past the limit", refhost.Contract{Name: "c", Functions: many}, refhost.ErrInvalidContract},
		{"no functions", refhost.Contract{Name: "c"}, refhost.ErrInvalidContract},
		{"bad name", refhost.Contract{Name: "a b", Functions: []refhost.ContractFunction{fn}}, refhost.ErrInvalidName},
		{"bad function name", refhost.Contract{Name: "c", Functions: []refhost.ContractFunction{{Name: ""}}}, refhost.ErrInvalidName},
		{"function twice", refhost.Contract{Name: "c", Functions: []refhost.ContractFunction{fn, fn}}, refhost.ErrInvalidContract},
		{"bad params", refhost.Contract{Name: "c", Functions: []refhost.ContractFunction{{Name: "f", Params: []refhost.Type{{}}}}}, refhost.ErrInvalidType},
		{"bad result", refhost.Contract{Name: "c", Functions: []refhost.ContractFunction{{Name: "f", Result: &refhost.Type{}}}}, refhost.ErrInvalidType},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := h.DeclareContract(tc.c)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("DeclareContract = %v, want %v", err, tc.want)
			}
		})
	}
}
