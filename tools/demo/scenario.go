package main

import (
	"context"
	"strconv"

	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
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

	// poisonAccount is the account whose charge always fails with a
	// retryable platform error, until the consumer's deliveries run out.
	poisonAccount = 13
	// outOfStockQty is the quantity above which an order fails with the
	// declared application failure "out-of-stock".
	outOfStockQty = 100
)

// The per-binding settings of the scenario, chosen to keep the run short:
// a NAK delay at the profile's minimum, three deliveries, and an ack wait
// just past its own minimum (operation timeout + 1 s).
const (
	pollIntervalMS     = 50
	maxPayloadBytes    = 1024
	operationTimeoutMS = 1000
	rootBudgetMS       = 500
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
	// kindPoison: the function fails with a retryable platform error on
	// every delivery; delayed -NAK until the last delivery, then +TERM
	// reported as exhausted.
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

// scenario is everything the demo sets up: the configuration (without
// destinations, which come from the broker), the functions behind its
// bindings and the events it publishes.
type scenario struct {
	Bindings  []trigger.Binding
	Functions []refhost.Function
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
	charge, _ := refhost.ParseType("record{account: u64, amount: u32, currency: enum{eur, usd}}")
	functions := []refhost.Function{
		{
			Service: "orders", Revision: revision, Contract: ordersContract, Name: "place",
			Params:   []refhost.Type{refhost.String(), refhost.U32()},
			Failures: []string{"out-of-stock"},
			Func: func(_ context.Context, c refhost.Call) error {
				if c.Args[1].(uint32) > outOfStockQty {
					return &refhost.ApplicationError{Code: "out-of-stock"}
				}
				return nil
			},
		},
		{
			Service: "orders", Revision: revision, Contract: ordersContract, Name: "cancel",
			Params: []refhost.Type{refhost.String()},
			Func:   func(context.Context, refhost.Call) error { return nil },
		},
		{
			Service: "payments", Revision: revision, Contract: paymentsContract, Name: "charge",
			Params: []refhost.Type{charge},
			Func: func(_ context.Context, c refhost.Call) error {
				if c.Args[0].(map[string]any)["account"].(uint64) == poisonAccount {
					return errLedgerUnavailable
				}
				return nil
			},
		},
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

// newHost returns the reference host with the scenario's functions
// registered, published and routed.
func (s scenario) newHost() (*refhost.Host, error) {
	h, err := refhost.New(refhost.Config{MaxActivations: hostAdmission, MaxInputBytes: hostAdmission * maxPayloadBytes})
	if err != nil {
		return nil, err
	}
	for _, f := range s.Functions {
		if err := h.Register(f); err != nil {
			return nil, err
		}
	}
	for _, k := range s.publications() {
		if err := h.Publish(k); err != nil {
			return nil, err
		}
	}
	for _, svc := range s.services() {
		if _, err := h.SetRoute(svc, "", revision); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// hostAdmission is the reference host's admission: the runtime holds at
// most one reservation at a time, so two slots leave room to spare.
const hostAdmission = 2

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
