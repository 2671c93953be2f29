package conformance_test

import (
	"testing"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
)

// TestTriggerRouteReplacement replaces the binding's route after the host
// pinned it for a visit and before that visit's activation: the accepted
// input keeps the revision and generation it pinned, and the next pull
// resolves the new route. A removed route makes no pull at all; the route
// set again is resolved at the next visit.
func TestTriggerRouteReplacement(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{tenants: []string{"route"}, perTenant: []int{1}})
	te := e.tenant(0)
	delivered := func(r trigger.StepReport) bool { return r.Result == trigger.ResultDelivered }

	// The route moves to r2 (generation 2) right after this visit pinned
	// r1 (generation 1), before anything was pulled.
	var replaced uint64
	e.host.set(func(trigger.BindingRef) {
		gen, err := e.ref.SetRoute(trigService, "", "r2")
		if err != nil {
			t.Error(err)
		}
		replaced = gen
		e.host.set(nil, nil) // once
	}, nil)
	seq := e.publish(0, 0, argOK)
	r := e.stepUntil(t, "first delivery", 4, delivered)
	c := e.nextCall(t)
	if replaced != 2 {
		t.Fatalf("route generation after replacement %d, want 2", replaced)
	}
	if c.Revision != "r1" || c.Gen != 1 || c.StreamSeq != seq || r.RouteGeneration != 1 || r.Ack != pull.AckVerified {
		t.Errorf("accepted input: call %+v, step %+v; want revision r1, generation 1, acknowledged", c, r)
	}
	if last, ok := e.mon.LastStep(); !ok || last.RouteGeneration != 1 {
		t.Errorf("LastStep %+v: want route generation 1", last)
	}

	// The next pull resolves the current route.
	seq = e.publish(0, 0, argOK)
	r = e.stepUntil(t, "delivery after replacement", 4, delivered)
	c = e.nextCall(t)
	if c.Revision != "r2" || c.Gen != 2 || c.StreamSeq != seq || r.RouteGeneration != 2 || r.Ack != pull.AckVerified {
		t.Errorf("next pull: call %+v, step %+v; want revision r2, generation 2, acknowledged", c, r)
	}

	// Without a route the host reserves nothing and nothing is pulled.
	e.ref.RemoveRoute(trigService, "")
	seq = e.publish(0, 0, argOK)
	before := te.info(0)
	for i := range 3 {
		if r := e.step(t); r.Result != trigger.ResultSkipped || r.Error != trigger.ClassHost {
			t.Fatalf("visit %d without a route: %+v, want skipped by the host", i, r)
		}
	}
	if got := te.info(0); got != before || got.NumPending != 1 {
		t.Errorf("consumer %+v before, %+v after visits without a route", before, got)
	}
	gen, err := e.ref.SetRoute(trigService, "", "r1")
	if err != nil {
		t.Fatal(err)
	}
	r = e.stepUntil(t, "delivery after the route returned", 4, delivered)
	c = e.nextCall(t)
	if gen != 4 || c.Revision != "r1" || c.Gen != gen || c.StreamSeq != seq || r.RouteGeneration != gen {
		t.Errorf("after the route returned (generation %d): call %+v, step %+v", gen, c, r)
	}
	if s := e.ref.Stats(); s.NoRoute != 3 || s.Misuse != 0 {
		t.Errorf("host stats %+v: want 3 refused for want of a route, no misuse", s)
	}
	e.trig.CloseIdle()
}
