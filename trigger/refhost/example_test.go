package refhost_test

import (
	"context"
	"fmt"
	"time"

	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// A contract's argument types, a payload and its canonical form.
func ExampleSignature_Decode() {
	item, _ := refhost.ParseType("record{sku: string, qty: u32, note: option<string>}")
	sig, _ := refhost.NewSignature(refhost.U64(), item)

	args, err := sig.Decode([]byte(`[ 9007199254740993, {"qty": 2, "sku": "A-1", "note": null} ]`))
	fmt.Println(args[0], err)
	canon, _ := sig.Append(nil, args)
	fmt.Println(string(canon))

	_, err = sig.Decode([]byte(`[1, {"sku": "A-1", "qty": -2, "note": null}]`))
	fmt.Println(err)
	// Output:
	// 9007199254740993 <nil>
	// [9007199254740993,{"sku":"A-1","qty":2,"note":null}]
	// refhost: argument 1 .qty: out of range (offset 26)
}

// The calls the trigger runtime makes for one delivered message.
func ExampleHost() {
	h, _ := refhost.New(refhost.Config{MaxActivations: 16, MaxInputBytes: 16 * refhost.MaxPayloadBytes})
	_ = h.Register(refhost.Function{
		Service: "orders", Revision: "v7", Contract: "orders-v1", Name: "place",
		Params:   []refhost.Type{refhost.String(), refhost.U32()},
		Failures: []string{"out-of-stock"},
		Func: func(ctx context.Context, c refhost.Call) error {
			if c.Args[1].(uint32) > 10 {
				return &refhost.ApplicationError{Code: "out-of-stock"}
			}
			return nil
		},
	})
	_ = h.Publish(refhost.PublicationKey{Service: "orders", Contract: "orders-v1", Function: "place"})
	gen, _ := h.SetRoute("orders", "", "v7")

	b := trigger.BindingRef{ID: "b1", Tenant: "t1", Principal: "svc", Service: "orders", Contract: "orders-v1", Function: "place"}
	for _, payload := range []string{`["A-1", 2]`, `["A-1", 20]`, `["A-1"]`} {
		in, _ := h.ReserveInbound(context.Background(), trigger.InboundRequest{Binding: b, MaxInputBytes: 1024})
		r := in.Activate(context.Background(), trigger.Activation{
			Binding: b, RouteGeneration: gen, Deadline: time.Now().Add(time.Second), Payload: []byte(payload),
		})
		in.Release()
		fmt.Println(r.Outcome)
	}
	s := h.Stats()
	fmt.Println(s.Slots, s.InputBytes, s.Running)
	// Output:
	// success
	// declared failure
	// invalid arguments
	// 0 0 0
}
