package trigger_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/netip"
	"time"

	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/trigger"
)

// The embedding of the runtime, up to the first step, without a broker:
// the configuration restored from the bytes MarshalJSON wrote, the
// tenant's credential, shared pools and the installation, then one step
// that the host ends before any network (it has no capacity for now, see
// busyHost), the monitor's view of it, and the stop. With a host that
// reserves, the same step dials the destination, pulls one message,
// activates the function and acknowledges; conformance's
// TestTriggerEmbedding runs that whole embedding against the pinned
// broker.
func ExampleInstall() {
	// 1. The configuration: built in Go, or restored with ParseConfig from
	// the bytes MarshalJSON wrote. It holds no secret.
	dest := trigger.Destination{
		Address:        netip.MustParseAddrPort("127.0.0.1:4222"), // never a name
		ServerName:     "broker.latent.test",
		RootCAsPEM:     exampleRootPEM(),
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
		fmt.Println(err)
		return
	}
	if cfg, err = trigger.ParseConfig(raw); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("config: %d tenant, %d binding, profile %s\n", len(cfg.Tenants), len(cfg.Bindings), cfg.Profile)

	// 2. The tenant's credential (from protected storage), bound to
	// tenant, provider and destination. It redacts itself.
	secret, err := credential.FromToken("example-token")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer secret.Wipe()
	creds := []trigger.Credential{{Tenant: "acme", ProviderID: "local", Destination: dest, Secret: secret}}
	fmt.Println("credential:", secret)

	// 3. Shared pools, then the installation: epoch 1, expected 0 (first).
	// Installing dials nothing; a tenant's connection is dialled by the
	// first step that needs it.
	pools, err := trigger.NewPools(trigger.PoolConfig{Limits: trigger.DefaultPoolLimits()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pools.Close()
	trig, mon, err := trigger.Install(pools, trigger.Installation{LogicalID: "shop", Epoch: 1, Config: cfg, Credentials: creds})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer trig.Close()

	// 4. One step: the host declines the reservation, so the visit is
	// skipped before the pull, and the next step comes a poll interval
	// later.
	r, err := trig.Step(context.Background(), busyHost{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("step %d: %s (%s), next step after %v\n", r.Step, r.Result, r.Error, r.Wait)

	// 5. The monitor: a skip is kept in its own slot, and counted.
	skip, ok := mon.LastSkip()
	fmt.Println("last skip is this one:", ok && skip == r)
	s := mon.Snapshot()
	fmt.Printf("steps=%d dials=%d visits=%d skipped=%d delivered=%d\n",
		s.Steps, s.Dials, s.Totals.Visits, s.Totals.Skipped, s.Totals.Delivered)

	// 6. Stop: the runtime, then the pools.
	trig.Close()
	pools.Close()
	u := pools.Usage()
	fmt.Printf("held: %d bytes, %d connections\n", u.Bytes, u.Connections)

	// Output:
	// config: 1 tenant, 1 binding, profile nats-jetstream-pull-v1
	// credential: credential.Secret(token, [redacted])
	// step 1: skipped (unavailable), next step after 100ms
	// last skip is this one: true
	// steps=1 dials=0 visits=1 skipped=1 delivered=0
	// held: 0 bytes, 0 connections
}

// busyHost is a host with no capacity for now: every publication is
// eligible and every credential current, but ReserveInbound answers
// trigger.ErrUnavailable, so a step ends before it pulls anything.
type busyHost struct{}

func (busyHost) PublicationEligible(trigger.BindingRef) error { return nil }
func (busyHost) CredentialCurrent(string) error               { return nil }

func (busyHost) ReserveInbound(context.Context, trigger.InboundRequest) (trigger.Inbound, error) {
	return nil, trigger.ErrUnavailable
}

// exampleRootPEM returns a fresh self-signed root certificate in PEM, in
// place of the broker's CA (the example never connects).
func exampleRootPEM() string {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "example root"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
