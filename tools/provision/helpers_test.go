package provision

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/trigger"
)

// testTimeout bounds one dial or request against the local broker.
const testTimeout = 5 * time.Second

// destination is the broker's exact TLS endpoint as a configuration names
// it.
func destination(b *broker.Broker) trigger.Destination {
	return trigger.Destination{
		Address:        b.Addr(),
		ServerName:     b.ServerName(),
		RootCAsPEM:     string(b.CAPEM()),
		AllowNonPublic: true,
	}
}

// binding returns a valid configured binding.
func binding(id, tenant, stream, consumer, subject string) trigger.Binding {
	return trigger.Binding{
		ID: id, Tenant: tenant, Principal: "svc:orders", Service: "orders",
		Contract: "latent:orders/handler@1.0.0", Function: "handle",
		Stream: stream, Consumer: consumer, FilterSubject: subject,
		MaxPayloadBytes: 4096, OperationTimeoutMS: 2000, RootBudgetMS: 1500,
		MaxDeliver: 5, AckWaitMS: 30_000, NakDelayMS: 500,
	}
}

// config returns a valid configuration of bindings on b's tenants, one
// tenant per distinct binding tenant (in order of first appearance).
func config(t testing.TB, b *broker.Broker, bindings ...trigger.Binding) trigger.Config {
	t.Helper()
	cfg := trigger.Config{
		Profile: trigger.ProfileName, PollIntervalMS: 100, MaxControlLineBytes: 4096, MaxHeaderBytes: 4096,
		Bindings: bindings,
	}
	seen := map[string]bool{}
	for _, bd := range bindings {
		if !seen[bd.Tenant] {
			seen[bd.Tenant] = true
			cfg.Tenants = append(cfg.Tenants, trigger.Tenant{ID: bd.Tenant, ProviderID: "local", Destination: destination(b)})
		}
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("test configuration: %v", err)
	}
	return cfg
}

// secretOf parses a minted user's .creds file.
func secretOf(t testing.TB, c broker.Creds) *credential.Secret {
	t.Helper()
	file, err := c.File()
	if err != nil {
		t.Fatal(err)
	}
	s, err := credential.ParseCreds(file)
	if err != nil {
		t.Fatalf("ParseCreds: %v", err)
	}
	t.Cleanup(s.Wipe)
	return s
}

// adminCreds returns each tenant's administrator credential, in tenant
// order.
func adminCreds(t testing.TB, b *broker.Broker, cfg trigger.Config) []trigger.Credential {
	t.Helper()
	out := make([]trigger.Credential, 0, len(cfg.Tenants))
	for _, tn := range cfg.Tenants {
		c, err := b.Admin(tn.ID)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, trigger.Credential{Tenant: tn.ID, ProviderID: tn.ProviderID, Destination: tn.Destination, Secret: secretOf(t, c)})
	}
	return out
}

// dialAs connects to b as a tenant user with the given creds.
func dialAs(t testing.TB, b *broker.Broker, c broker.Creds) *Client {
	t.Helper()
	cfg, err := ConnConfig(destination(b), secretOf(t, c))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := Dial(t.Context(), cfg, testTimeout)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// dialInbox connects to b as a tenant user with the given creds and inbox
// prefix, the prefix the trigger runtime's connection for a tenant uses.
func dialInbox(t testing.TB, b *broker.Broker, c broker.Creds, prefix string) *Client {
	t.Helper()
	cfg, err := ConnConfig(destination(b), secretOf(t, c))
	if err != nil {
		t.Fatal(err)
	}
	cfg.InboxPrefix = prefix
	cl, err := Dial(t.Context(), cfg, testTimeout)
	if err != nil {
		t.Fatalf("Dial with inbox prefix %q: %v", prefix, err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// adminClient connects as the tenant's administrator.
func adminClient(t testing.TB, b *broker.Broker, tenant string) *Client {
	t.Helper()
	c, err := b.Admin(tenant)
	if err != nil {
		t.Fatal(err)
	}
	return dialAs(t, b, c)
}

// rawRequest sends a request and returns a copy of the reply payload,
// failing the test on a connection error or a status.
func rawRequest(t testing.TB, c *Client, subject string, body []byte) []byte {
	t.Helper()
	var out []byte
	err := c.request(t.Context(), subject, body, func(r conn.Reply) error {
		if r.Status != 0 {
			t.Fatalf("request %s: status %d", subject, r.Status)
		}
		out = append([]byte(nil), r.Payload...)
		return nil
	})
	if err != nil {
		t.Fatalf("request %s: %v", subject, err)
	}
	return out
}

// consumerSnapshot is what a consumer info says about the consumer itself:
// when it was created and its configuration.
type consumerSnapshot struct {
	Created string         `json:"created"`
	Config  map[string]any `json:"config"`
	Error   map[string]any `json:"error"`
}

// snapshotConsumer returns the consumer's creation time and configuration.
func snapshotConsumer(t testing.TB, c *Client, stream, consumer string) consumerSnapshot {
	t.Helper()
	var s consumerSnapshot
	if err := json.Unmarshal(rawRequest(t, c, "$JS.API.CONSUMER.INFO."+stream+"."+consumer, nil), &s); err != nil {
		t.Fatal(err)
	}
	if s.Error != nil {
		t.Fatalf("consumer info %s/%s: %v", stream, consumer, s.Error)
	}
	return s
}

// streamSnapshot is what a stream info says about the stream's
// configuration.
type streamSnapshot struct {
	Created string         `json:"created"`
	Config  map[string]any `json:"config"`
	Error   *apiErrorJSON  `json:"error"`
}

func snapshotStream(t testing.TB, c *Client, stream string) streamSnapshot {
	t.Helper()
	var s streamSnapshot
	if err := json.Unmarshal(rawRequest(t, c, "$JS.API.STREAM.INFO."+stream, nil), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// runProvision runs Run with a deadline, failing on an argument error.
func runProvision(t testing.TB, cfg trigger.Config, creds []trigger.Credential, opts Options) Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	rep, err := Run(ctx, cfg, creds, opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return rep
}

// outcome is a Result without its error, for comparison.
type outcome struct {
	Tenant, Resource, Stream, Consumer, Binding, Action string
	Mismatches, Warnings                                int
}

func outcomes(rep Report) []outcome {
	out := make([]outcome, 0, len(rep.Results))
	for _, r := range rep.Results {
		out = append(out, outcome{r.Tenant, r.Resource.String(), r.Stream, r.Consumer, r.Binding, r.Action.String(), len(r.Mismatches), len(r.Warnings)})
	}
	return out
}

// resultErrors returns the errors of rep's results, in order, for a
// failure message.
func resultErrors(rep Report) []error {
	var errs []error
	for _, r := range rep.Results {
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
	}
	return errs
}

// testCAPEM returns a deterministic self-signed CA certificate in PEM.
func testCAPEM(t testing.TB) string {
	t.Helper()
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "broker.latent.test"},
		DNSNames:              []string{"broker.latent.test"},
		NotBefore:             time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              time.Date(2045, 1, 1, 0, 0, 0, 0, time.UTC),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(bytes.NewReader(make([]byte, 64)), tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
