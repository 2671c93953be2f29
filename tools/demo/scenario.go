package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
	"github.com/latent-systems/latent-nats/trigger/wasmhost"
)

// The scenario's names. Two tenants share the one broker, each in its own
// account; each binding has its own durable consumer.
const (
	tenantShop     = "acme"
	tenantPayments = "globex"
	providerID     = "local"
	logicalID      = "demo"
	revision       = "v1"
	runtimeUser    = "trigger-runtime"

	// poisonAccount is the account whose charge always traps in the
	// guest (tools/demo/guest panics), a retryable platform failure, until
	// the consumer's deliveries run out.
	poisonAccount = 13
	// outOfStockQty is the quantity above which the guest's place fails
	// with the declared application failure "out-of-stock".
	outOfStockQty = 100
)

// The guest's bounds. The host reserves guestMemoryPages for every
// activation before any network, so its guest memory is
// hostAdmission times that.
const (
	// guestMemoryPages is the memory ceiling of one activation of the
	// guest, in 64 KiB pages (8 MiB): the Go runtime of tools/demo/guest
	// holds about 37 pages once initialised, and the demo's calls
	// allocate little more.
	guestMemoryPages = 128
	// guestGrants: a Go guest (GOOS=wasip1) imports WASI; it gets the
	// clocks, random bytes and discarded output, no file or socket.
	guestGrants = wasmhost.GrantWASI
)

// The per-binding settings of the scenario, chosen to keep the run short:
// a NAK delay at the profile's minimum, three deliveries, and an ack wait
// just past its own minimum (operation timeout + 1 s). The root budget
// covers a fresh instance of the Go guest: a few milliseconds to make, but
// up to a few hundred under the race detector on a loaded machine (go test
// -race ./...), where a budget of 500 ms was seen to run out.
const (
	pollIntervalMS     = 50
	maxPayloadBytes    = 1024
	operationTimeoutMS = 2000
	rootBudgetMS       = 1500
	maxDeliver         = 3
	ackWaitMS          = operationTimeoutMS + trigger.AckWaitMarginMS
	nakDelayMS         = trigger.MinNakDelayMS
	controlLineBytes   = 4096
	headerBytes        = 4096
)

// eventKind is what an event is meant to exercise.
type eventKind uint8

const (
	// kindGood: the function succeeds; the runtime sends +ACK.
	kindGood eventKind = iota + 1
	// kindDeclared: the function returns a failure its contract declares;
	// +TERM.
	kindDeclared
	// kindInvalid: the payload is not the function's argument array;
	// +TERM.
	kindInvalid
	// kindPoison: the function fails with a retryable platform failure (a
	// trap) on every delivery; delayed -NAK until the last delivery, then
	// +TERM reported as exhausted.
	kindPoison
)

// numEventKinds is the number of eventKind values; they are
// 1..numEventKinds.
const numEventKinds = int(kindPoison)

// String returns the kind's name, or "eventKind(n)" outside the list.
func (k eventKind) String() string {
	switch k {
	case kindGood:
		return "good"
	case kindDeclared:
		return "declared failure"
	case kindInvalid:
		return "invalid payload"
	case kindPoison:
		return "poison"
	}
	return "eventKind(" + strconv.Itoa(int(k)) + ")"
}

// event is one message the demo publishes: to binding Binding's filter
// subject, a payload in application/vnd.latent.wit-values.v1+json.
type event struct {
	Binding int
	Kind    eventKind
	Payload string
}

// function is one function of the demo's guest (tools/demo/guest), which
// implements it, as the scenario registers it: its service and contract
// (under revision), its WIT name, and its parameter and result types in
// the syntax of refhost.ParseType. The types are written here and nowhere
// else in the demo.
type function struct {
	Service  string
	Contract string
	Name     string
	Params   []string
	Result   string
}

// scenario is everything the demo sets up: the configuration (without
// destinations, which come from the broker), the functions behind its
// bindings and the events it publishes.
type scenario struct {
	Bindings  []trigger.Binding
	Functions []function
	Events    []event
}

// newScenario returns the demo's scenario: a shop tenant with two bindings
// (orders placed and cancelled) and a payments tenant with one (charges).
func newScenario() scenario {
	bind := func(id, tenant, principal, service, contract, function, stream, consumer, subject string) trigger.Binding {
		return trigger.Binding{
			ID: id, Tenant: tenant, Principal: principal,
			Service: service, Contract: contract, Function: function,
			Stream: stream, Consumer: consumer, FilterSubject: subject,
			MaxPayloadBytes:    maxPayloadBytes,
			OperationTimeoutMS: operationTimeoutMS,
			RootBudgetMS:       rootBudgetMS,
			MaxDeliver:         maxDeliver,
			AckWaitMS:          ackWaitMS,
			NakDelayMS:         nakDelayMS,
		}
	}
	const (
		ordersContract   = "latent:orders/checkout@1.0.0"
		paymentsContract = "latent:payments/ledger@1.0.0"
	)
	bindings := []trigger.Binding{
		bind("orders-place", tenantShop, "svc:orders", "orders", ordersContract, "place", "ORDERS", "place", "orders.place"),
		bind("orders-cancel", tenantShop, "svc:orders", "orders", ordersContract, "cancel", "ORDERS", "cancel", "orders.cancel"),
		bind("payments-charge", tenantPayments, "svc:payments", "payments", paymentsContract, "charge", "PAYMENTS", "charge", "payments.charge"),
	}
	functions := []function{
		{Service: "orders", Contract: ordersContract, Name: "place",
			Params: []string{"string", "u32"}, Result: "result<u32, enum{out-of-stock}>"},
		{Service: "orders", Contract: ordersContract, Name: "cancel",
			Params: []string{"string"}, Result: "u32"},
		{Service: "payments", Contract: paymentsContract, Name: "charge",
			Params: []string{"record{account: u64, amount: u32, currency: enum{eur, usd}}"}, Result: "result<u32, enum{declined}>"},
	}
	events := []event{
		{0, kindGood, `["A-1", 2]`},
		{0, kindGood, `["B-7", 1]`},
		{0, kindDeclared, `["C-3", 500]`},
		{0, kindInvalid, `["A-1", "two"]`},
		{1, kindGood, `["ord-1"]`},
		{2, kindGood, `[{"account": 7, "amount": 1250, "currency": "eur"}]`},
		{2, kindPoison, `[{"account": 13, "amount": 99, "currency": "usd"}]`},
		{2, kindGood, `[{"account": 8, "amount": 40, "currency": "usd"}]`},
	}
	return scenario{Bindings: bindings, Functions: functions, Events: events}
}

// tenantIDs returns the tenants of bindings in order of first appearance.
func tenantIDs(bindings []trigger.Binding) []string {
	var out []string
	seen := make(map[string]bool, len(bindings))
	for _, b := range bindings {
		if !seen[b.Tenant] {
			seen[b.Tenant] = true
			out = append(out, b.Tenant)
		}
	}
	return out
}

// config returns the trigger configuration of s with every tenant at dest.
func (s scenario) config(dest trigger.Destination) trigger.Config {
	cfg := trigger.Config{
		Profile:             trigger.ProfileName,
		PollIntervalMS:      pollIntervalMS,
		MaxControlLineBytes: controlLineBytes,
		MaxHeaderBytes:      headerBytes,
		Bindings:            append([]trigger.Binding(nil), s.Bindings...),
	}
	for _, id := range tenantIDs(s.Bindings) {
		cfg.Tenants = append(cfg.Tenants, trigger.Tenant{ID: id, ProviderID: providerID, Destination: dest})
	}
	return cfg
}

// publications returns the publication of every binding, once each.
func (s scenario) publications() []refhost.PublicationKey {
	var out []refhost.PublicationKey
	seen := make(map[refhost.PublicationKey]bool, len(s.Bindings))
	for _, b := range s.Bindings {
		k := refhost.PublicationKey{Service: b.Service, Contract: b.Contract, Function: b.Function}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// services returns the services of the bindings, once each.
func (s scenario) services() []string {
	var out []string
	seen := make(map[string]bool, len(s.Bindings))
	for _, b := range s.Bindings {
		if !seen[b.Service] {
			seen[b.Service] = true
			out = append(out, b.Service)
		}
	}
	return out
}

// modules returns the scenario's functions as WebAssembly modules of
// binary, the guest: one per service and contract, in order of first
// appearance, each exporting that service's functions under revision. Every
// type is parsed here; a malformed one is an error.
func (s scenario) modules(binary []byte) ([]wasmhost.Module, error) {
	type key struct{ service, contract string }
	var out []wasmhost.Module
	index := make(map[key]int, len(s.Functions))
	for _, f := range s.Functions {
		e := wasmhost.Export{Name: f.Name, Params: make([]refhost.Type, len(f.Params))}
		for i, p := range f.Params {
			t, err := refhost.ParseType(p)
			if err != nil {
				return nil, fmt.Errorf("function %s, parameter %d: %w", f.Name, i, err)
			}
			e.Params[i] = t
		}
		if f.Result != "" {
			t, err := refhost.ParseType(f.Result)
			if err != nil {
				return nil, fmt.Errorf("function %s, result: %w", f.Name, err)
			}
			e.Result = &t
		}
		k := key{f.Service, f.Contract}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, wasmhost.Module{
				Service: f.Service, Revision: revision, Contract: f.Contract, Binary: binary,
				MemoryPages: guestMemoryPages, Grants: guestGrants,
			})
		}
		out[i].Functions = append(out[i].Functions, e)
	}
	return out, nil
}

// newHost returns the reference host with the scenario's functions
// registered as WebAssembly guests of binary (tools/demo/guest, compiled
// once per module here), published and routed, and the wasmhost Runtime
// (configured by wc: its OnActivation sees every activation, each in a
// fresh instance) that runs them. Close the Runtime once the host is idle.
func (s scenario) newHost(ctx context.Context, binary []byte, wc wasmhost.Config) (*refhost.Host, *wasmhost.Runtime, error) {
	mods, err := s.modules(binary)
	if err != nil {
		return nil, nil, err
	}
	h, err := refhost.New(refhost.Config{
		MaxActivations: hostAdmission,
		MaxInputBytes:  hostAdmission * maxPayloadBytes,
		MaxMemoryBytes: hostAdmission * guestMemoryPages * wasmhost.PageSize,
	})
	if err != nil {
		return nil, nil, err
	}
	rt, err := wasmhost.New(ctx, h, wc)
	if err != nil {
		return nil, nil, err
	}
	if err := s.install(ctx, h, rt, mods); err != nil {
		_ = rt.Close(context.WithoutCancel(ctx))
		return nil, nil, err
	}
	return h, rt, nil
}

// install registers mods with rt, then publishes and routes the
// scenario's functions on h.
func (s scenario) install(ctx context.Context, h *refhost.Host, rt *wasmhost.Runtime, mods []wasmhost.Module) error {
	for _, m := range mods {
		if err := rt.Register(ctx, m); err != nil {
			return err
		}
	}
	for _, k := range s.publications() {
		if err := h.Publish(k); err != nil {
			return err
		}
	}
	for _, svc := range s.services() {
		if _, err := h.SetRoute(svc, "", revision); err != nil {
			return err
		}
	}
	return nil
}

// hostAdmission is the reference host's admission: the runtime holds at
// most one reservation at a time, so two slots leave room to spare.
const hostAdmission = 2

// expectedActivations returns what the guest's activations must add up
// to: one per good event and declared failure and maxDeliver per poison
// event (an invalid payload never reaches the guest), each in a fresh
// instance; and one ok result per good event, each counting one call (the
// guest's counter, in an instance that served no call before).
func expectedActivations(bindings []trigger.Binding, events []event) activationCounts {
	var c activationCounts
	for _, e := range events {
		switch e.Kind {
		case kindGood:
			c.Activations++
			c.Counted++
		case kindDeclared:
			c.Activations++
		case kindInvalid:
		case kindPoison:
			c.Activations += uint64(bindings[e.Binding].MaxDeliver)
		}
	}
	c.Fresh, c.One = c.Activations, c.Counted
	return c
}

// expectedRows returns the table the scenario must end with: per binding,
// one delivery and one +ACK per good event, one delivery and one +TERM per
// declared failure or invalid payload, and per poison event maxDeliver
// deliveries, maxDeliver-1 delayed -NAKs and one exhausted +TERM; nothing
// uncertain.
func expectedRows(bindings []trigger.Binding, events []event) []row {
	rows := make([]row, len(bindings))
	for i, b := range bindings {
		rows[i] = row{Binding: b.ID, Tenant: b.Tenant}
	}
	for _, e := range events {
		r := &rows[e.Binding]
		switch e.Kind {
		case kindGood:
			r.Delivered++
			r.Acked++
		case kindDeclared, kindInvalid:
			r.Delivered++
			r.Termed++
		case kindPoison:
			md := uint64(bindings[e.Binding].MaxDeliver)
			r.Delivered += md
			r.Nacked += md - 1
			r.Exhausted++
		}
	}
	return rows
}
