package conformance_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	prov "github.com/latent-systems/latent-nats/tools/provision"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// embedLog is the transcript of TestTriggerEmbedding: the lines the
// embedding prints, the function's among them, in order.
type embedLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *embedLog) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *embedLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// TestTriggerEmbedding is the embedding of the runtime that README shows
// and trigger's ExampleInstall sketches without a broker, end to end
// against the pinned nats-server (tools/broker starts it on 127.0.0.1,
// handshake-first TLS, operator mode): the configuration through
// MarshalJSON and ParseConfig, the operator's provisioning and one event,
// the runtime's user with exactly the derived permissions, the reference
// host, an explicit driver (one delivery acknowledged with a verified
// receipt, then empty visits one poll interval apart), the owner's loop,
// the monitor's counts, and a stop that leaves the pools holding nothing.
// In production the Destination names your broker and the credential
// comes from protected storage; everything else is the same.
func TestTriggerEmbedding(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	b := brokertest.Start(t, broker.Options{Tenants: []string{"acme"}})
	var log embedLog

	// 1. The configuration: built in Go (or restored with ParseConfig from
	// the bytes MarshalJSON wrote). It holds no secret.
	dest := trigger.Destination{
		Address:        b.Addr(), // one IPv4 address and port, never a name
		ServerName:     b.ServerName(),
		RootCAsPEM:     string(b.CAPEM()),
		AllowNonPublic: true, // 127.0.0.1 is not public: opt in to this exact address
	}
	cfg := trigger.Config{
		Profile:             trigger.ProfileName,
		PollIntervalMS:      100,
		MaxControlLineBytes: 4096,
		MaxHeaderBytes:      4096,
		Tenants:             []trigger.Tenant{{ID: "acme", ProviderID: "local", Destination: dest}},
		Bindings: []trigger.Binding{{
			ID: "orders-place", Tenant: "acme", Principal: "svc:orders",
			Service: "orders", Contract: "orders-v1", Function: "place",
			Stream: "ORDERS", Consumer: "place", FilterSubject: "orders.place",
			MaxPayloadBytes:    1024,
			OperationTimeoutMS: 5000,
			RootBudgetMS:       2000,
			MaxDeliver:         3,
			AckWaitMS:          10000,
			NakDelayMS:         1000,
		}},
	}
	raw, err := cfg.MarshalJSON() // persist these bytes
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = trigger.ParseConfig(raw); err != nil {
		t.Fatal(err)
	}

	// The operator's side, once: the stream, the durable consumer and one
	// event (see embedProvisionAndPublish).
	if err := embedProvisionAndPublish(ctx, b, cfg, `["A-1", 2]`); err != nil {
		t.Fatal(err)
	}

	// 2. The tenant's credential, bound to tenant, provider and destination.
	secret, err := embedRuntimeSecret(b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer secret.Wipe()
	creds := []trigger.Credential{{Tenant: "acme", ProviderID: "local", Destination: dest, Secret: secret}}

	// 3. The host: here the reference host with one registered function.
	host, err := refhost.New(refhost.Config{MaxActivations: 4, MaxInputBytes: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	err = host.Register(refhost.Function{
		Service: "orders", Revision: "v1", Contract: "orders-v1", Name: "place",
		Params: []refhost.Type{refhost.String(), refhost.U32()},
		Func: func(_ context.Context, c refhost.Call) error {
			log.printf("place %s x%d (%s)", c.Args[0], c.Args[1], c.Principal)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Publish(refhost.PublicationKey{Service: "orders", Contract: "orders-v1", Function: "place"}); err != nil {
		t.Fatal(err)
	}
	if _, err := host.SetRoute("orders", "", "v1"); err != nil {
		t.Fatal(err)
	}

	// 4. Shared pools, then the installation: epoch 1, expected 0 (first).
	pools, err := trigger.NewPools(trigger.PoolConfig{Limits: trigger.DefaultPoolLimits()})
	if err != nil {
		t.Fatal(err)
	}
	defer pools.Close()
	trig, mon, err := trigger.Install(pools, trigger.Installation{LogicalID: "shop", Epoch: 1, Config: cfg, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	defer trig.Close()

	// 5a. An explicit driver: one Step at a time, waiting r.Wait between
	// (see embedStepUntil). A visit can fail, for instance when the broker
	// answers a pull later than its bound; the driver simply goes on and
	// the next visit dials again.
	r, err := embedStepUntil(ctx, trig, host, trigger.ResultDelivered)
	if err != nil {
		t.Fatal(err)
	}
	log.printf("%s: seq=%d outcome=%s action=%s ack=%s", r.Result, r.StreamSeq, r.Outcome, r.Action, r.Ack)

	// The monitor keeps the last report that was not an empty visit.
	last, ok := mon.LastStep()
	log.printf("last step is this one: %v (epoch=%d binding=%d route generation=%d)",
		ok && last == r, last.Epoch, last.Binding, last.RouteGeneration)

	// Nothing is left: the next visits are empty, one per poll interval.
	if r, err = embedStepUntil(ctx, trig, host, trigger.ResultEmpty); err != nil {
		t.Fatal(err)
	}
	log.printf("%s, next step after %v", r.Result, r.Wait)
	trig.CloseIdle() // explicit drivers close idle connections when they stop

	// 5b. Or the owner's loop: one goroutine, one timer, until ctx is done.
	runCtx, stop := context.WithTimeout(ctx, 350*time.Millisecond)
	err = trig.Run(runCtx, host)
	stop()
	log.printf("run returned: %v", err)

	// 6. The monitor's aggregate counts.
	s := mon.Snapshot()
	log.printf("delivered=%d acked=%d uncertain=%d", s.Totals.Delivered, s.Totals.Acked, s.Totals.Uncertain)

	// 7. Stop: the runtime, then the host's functions, then the pools.
	trig.Close()
	if err := host.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	pools.Close()
	u := pools.Usage()
	log.printf("held: %d bytes, %d connections", u.Bytes, u.Connections)

	want := []string{
		"place A-1 x2 (trigger:acme/orders-place/svc:orders)",
		"delivered: seq=1 outcome=success action=ack ack=verified",
		"last step is this one: true (epoch=1 binding=0 route generation=1)",
		"empty, next step after 100ms",
		"run returned: <nil>",
		"delivered=1 acked=1 uncertain=0",
		"held: 0 bytes, 0 connections",
	}
	if diff := cmp.Diff(want, log.all()); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
}

// embedMaxSteps bounds the steps of embedStepUntil.
const embedMaxSteps = 1000

// embedStepUntil is an explicit driver: it makes steps, waiting each report's
// Wait before the next, until one ends with the result want (at most
// embedMaxSteps steps, and never past ctx).
func embedStepUntil(ctx context.Context, trig *trigger.Triggers, host trigger.Host, want trigger.StepResult) (trigger.StepReport, error) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for range embedMaxSteps {
		r, err := trig.Step(ctx, host)
		if err != nil || r.Result == want {
			return r, err
		}
		timer.Reset(r.Wait)
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-timer.C:
		}
	}
	return trigger.StepReport{}, fmt.Errorf("no %s step within %d steps", want, embedMaxSteps)
}

// embedProvisionAndPublish is the operator's side of the embedding, never the
// runtime's: with a tenant administrator it creates the stream and the
// binding's durable consumer with the profile's exact settings
// (tools/provision, as `provision -config ... -credentials ...` does), then
// publishes one event with a verified JetStream acknowledgement.
func embedProvisionAndPublish(ctx context.Context, b *broker.Broker, cfg trigger.Config, payload string) error {
	admin, err := b.Admin("acme")
	if err != nil {
		return err
	}
	file, err := admin.File()
	if err != nil {
		return err
	}
	secret, err := credential.ParseCreds(file)
	clear(file)
	if err != nil {
		return err
	}
	defer secret.Wipe()
	t := cfg.Tenants[0]
	creds := []trigger.Credential{{Tenant: t.ID, ProviderID: t.ProviderID, Destination: t.Destination, Secret: secret}}
	rep, err := prov.Run(ctx, cfg, creds, prov.DefaultOptions())
	if err != nil {
		return err
	}
	if !rep.OK() {
		return fmt.Errorf("provisioning: %d created, %d asserted of %d", rep.Count(prov.ActionCreated), rep.Count(prov.ActionAsserted), len(rep.Results))
	}
	cc, err := prov.ConnConfig(t.Destination, secret)
	if err != nil {
		return err
	}
	c, err := prov.Dial(ctx, cc, 0)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Publish(ctx, cfg.Bindings[0].FilterSubject, []byte(payload))
	return err
}

// embedRuntimeSecret mints the runtime's user on the tenant's account with
// exactly the permissions provision derives for its bindings (consumer
// info, pull and acknowledgement subjects) and its private inbox: subscribe
// on trigger.InboxPrefix("acme") + ".>", that is "_INBOX.acme.>", the
// prefix the runtime's connection for the tenant uses. It returns the
// user's secret.
func embedRuntimeSecret(b *broker.Broker, cfg trigger.Config) (*credential.Secret, error) {
	perms, err := prov.DerivePermissions(cfg)
	if err != nil {
		return nil, err
	}
	p := perms[0].Permissions
	user, err := b.User("acme", broker.UserSpec{PubAllow: p.Publish, SubAllow: p.Subscribe})
	if err != nil {
		return nil, err
	}
	file, err := user.File()
	if err != nil {
		return nil, err
	}
	defer clear(file)
	return credential.ParseCreds(file)
}
