package metrics_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
)

// knownSnapshot is a snapshot with two bindings and a distinct count in
// every field the exposition writes, each binding with consumer info.
func knownSnapshot() trigger.Snapshot {
	s := trigger.Snapshot{
		LogicalID: "orders-logical-zqx",
		Epoch:     7,
		Steps:     3210,
		Dials:     57,
		Replaced:  13,
		Rotations: 2,
		Bindings:  make([]trigger.Counts, 2),
	}
	for i := range s.Bindings {
		c := &s.Bindings[i]
		base := uint64(i) * 1000
		c.Visits = base + 1600
		c.Skipped = base + 11
		c.Empty = base + 1200
		c.EmptyPulls = base + 90
		c.Awaiting = base + 70
		c.Delivered = base + 290
		c.Acked = base + 200
		c.Termed = base + 40
		c.Nacked = base + 30
		c.Exhausted = base + 5
		c.Uncertain = base + 3
		c.Late = base + 2
		c.Unacknowledged = base + 15
		c.Failed = base + 9
		for o := range c.Outcomes() {
			c.SetOutcome(o, base+100+uint64(o))
		}
		for e := range c.Errors() {
			c.SetError(e, base+300+uint64(e))
		}
		for r := range c.Refusals() {
			c.SetRefusal(r, base+500+uint64(r))
		}
		for f := range c.DialFailures() {
			c.SetDialFailure(f, base+700+uint64(f))
		}
	}
	for i := range s.Bindings {
		s.Totals.Visits += s.Bindings[i].Visits
	}
	// Binding 0 read the leader's view, binding 1 a replica's during an
	// election.
	s.Consumers = []trigger.ConsumerState{
		{At: time.Date(2026, 3, 4, 5, 6, 7, 123_000_000, time.UTC), Pending: 4821, AckPending: 1, Redelivered: 17, Waiting: 1, Leader: true},
		{At: time.Date(2026, 3, 4, 5, 6, 1, 456_000_000, time.UTC), Pending: 12, Redelivered: 3},
	}
	return s
}

// knownLast is a delivered step whose acknowledgement was uncertain.
func knownLast() trigger.StepReport {
	return trigger.StepReport{
		Step:            3209,
		Epoch:           7,
		Binding:         1,
		At:              time.Date(2026, 3, 4, 5, 6, 7, 891_000_000, time.UTC),
		Result:          trigger.ResultDelivered,
		StreamSeq:       123456,
		Delivered:       4,
		RouteGeneration: 12,
		Outcome:         trigger.OutcomeTimeout,
		Action:          pull.ActionNak,
		Ack:             pull.AckUncertain,
		Error:           trigger.ClassAckUncertain,
		Wait:            250 * time.Millisecond,
	}
}

// Distinctive strings of the fixture's configuration: none may appear in
// an exposition.
const (
	fxLogicalID  = "logical-zqx-orders"
	fxTenantA    = "tenant-zqx-acme"
	fxTenantB    = "tenant-zqx-globex"
	fxProvider   = "provider-zqx"
	fxServerName = "broker-zqx.test"
	fxToken      = "token-zqx-secret-0123456789"
)

// fxBindingStrings are the distinctive strings of binding i.
func fxBindingStrings(i int) []string {
	d := string(rune('a' + i))
	return []string{
		"binding-zqx-" + d, "principal-zqx-" + d, "service-zqx-" + d,
		"latent:contract-zqx-" + d + "@1.0.0", "function-zqx-" + d, "route-zqx-" + d,
		"STREAM_ZQX_" + d, "CONSUMER_ZQX_" + d, "subject.zqx." + d,
	}
}

// fxConfig is a valid configuration: two tenants, three bindings, every
// name distinctive.
func fxConfig(t testing.TB) trigger.Config {
	t.Helper()
	dest := func(port uint16) trigger.Destination {
		return trigger.Destination{
			Address:        netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), port),
			ServerName:     fxServerName,
			RootCAsPEM:     testRootPEM(t),
			AllowNonPublic: true,
		}
	}
	c := trigger.Config{
		Profile:             trigger.ProfileName,
		PollIntervalMS:      100,
		MaxControlLineBytes: 4096,
		MaxHeaderBytes:      4096,
		Tenants: []trigger.Tenant{
			{ID: fxTenantA, ProviderID: fxProvider, Destination: dest(4222)},
			{ID: fxTenantB, ProviderID: fxProvider, Destination: dest(4223)},
		},
	}
	for i, tenant := range []string{fxTenantA, fxTenantA, fxTenantB} {
		s := fxBindingStrings(i)
		c.Bindings = append(c.Bindings, trigger.Binding{
			ID: s[0], Tenant: tenant, Principal: s[1], Service: s[2], Contract: s[3], Function: s[4], Route: s[5],
			Stream: s[6], Consumer: s[7], FilterSubject: s[8],
			MaxPayloadBytes: 4096, OperationTimeoutMS: 2000, RootBudgetMS: 1500,
			MaxDeliver: 5, AckWaitMS: 30_000, NakDelayMS: 500,
		})
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

// fxStrings are every distinctive string of the fixture.
func fxStrings() []string {
	out := []string{fxLogicalID, fxTenantA, fxTenantB, fxProvider, fxServerName, fxToken, "zqx"}
	for i := range 3 {
		out = append(out, fxBindingStrings(i)...)
	}
	return out
}

// testRootPEM returns a deterministic self-signed root certificate.
func testRootPEM(t testing.TB) string {
	t.Helper()
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: fxServerName},
		DNSNames:              []string{fxServerName},
		NotBefore:             time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              time.Date(2045, 1, 1, 0, 0, 0, 0, time.UTC),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(bytes.NewReader(make([]byte, 64)), tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// errDialRefused is what the fixture's dialer returns: no broker is
// contacted.
var errDialRefused = errors.New("metrics test: dial refused")

// install installs fxConfig on fresh pools with lim and a dialer that
// always fails. It closes the installation and pools at the end of t.
func install(t testing.TB, lim trigger.PoolLimits) (*trigger.Triggers, *trigger.Monitor) {
	t.Helper()
	_, trig, mon := installIn(t, lim)
	return trig, mon
}

// installedBytes is the metadata charge of the fixture's installation, as
// the pools account it.
func installedBytes(t testing.TB) int64 {
	t.Helper()
	pools, _, _ := installIn(t, trigger.DefaultPoolLimits())
	return pools.Usage().MetadataBytes
}

// installIn is install, returning the pools too.
func installIn(t testing.TB, lim trigger.PoolLimits) (*trigger.Pools, *trigger.Triggers, *trigger.Monitor) {
	t.Helper()
	pools, err := trigger.NewPools(trigger.PoolConfig{
		Limits: lim,
		Dialer: func(context.Context, string, string) (net.Conn, error) { return nil, errDialRefused },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pools.Close)
	cfg := fxConfig(t)
	var creds []trigger.Credential
	for _, tn := range cfg.Tenants {
		s, err := credential.FromToken(fxToken)
		if err != nil {
			t.Fatal(err)
		}
		creds = append(creds, trigger.Credential{Tenant: tn.ID, ProviderID: tn.ProviderID, Destination: tn.Destination, Secret: s})
	}
	trig, mon, err := trigger.Install(pools, trigger.Installation{LogicalID: fxLogicalID, Epoch: 1, Config: cfg, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(trig.Close)
	return pools, trig, mon
}

// host is a trigger.Host whose answers the test sets; it never runs an
// activation (no broker delivers anything).
type host struct {
	eligible, current, reserve error
}

func (h *host) PublicationEligible(trigger.BindingRef) error { return h.eligible }
func (h *host) CredentialCurrent(string) error               { return h.current }
func (h *host) ReserveInbound(context.Context, trigger.InboundRequest) (trigger.Inbound, error) {
	if h.reserve != nil {
		return nil, h.reserve
	}
	return inbound{}, nil
}

// inbound is a reservation pinning route generation 3.
type inbound struct{}

func (inbound) RouteGeneration() uint64 { return 3 }
func (inbound) Activate(context.Context, trigger.Activation) trigger.Result {
	return trigger.Result{Outcome: trigger.OutcomeSuccess}
}
func (inbound) Release() {}

// errHostDown is a host reservation failure other than ErrUnavailable.
var errHostDown = errors.New("metrics test: host down")

// step runs one step, failing t on an error of the owner.
func step(t testing.TB, trig *trigger.Triggers, h trigger.Host) trigger.StepReport {
	t.Helper()
	r, err := trig.Step(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
