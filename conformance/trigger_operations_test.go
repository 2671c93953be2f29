package conformance_test

import (
	"testing"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
)

// TestTriggerOperationsPerVisit counts, on the broker's side, what each
// visit publishes on the runtime's one connection (the broker's in_msgs
// for it): an empty visit is exactly one request (consumer info), a
// delivering visit exactly three (consumer info, the pull, the
// acknowledgement), for every outcome's acknowledgement, over several
// rounds. The profile's "exactly three protocol operations" measured, not
// sampled as a lower bound.
func TestTriggerOperationsPerVisit(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{tenants: []string{"ops"}, perTenant: []int{1}})
	te := e.tenant(0)
	sys := newTrigSys(t, e.b)
	if r := e.step(t); r.Result != trigger.ResultEmpty {
		t.Fatalf("first step %+v, want an empty visit (it dials)", r)
	}
	inMsgs := func() int64 {
		t.Helper()
		conns := sys.runtimeConns(te.account)
		if len(conns) != 1 {
			t.Fatalf("broker sees %d runtime connections, want 1", len(conns))
		}
		return conns[0].InMsgs
	}
	for round, arg := range []string{argOK, argFail, argOK, argOK} {
		before := inMsgs()
		if r := e.step(t); r.Result != trigger.ResultEmpty {
			t.Fatalf("round %d: %+v, want an empty visit", round, r)
		}
		if got := inMsgs() - before; got != 1 {
			t.Errorf("round %d: an empty visit sent %d requests, want 1", round, got)
		}
		e.publish(0, 0, arg)
		before = inMsgs()
		r := e.step(t)
		if r.Result != trigger.ResultDelivered || r.Ack != pull.AckVerified {
			t.Fatalf("round %d: %+v, want a delivery acknowledged with a verified receipt", round, r)
		}
		if got := inMsgs() - before; got != 3 {
			t.Errorf("round %d (%s, %v): a delivering visit sent %d requests, want 3", round, arg, r.Action, got)
		}
	}
}
