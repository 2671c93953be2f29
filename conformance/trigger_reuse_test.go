package conformance_test

import (
	"testing"
)

// TestTriggerConnectionReuse runs two tenants' bindings through Run until
// every message is acknowledged: each tenant dials once and all its
// bindings share that connection, as the monitor, the pools and the
// broker's own connection list (connz, through the system account) agree.
func TestTriggerConnectionReuse(t *testing.T) {
	t.Parallel()
	perTenant := []int{4, 3}
	const perBinding = 3
	e := trigStart(t, trigSpec{tenants: []string{"reuse-a", "reuse-b"}, perTenant: perTenant})
	sys := newTrigSys(t, e.b)
	total := 0
	for k, n := range perTenant {
		for i := range n {
			for range perBinding {
				e.publish(k, i, argOK)
				total++
			}
		}
	}
	run := e.run(t)
	for range total {
		e.nextCall(t)
	}
	trigEventually(t, "every message acknowledged", trigWait, func() bool {
		return e.mon.Snapshot().Totals.Acked == uint64(total)
	})

	// Still running: one client and one connection per tenant.
	if u := e.pools.Usage(); u.Clients != len(perTenant) || u.Connections != len(perTenant) {
		t.Errorf("usage while running: %+v, want %d clients and connections", u, len(perTenant))
	}
	for k, te := range e.tenants {
		conns := sys.runtimeConns(te.account)
		if len(conns) != 1 {
			t.Fatalf("tenant %s: broker sees %d runtime connections, want 1", te.id, len(conns))
		}
		// Each delivery is at least consumer info, a pull and an ack.
		if min := int64(3 * perTenant[k] * perBinding); conns[0].InMsgs < min || conns[0].Subs != 1 {
			t.Errorf("tenant %s: connection %+v, want at least %d requests on its one inbox", te.id, conns[0], min)
		}
	}
	snap := e.mon.Snapshot()
	if snap.Dials != uint64(len(perTenant)) || snap.Replaced != 0 {
		t.Errorf("dials %d, replaced %d: want one connection per tenant", snap.Dials, snap.Replaced)
	}
	for i, c := range snap.Bindings {
		if c.Delivered != perBinding || c.Acked != perBinding || c.Uncertain != 0 {
			t.Errorf("binding %d: %+v, want %d delivered and acknowledged", i, c, perBinding)
		}
	}
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if u := e.pools.Usage(); u.Clients != 0 || u.Connections != 0 || u.Requests != 0 {
		t.Errorf("usage after Run: %+v", u)
	}
	// The broker notices the closes on its own time.
	for _, te := range e.tenants {
		trigEventually(t, "tenant "+te.id+": runtime connection gone at the broker", trigWait, func() bool {
			return len(sys.runtimeConns(te.account)) == 0
		})
	}
}
