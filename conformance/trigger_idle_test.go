package conformance_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/trigger"
)

// TestTriggerIdleBindings installs the profile's most bindings, 256 idle
// consumers of one tenant, next to an installation of one of them, and
// checks that what the runtime holds does not grow with the bindings: one
// goroutine (the caller's Run) and one socket either way, no goroutine of
// the runtime or the host besides Run, one client and one connection in
// the pools. Go exposes no count of timers; the one timer shows in the
// pacing instead: an idle owner makes at most one visit per poll
// interval, whatever the number of bindings, and the broker sees one
// request per visit (consumer info, nothing pulled).
//
// It is not parallel: goroutines and sockets are counted for the whole
// process.
//
// The runtime user holds stream-scoped prefix grants rather than the exact
// derived subjects: for 256 bindings those are 1,024 publish subjects (the
// consumer-info, pull and two acknowledgement subjects of each), a user
// JWT of about 60 KB, which is over nats-server's default 4,096-byte
// max_control_line, over conn's 12 KiB CONNECT cap (conn.MaxConnectLen)
// and over the broker tool's 256 subjects per allow list, so raising
// max_control_line alone would not do. The prefix grants still name only
// the tenant's stream and the three operations of the profile.
// TestTriggerScopedSigningKey runs the same 256 bindings with the exact
// grants, held by a scoped signing key of the account.
func TestTriggerIdleBindings(t *testing.T) {
	e := trigStart(t, trigSpec{
		tenants:      []string{"idle"},
		perTenant:    []int{trigger.MaxBindings},
		prefixGrants: true,
	})
	te := e.tenant(0)
	sys := newTrigSys(t, e.b)
	poll := e.cfg.PollInterval()

	// A second installation of the first binding alone, on the same pools,
	// sharing the tenant's credential.
	// It adds the charge it has alone on fresh pools.
	one := e.cfg.Clone()
	one.Bindings = one.Bindings[:1]
	charged := e.pools.Usage().MetadataBytes
	oneTrig, oneMon, err := trigger.Install(e.pools, trigger.Installation{LogicalID: "conformance-one", Epoch: 1, Config: one, Credentials: e.creds})
	if err != nil {
		t.Fatal(err)
	}
	defer oneTrig.Close()
	alone, err := trigger.NewPools(trigger.PoolConfig{Limits: trigger.DefaultPoolLimits()})
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close()
	aloneTrig, _, err := trigger.Install(alone, trigger.Installation{LogicalID: "conformance-one", Epoch: 1, Config: one, Credentials: e.creds})
	if err != nil {
		t.Fatal(err)
	}
	defer aloneTrig.Close()
	if got, want := e.pools.Usage().MetadataBytes-charged, alone.Usage().MetadataBytes; got != want || want <= 0 {
		t.Errorf("metadata charged %d by the second installation, want %d, its charge alone", got, want)
	}

	// One lap of explicit steps: every binding visited once, each visit
	// one consumer-info request and nothing pulled.
	first := e.step(t)
	conns := sys.runtimeConns(te.account)
	if len(conns) != 1 {
		t.Fatalf("broker sees %d runtime connections after the first step, want 1", len(conns))
	}
	before := conns[0]
	for i := 1; i < trigger.MaxBindings; i++ {
		if r := e.step(t); r.Result != trigger.ResultEmpty || r.Binding != i {
			t.Fatalf("step %d: %+v, want an empty visit of binding %d", i+1, r, i)
		}
	}
	after := sys.runtimeConns(te.account)
	if len(after) != 1 || after[0].CID != before.CID {
		t.Fatalf("broker sees %+v after one lap, want the first connection alone", after)
	}
	if first.Result != trigger.ResultEmpty || first.Binding != 0 {
		t.Errorf("first step %+v, want an empty visit of binding 0", first)
	}
	if got, want := after[0].InMsgs-before.InMsgs, int64(trigger.MaxBindings-1); got != want {
		t.Errorf("broker received %d requests in %d empty visits, want one each", got, want)
	}
	if after[0].Subs != 1 {
		t.Errorf("runtime connection holds %d subscriptions, want its one inbox", after[0].Subs)
	}
	snap := e.mon.Snapshot()
	if snap.Steps != trigger.MaxBindings || snap.Dials != 1 || snap.Totals.Empty != trigger.MaxBindings || snap.Totals.EmptyPulls != 0 {
		t.Errorf("after one lap: steps %d, dials %d, empty %d, empty pulls %d; want %d, 1, %d, 0",
			snap.Steps, snap.Dials, snap.Totals.Empty, snap.Totals.EmptyPulls, trigger.MaxBindings, trigger.MaxBindings)
	}
	for i, c := range snap.Bindings {
		if c.Visits != 1 {
			t.Fatalf("binding %d visited %d times in one lap", i, c.Visits)
		}
	}
	e.trig.CloseIdle()
	// gone waits until the broker has noticed the runtime's close.
	gone := func(what string) {
		t.Helper()
		trigEventually(t, what+": runtime connection gone at the broker", trigWait, func() bool {
			return len(sys.runtimeConns(te.account)) == 0
		})
	}
	gone("explicit steps")

	sockets0, haveSockets := trigSockets(t)
	g0 := runtime.NumGoroutine()

	// measure runs an installation idle for a bounded number of poll
	// intervals and returns what the process held meanwhile.
	type held struct {
		goroutines, owned, sockets int
		steps                      uint64
		elapsed                    time.Duration
		requests                   int64
		brokerElapsed              time.Duration
		usage                      trigger.Usage
	}
	const intervals = 30
	measure := func(name string, trig *trigger.Triggers, mon *trigger.Monitor) held {
		t.Helper()
		r := runOwner(t, trig, e.host)
		var c0 trigConn
		trigEventually(t, name+": first visit", trigWait, func() bool {
			conns := sys.runtimeConns(te.account)
			if len(conns) != 1 {
				return false
			}
			c0 = conns[0]
			return true
		})
		b0 := time.Now()
		s0, t0 := mon.Snapshot().Steps, time.Now()
		trigEventually(t, name+": idle visits", trigWait, func() bool { return mon.Snapshot().Steps >= s0+intervals })
		var h held
		h.goroutines, h.owned = trigGoroutines()
		h.sockets, _ = trigSockets(t)
		h.usage = e.pools.Usage()
		h.steps, h.elapsed = mon.Snapshot().Steps-s0, time.Since(t0)
		c1 := sys.runtimeConns(te.account)
		h.brokerElapsed = time.Since(b0)
		if len(c1) != 1 || c1[0].CID != c0.CID {
			t.Fatalf("%s: broker sees %+v, want one lasting runtime connection", name, c1)
		}
		h.requests = c1[0].InMsgs - c0.InMsgs
		if err := r.stop(); err != nil {
			t.Fatalf("%s: Run: %v", name, err)
		}
		gone(name)
		return h
	}
	h1 := measure("1 binding", oneTrig, oneMon)
	h256 := measure("256 bindings", e.trig, e.mon)

	for _, c := range []struct {
		name string
		h    held
	}{{"1 binding", h1}, {"256 bindings", h256}} {
		// The caller's goroutine running Run is the only one added.
		if c.h.goroutines != g0+1 || c.h.owned != 1 {
			t.Errorf("%s: %d goroutines (%d of the runtime or host), want %d (1)", c.name, c.h.goroutines, c.h.owned, g0+1)
		}
		if haveSockets && c.h.sockets != sockets0+1 {
			t.Errorf("%s: %d sockets open, want %d", c.name, c.h.sockets, sockets0+1)
		}
		if c.h.usage.Clients != 1 || c.h.usage.Connections != 1 {
			t.Errorf("%s: usage %+v, want one client and one connection", c.name, c.h.usage)
		}
		// One timer paces empty visits: at most one per poll interval (one
		// more for a visit that was under way when counting began).
		if most := uint64(c.h.elapsed/poll) + 1; c.h.steps > most {
			t.Errorf("%s: %d visits in %v, want at most %d at one per %v", c.name, c.h.steps, c.h.elapsed, most, poll)
		}
		if most := int64(c.h.brokerElapsed/poll) + 2; c.h.requests > most {
			t.Errorf("%s: broker received %d requests in %v, want at most %d", c.name, c.h.requests, c.h.brokerElapsed, most)
		}
	}
	if h1.goroutines != h256.goroutines || (haveSockets && h1.sockets != h256.sockets) {
		t.Errorf("goroutines %d and sockets %d with 1 binding, %d and %d with 256: they grow with bindings",
			h1.goroutines, h1.sockets, h256.goroutines, h256.sockets)
	}
	t.Logf("idle: %d goroutines, %d sockets before; 1 binding %+v; 256 bindings %+v", g0, sockets0, h1, h256)

	// Stopped: everything returns.
	trigAwaitGoroutines(t, "goroutines after Run returned", g0)
	if n, ok := trigSockets(t); ok && n != sockets0 {
		t.Errorf("%d sockets open after Run returned, want %d", n, sockets0)
	}
	if u := e.pools.Usage(); u.Requests != 0 || u.Clients != 0 || u.Connections != 0 {
		t.Errorf("usage after Run returned: %+v", u)
	}
	if s := e.ref.Stats(); s.Slots != 0 || s.InputBytes != 0 || s.Running != 0 || s.Activations != 0 {
		t.Errorf("host stats: %+v", s)
	}
}
