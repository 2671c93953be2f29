package conformance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/trigger"
)

// trigTenant is the tenant account of the trigger tests.
const trigTenant = "trig"

// trigWait bounds how long a trigger test waits for the runtime.
const trigWait = 20 * time.Second

// trigHost is a trivial host: every publication eligible, every credential
// current, admission always available; the payload names the outcome.
type trigHost struct {
	mu          sync.Mutex
	activations []trigger.Activation
	payloads    []string
	outstanding int
	// activated receives one value per activation.
	activated chan struct{}
}

func newTrigHost() *trigHost { return &trigHost{activated: make(chan struct{}, 1024)} }

func (h *trigHost) PublicationEligible(trigger.BindingRef) error { return nil }
func (h *trigHost) CredentialCurrent(string) error               { return nil }

func (h *trigHost) ReserveInbound(context.Context, trigger.InboundRequest) (trigger.Inbound, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.outstanding++
	return &trigInbound{h: h}, nil
}

func (h *trigHost) held() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.outstanding
}

type trigInbound struct{ h *trigHost }

func (in *trigInbound) RouteGeneration() uint64 { return 1 }

func (in *trigInbound) Activate(_ context.Context, a trigger.Activation) trigger.Result {
	p := string(a.Payload)
	a.Payload = nil
	in.h.mu.Lock()
	in.h.activations = append(in.h.activations, a)
	in.h.payloads = append(in.h.payloads, p)
	in.h.mu.Unlock()
	in.h.activated <- struct{}{}
	switch p {
	case `["fail"]`:
		return trigger.Result{Outcome: trigger.OutcomeDeclaredFailure}
	case `["retry"]`:
		return trigger.Result{Outcome: trigger.OutcomeTimeout}
	case `"bad"`:
		return trigger.Result{Outcome: trigger.OutcomeInvalidArguments}
	}
	return trigger.Result{Outcome: trigger.OutcomeSuccess}
}

func (in *trigInbound) Release() {
	in.h.mu.Lock()
	defer in.h.mu.Unlock()
	in.h.outstanding--
}

// trigSetup provisions one stream with n profile consumers on b and
// returns the trigger configuration and the tenant's credential, whose
// broker user holds exactly the derived permissions.
func trigSetup(t testing.TB, b *broker.Broker, n int) (*trigAdmin, trigger.Config, []trigger.Credential) {
	t.Helper()
	adminCreds, err := b.Admin(trigTenant)
	if err != nil {
		t.Fatal(err)
	}
	adm := &trigAdmin{t: t, c: pullDial(t, b, adminCreds)}
	cfg := trigger.Config{
		Profile:             trigger.ProfileName,
		PollIntervalMS:      10,
		MaxControlLineBytes: 4096,
		MaxHeaderBytes:      4096,
		Tenants: []trigger.Tenant{{
			ID:         trigTenant,
			ProviderID: "local",
			Destination: trigger.Destination{
				Address:        b.Addr(),
				ServerName:     b.ServerName(),
				RootCAsPEM:     string(b.CAPEM()),
				AllowNonPublic: true,
			},
		}},
	}
	var subjects []string
	var binds []jspull.Binding
	for i := range n {
		bc := trigger.Binding{
			ID:                 fmt.Sprintf("b%d", i),
			Tenant:             trigTenant,
			Principal:          "svc:events",
			Service:            "events",
			Contract:           "latent:events/handler@1.0.0",
			Function:           "handle",
			Stream:             "TRIG",
			Consumer:           fmt.Sprintf("w%d", i),
			FilterSubject:      fmt.Sprintf("trig.in.%d", i),
			MaxPayloadBytes:    256,
			OperationTimeoutMS: 2000,
			RootBudgetMS:       1000,
			MaxDeliver:         2,
			AckWaitMS:          3000,
			NakDelayMS:         100,
		}
		cfg.Bindings = append(cfg.Bindings, bc)
		subjects = append(subjects, bc.FilterSubject)
		binds = append(binds, jspull.Binding{
			Stream: bc.Stream, Consumer: bc.Consumer, FilterSubject: bc.FilterSubject,
			PayloadCeiling: bc.MaxPayloadBytes, AckWait: bc.AckWait(), MaxDeliver: bc.MaxDeliver,
		})
	}
	adm.api("$JS.API.STREAM.CREATE.TRIG", map[string]any{"name": "TRIG", "subjects": subjects, "storage": "memory"})
	for _, pb := range binds {
		adm.api("$JS.API.CONSUMER.CREATE.TRIG."+pb.Consumer, map[string]any{
			"stream_name": "TRIG", "config": profileConfig(pb), "action": "create",
		})
	}
	perms, err := jspull.DerivePermissions(trigger.InboxPrefix(trigTenant), binds...)
	if err != nil {
		t.Fatal(err)
	}
	user, err := b.User(trigTenant, broker.UserSpec{Name: "trigger", PubAllow: perms.Publish, SubAllow: perms.Subscribe})
	if err != nil {
		t.Fatal(err)
	}
	file, err := user.File()
	if err != nil {
		t.Fatal(err)
	}
	secret, err := credential.ParseCreds(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(secret.Wipe)
	creds := []trigger.Credential{{Tenant: trigTenant, ProviderID: "local", Destination: cfg.Tenants[0].Destination, Secret: secret}}
	return adm, cfg, creds
}

// TestTriggerFullCycle runs the runtime against the pinned broker with a
// trivial host: success is acknowledged, a declared failure and invalid
// arguments terminated, a retryable failure negatively acknowledged and,
// at its last delivery, terminated as exhausted; stopping returns every
// reservation.
func TestTriggerFullCycle(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{trigTenant}})
	adm, cfg, creds := trigSetup(t, b, 2)
	pools, err := trigger.NewPools(trigger.PoolConfig{Limits: trigger.DefaultPoolLimits()})
	if err != nil {
		t.Fatal(err)
	}
	trig, mon, err := trigger.Install(pools, trigger.Installation{LogicalID: "conformance", Epoch: 1, Config: cfg, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	defer trig.Close()

	adm.publish("trig.in.0", []byte(`["ok"]`))
	adm.publish("trig.in.1", []byte(`["fail"]`))
	adm.publish("trig.in.0", []byte(`["retry"]`))
	adm.publish("trig.in.1", []byte(`"bad"`))

	host := newTrigHost()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- trig.Run(ctx, host) }()
	runErr := func() error {
		cancel()
		err := <-done
		done <- nil // for the deferred call
		return err
	}
	defer func() { _ = runErr() }()

	// ok, fail, retry (twice), bad: five activations.
	timeout := time.NewTimer(trigWait)
	defer timeout.Stop()
	for i := range 5 {
		select {
		case <-host.activated:
		case <-timeout.C:
			t.Fatalf("%d activations within %v, want 5", i, trigWait)
		}
	}
	// The last command follows the last activation; each poll here is one
	// broker round trip.
	adm.waitFor("every command acknowledged", trigWait, func() bool {
		_, ackPend := adm.consumerInfo("w0")
		s := mon.Snapshot().Totals
		return ackPend == 0 && s.Acked+s.Termed+s.Nacked+s.Exhausted == 5
	})
	if err := runErr(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if snap := mon.Snapshot(); snap.Dials != 1 || snap.Replaced != 0 {
		t.Errorf("dials %d, replaced %d: want one connection shared by both bindings", snap.Dials, snap.Replaced)
	}
	s := mon.Snapshot().Totals
	if s.Acked != 1 || s.Termed != 2 || s.Nacked != 1 || s.Exhausted != 1 || s.Uncertain != 0 || s.Delivered != 5 {
		t.Errorf("counts %+v", s)
	}
	for _, c := range []string{"w0", "w1"} {
		if pend, ackPend := adm.consumerInfo(c); pend != 0 || ackPend != 0 {
			t.Errorf("consumer %s: %d pending, %d awaiting ack", c, pend, ackPend)
		}
	}
	if host.held() != 0 {
		t.Errorf("host reservations held: %d", host.held())
	}
	u := pools.Usage()
	if u.Requests != 0 || u.Connections != 0 || u.Clients != 0 {
		t.Errorf("usage after Run returned: %+v", u)
	}
	trig.Close()
	if u := pools.Usage(); u != (trigger.Usage{}) {
		t.Errorf("usage after Close: %+v", u)
	}
	last, ok := mon.LastStep()
	if !ok || last.Ack != pull.AckVerified || last.Epoch != 1 {
		t.Errorf("LastStep %+v, %v", last, ok)
	}
}

// BenchmarkTriggerDelivery measures a busy owner's rate: one Step per
// message, each step inspecting, pulling, activating and acknowledging.
func BenchmarkTriggerDelivery(b *testing.B) {
	o := newBusyOwner(b)
	host := newTrigHost()
	host.activated = make(chan struct{}, b.N+1)
	o.run(b, host, nil)
}

// trigAdmin provisions the trigger tests' stream and consumers with raw
// JetStream API requests, as the provisioning tool would, for tests and
// benchmarks alike. Production code never has it.
type trigAdmin struct {
	t testing.TB
	c *conn.Conn
}

func (a *trigAdmin) request(subject string, body []byte) []byte {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(a.t.Context(), pullTimeout)
	defer cancel()
	defer a.c.Detach() // before cancel: ending ctx runs nothing (conn.Conn.Detach)
	r, err := a.c.Request(ctx, subject, nil, body)
	if err != nil {
		a.t.Fatalf("admin request %s: %v", subject, err)
	}
	return append([]byte(nil), r.Payload...)
}

func (a *trigAdmin) api(subject string, req any) map[string]any {
	a.t.Helper()
	var body []byte
	if req != nil {
		var err error
		if body, err = json.Marshal(req); err != nil {
			a.t.Fatal(err)
		}
	}
	var resp map[string]any
	if err := json.Unmarshal(a.request(subject, body), &resp); err != nil || resp["error"] != nil {
		a.t.Fatalf("admin %s: %v %v", subject, err, resp["error"])
	}
	return resp
}

func (a *trigAdmin) publish(subject string, payload []byte) {
	a.t.Helper()
	var ack struct {
		Seq uint64 `json:"seq"`
	}
	if err := json.Unmarshal(a.request(subject, payload), &ack); err != nil || ack.Seq == 0 {
		a.t.Fatalf("publish to %s: %v", subject, err)
	}
}

// consumerInfo returns a TRIG consumer's num_pending and num_ack_pending.
func (a *trigAdmin) consumerInfo(name string) (numPending, numAckPending int) {
	a.t.Helper()
	resp := a.api("$JS.API.CONSUMER.INFO.TRIG."+name, nil)
	num := func(k string) int { v, _ := resp[k].(float64); return int(v) }
	return num("num_pending"), num("num_ack_pending")
}

// waitFor polls cond until it holds or timeout passes; callers make each
// poll a broker round trip.
func (a *trigAdmin) waitFor(what string, timeout time.Duration, cond func() bool) {
	a.t.Helper()
	deadline := time.Now().Add(timeout)
	for i := 0; i < 100000 && time.Now().Before(deadline); i++ {
		if cond() {
			return
		}
	}
	a.t.Fatalf("%s: not reached within %v", what, timeout)
}
