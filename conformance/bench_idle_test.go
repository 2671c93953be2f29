package conformance_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	prov "github.com/latent-systems/latent-nats/tools/provision"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// The idle benchmark's tenant, stream and publication.
const (
	idleTenant   = "idle"
	idleStream   = "IDLE"
	idleService  = "idle"
	idleContract = "latent:idle/handler@1.0.0"
	idleFunction = "handle"
	// idleCollections bounds the collections of one live-heap sample.
	idleCollections = 6
)

// BenchmarkIdleStep measures what empty bindings cost, this project alone,
// against the pinned broker (handshake-first TLS, the broker in its own
// process): for an installation of 16 and of trigger.MaxBindings bindings,
// each on its own durable consumer of the profile, all empty,
//
//   - install-B/binding: the live heap the installation holds, per binding
//     (after a collection, before any network);
//   - visited-B/binding: the live heap a binding adds on its first visit
//     (its pull state, built lazily), over one lap of Steps after the
//     connection was dialled;
//   - ns/op, B/op, allocs/op: one Step to an empty consumer, one
//     consumer-info round trip.
//
// The runtime user's publish grants are stream-scoped wildcards rather
// than the 1,024 exact subjects jspull.DerivePermissions gives for 256
// bindings: that user JWT (about 60 KB) exceeds nats-server's default
// max_control_line, conn.MaxConnectLen and the broker tool's subjects per
// list. tools/peerbench -mode idle measures the same next to nats.go, with
// the broker's counts.
func BenchmarkIdleStep(b *testing.B) {
	brk := brokertest.Start(b, broker.Options{Tenants: []string{idleTenant}})
	cfg := idleBenchConfig(brk)
	idleBenchProvision(b, brk, cfg)
	secret := idleBenchSecret(b, brk)
	defer secret.Wipe()
	t := cfg.Tenants[0]
	creds := []trigger.Credential{{Tenant: t.ID, ProviderID: t.ProviderID, Destination: t.Destination, Secret: secret}}
	host := idleBenchHost(b)
	pools, err := trigger.NewPools(trigger.PoolConfig{Limits: trigger.DefaultPoolLimits()})
	if err != nil {
		b.Fatal(err)
	}
	defer pools.Close()

	runs := 0
	for _, n := range []int{16, trigger.MaxBindings} {
		b.Run(fmt.Sprintf("bindings=%d", n), func(b *testing.B) {
			runs++
			one := cfg.Clone()
			one.Bindings = one.Bindings[:n]
			h0 := liveHeap()
			trig, _, err := trigger.Install(pools, trigger.Installation{LogicalID: fmt.Sprintf("bench-idle-%d", runs), Epoch: 1, Config: one, Credentials: creds})
			if err != nil {
				b.Fatal(err)
			}
			defer trig.Close()
			defer trig.CloseIdle()
			h1 := liveHeap()
			idleBenchStep(b, trig, host) // dials, visits binding 0
			h2 := liveHeap()
			for range n - 1 {
				idleBenchStep(b, trig, host)
			}
			h3 := liveHeap()
			runtime.KeepAlive(one)
			b.ReportAllocs()
			for b.Loop() {
				idleBenchStep(b, trig, host)
			}
			b.ReportMetric(float64(h1-h0)/float64(n), "install-B/binding")
			b.ReportMetric(float64(h3-h2)/float64(n-1), "visited-B/binding")
		})
	}
}

// idleBenchStep makes one Step and fails unless it was an empty visit.
func idleBenchStep(b testing.TB, trig *trigger.Triggers, host trigger.Host) {
	r, err := trig.Step(b.Context(), host)
	if err != nil || r.Result != trigger.ResultEmpty {
		b.Fatalf("step: %v, %v", r.Result, err)
	}
}

// maxIdleStepAllocs is the most an empty Step may allocate (see
// BENCHMARKS.md, "One empty visit"): the step's context and the
// connection's cancellation registration on it (8: the context, its
// cancel function, the value naming the installation for ErrReentrant,
// the context's Done channel, the registration and its stop function,
// the context's map of children), crypto/tls's reader for the probe's
// read and the reply's and the probe's timeout error (3), and the
// reference host's reservation (1).
const maxIdleStepAllocs = 12

// TestIdleStepAllocations: an empty Step against the pinned broker
// allocates at most maxIdleStepAllocs times (plus what the race
// detector's instrumentation adds, idleRaceAllocs). Half an allocation of
// slack absorbs a rare broker log line copied by the test harness.
func TestIdleStepAllocations(t *testing.T) {
	brk := brokertest.Start(t, broker.Options{Tenants: []string{idleTenant}})
	cfg := idleBenchConfig(brk)
	cfg.Bindings = cfg.Bindings[:2]
	idleBenchProvision(t, brk, cfg)
	secret := idleBenchSecret(t, brk)
	defer secret.Wipe()
	tn := cfg.Tenants[0]
	creds := []trigger.Credential{{Tenant: tn.ID, ProviderID: tn.ProviderID, Destination: tn.Destination, Secret: secret}}
	pools, err := trigger.NewPools(trigger.PoolConfig{Limits: trigger.DefaultPoolLimits()})
	if err != nil {
		t.Fatal(err)
	}
	defer pools.Close()
	trig, _, err := trigger.Install(pools, trigger.Installation{LogicalID: "idle-allocations", Epoch: 1, Config: cfg, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	defer trig.CloseIdle()
	host := idleBenchHost(t)
	for range len(cfg.Bindings) {
		idleBenchStep(t, trig, host) // dials, and makes each consumer
	}
	allocs := testing.AllocsPerRun(200, func() { idleBenchStep(t, trig, host) })
	t.Logf("%.2f allocations per empty step", allocs)
	if want := maxIdleStepAllocs + idleRaceAllocs; allocs > float64(want)+0.5 {
		t.Errorf("%.2f allocations per empty step, want at most %d", allocs, want)
	}
}

// liveHeap is HeapAlloc after collections, repeated until it stops
// falling (an object with a finalizer is freed a collection after the one
// that found it unreachable), at most idleCollections.
func liveHeap() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	for range idleCollections - 1 {
		prev := m.HeapAlloc
		runtime.Gosched()
		runtime.GC()
		runtime.ReadMemStats(&m)
		if m.HeapAlloc >= prev {
			break
		}
	}
	return int64(m.HeapAlloc)
}

// idleBenchConfig is trigger.MaxBindings bindings of one tenant, each on
// its own consumer of one stream.
func idleBenchConfig(brk *broker.Broker) trigger.Config {
	cfg := trigger.Config{
		Profile:             trigger.ProfileName,
		PollIntervalMS:      trigger.MinPollIntervalMS,
		MaxControlLineBytes: 4096,
		MaxHeaderBytes:      4096,
		Tenants: []trigger.Tenant{{ID: idleTenant, ProviderID: "local", Destination: trigger.Destination{
			Address:        brk.Addr(),
			ServerName:     brk.ServerName(),
			RootCAsPEM:     string(brk.CAPEM()),
			AllowNonPublic: true,
		}}},
	}
	for i := range trigger.MaxBindings {
		cfg.Bindings = append(cfg.Bindings, trigger.Binding{
			ID: fmt.Sprintf("idle.b%d", i), Tenant: idleTenant, Principal: "svc:idle",
			Service: idleService, Contract: idleContract, Function: idleFunction,
			Stream: idleStream, Consumer: fmt.Sprintf("c%03d", i), FilterSubject: fmt.Sprintf("idle.in.%d", i),
			MaxPayloadBytes:    256,
			OperationTimeoutMS: 1000,
			RootBudgetMS:       1000,
			MaxDeliver:         3,
			AckWaitMS:          2000,
			NakDelayMS:         trigger.MinNakDelayMS,
		})
	}
	return cfg
}

// idleBenchProvision creates the stream and the consumers with the
// tenant's administrator, as `provision` does.
func idleBenchProvision(b testing.TB, brk *broker.Broker, cfg trigger.Config) {
	b.Helper()
	admin, err := brk.Admin(idleTenant)
	if err != nil {
		b.Fatal(err)
	}
	secret := idleSecret(b, admin)
	defer secret.Wipe()
	t := cfg.Tenants[0]
	ctx, cancel := context.WithTimeout(b.Context(), brokertest.StartTimeout)
	defer cancel()
	rep, err := prov.Run(ctx, cfg, []trigger.Credential{{Tenant: t.ID, ProviderID: t.ProviderID, Destination: t.Destination, Secret: secret}},
		prov.DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	if !rep.OK() {
		b.Fatalf("provisioning: %d created, %d asserted of %d", rep.Count(prov.ActionCreated), rep.Count(prov.ActionAsserted), len(rep.Results))
	}
}

// idleBenchSecret mints the runtime user: the consumer-info, pull and
// acknowledgement subjects of the stream as wildcards (one grant for every
// binding), and the tenant's private inbox only.
func idleBenchSecret(b testing.TB, brk *broker.Broker) *credential.Secret {
	b.Helper()
	user, err := brk.User(idleTenant, broker.UserSpec{
		Name: "trigger",
		PubAllow: []string{
			"$JS.API.CONSUMER.INFO." + idleStream + ".*",
			"$JS.API.CONSUMER.MSG.NEXT." + idleStream + ".*",
			"$JS.ACK." + idleStream + ".>",
			"$JS.ACK.*.*." + idleStream + ".>",
		},
		SubAllow: []string{trigger.InboxPrefix(idleTenant) + ".>"},
	})
	if err != nil {
		b.Fatal(err)
	}
	return idleSecret(b, user)
}

func idleSecret(b testing.TB, c broker.Creds) *credential.Secret {
	b.Helper()
	file, err := c.File()
	if err != nil {
		b.Fatal(err)
	}
	defer clear(file)
	s, err := credential.ParseCreds(file)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// idleBenchHost is the reference host with the bindings' function
// published and routed; no message arrives, so it is never called.
func idleBenchHost(b testing.TB) *refhost.Host {
	b.Helper()
	h, err := refhost.New(refhost.Config{MaxActivations: 1, MaxInputBytes: 256})
	if err != nil {
		b.Fatal(err)
	}
	err = h.Register(refhost.Function{
		Service: idleService, Revision: "r1", Contract: idleContract, Name: idleFunction,
		Params: []refhost.Type{refhost.String()},
		Func:   func(context.Context, refhost.Call) error { return nil },
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := h.Publish(refhost.PublicationKey{Service: idleService, Contract: idleContract, Function: idleFunction}); err != nil {
		b.Fatal(err)
	}
	if _, err := h.SetRoute(idleService, "", "r1"); err != nil {
		b.Fatal(err)
	}
	return h
}
