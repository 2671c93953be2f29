package conformance_test

import (
	"context"
	"os"
	"testing"

	"github.com/latent-systems/latent-nats/trigger/refhost"
	"github.com/latent-systems/latent-nats/trigger/wasmhost"
)

// BenchmarkTriggerDeliveryGuest is BenchmarkTriggerDelivery with the
// reference host running the binding's function two ways in one run: as a
// Go closure, and as the tiny WebAssembly guest handler.wasm, each
// activation in a fresh instance. msgs/s is measured around the step loop.
func BenchmarkTriggerDeliveryGuest(b *testing.B) {
	for _, kind := range []string{"closure", "wasm"} {
		b.Run("host="+kind, func(b *testing.B) {
			o := newBusyOwner(b)
			o.run(b, benchGuestHost(b, kind), nil)
		})
	}
}

// benchGuestHost is the reference host with the suite's function handle
// (string) -> result<_, enum{rejected}> as a Go closure or as handler.wasm.
func benchGuestHost(b *testing.B, kind string) *refhost.Host {
	b.Helper()
	const pages = 4
	ref, err := refhost.New(refhost.Config{MaxActivations: 4, MaxInputBytes: 4 << 10, MaxMemoryBytes: 4 * pages * wasmhost.PageSize})
	if err != nil {
		b.Fatal(err)
	}
	const service, contract, revision = "events", "latent:events/handler@1.0.0", "r1"
	rejected := refhost.Enum("rejected")
	result := refhost.Result(nil, &rejected)
	switch kind {
	case "closure":
		err = ref.Register(refhost.Function{
			Service: service, Revision: revision, Contract: contract, Name: "handle",
			Params: []refhost.Type{refhost.String()}, Result: &result, Failures: []string{"rejected"},
			Func: func(_ context.Context, c refhost.Call) error {
				if c.Args[0].(string) == "fail" {
					return &refhost.ApplicationError{Code: "rejected"}
				}
				return nil
			},
		})
	case "wasm":
		bin, rerr := os.ReadFile("../trigger/wasmhost/testdata/guests/handler.wasm")
		if rerr != nil {
			b.Fatal(rerr)
		}
		rt, nerr := wasmhost.New(context.Background(), ref, wasmhost.Config{})
		if nerr != nil {
			b.Fatal(nerr)
		}
		b.Cleanup(func() { rt.Close(context.Background()) })
		err = rt.Register(context.Background(), wasmhost.Module{
			Service: service, Revision: revision, Contract: contract, Binary: bin,
			Functions:   []wasmhost.Export{{Name: "handle", Params: []refhost.Type{refhost.String()}, Result: &result}},
			MemoryPages: pages,
		})
	}
	if err != nil {
		b.Fatal(err)
	}
	if err := ref.Publish(refhost.PublicationKey{Service: service, Contract: contract, Function: "handle"}); err != nil {
		b.Fatal(err)
	}
	if _, err := ref.SetRoute(service, "", revision); err != nil {
		b.Fatal(err)
	}
	return ref
}
