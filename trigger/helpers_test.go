package trigger

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// cmpConfig compares configurations (netip values by ==).
var cmpConfig = cmpopts.EquateComparable(netip.AddrPort{})

// testCert returns a deterministic self-signed ed25519 certificate for
// name, made from seed.
func testCert(t testing.TB, name string, seed byte) *x509.Certificate {
	t.Helper()
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(int64(seed) + 1),
		Subject:               pkix.Name{CommonName: name},
		DNSNames:              []string{name},
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
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// pemOf encodes certificates as PEM.
func pemOf(certs ...*x509.Certificate) string {
	var b bytes.Buffer
	for _, c := range certs {
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return b.String()
}

// testDestination returns a loopback destination with a test root.
func testDestination(t testing.TB, port uint16, seed byte) Destination {
	t.Helper()
	return Destination{
		Address:        netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), port),
		ServerName:     "nats.test",
		RootCAsPEM:     pemOf(testCert(t, "nats.test", seed)),
		AllowNonPublic: true,
	}
}

// testBinding returns a valid binding for tenant, unique by i.
func testBinding(tenant string, i int) Binding {
	return Binding{
		ID:                 fmt.Sprintf("b%d", i),
		Tenant:             tenant,
		Principal:          "svc:orders",
		Service:            "orders",
		Contract:           "latent:orders/handler@1.0.0",
		Function:           "handle",
		Stream:             "ORDERS",
		Consumer:           fmt.Sprintf("c%d", i),
		FilterSubject:      fmt.Sprintf("%s.orders.%d", tenant, i),
		MaxPayloadBytes:    4096,
		OperationTimeoutMS: 2000,
		RootBudgetMS:       1500,
		MaxDeliver:         5,
		AckWaitMS:          30_000,
		NakDelayMS:         500,
	}
}

// validConfig returns a valid configuration: two tenants, three bindings.
func validConfig(t testing.TB) Config {
	t.Helper()
	c := Config{
		Profile:             ProfileName,
		PollIntervalMS:      100,
		MaxControlLineBytes: 4096,
		MaxHeaderBytes:      4096,
		Tenants: []Tenant{
			{ID: "acme", ProviderID: "nats-eu", Destination: testDestination(t, 4222, 1)},
			{ID: "globex", ProviderID: "nats-eu", Destination: testDestination(t, 4223, 2)},
		},
		Bindings: []Binding{testBinding("acme", 0), testBinding("acme", 1), testBinding("globex", 2)},
	}
	c.Bindings[1].Route = "blue"
	c.Tenants[1].Destination.SPKISHA256 = SPKIPin(testCert(t, "nats.test", 9))
	return c
}

// configWith returns validConfig changed by edit.
func configWith(t testing.TB, edit func(*Config)) Config {
	t.Helper()
	c := validConfig(t)
	edit(&c)
	return c
}

// violationsOf returns the violations of err (nil for nil), failing the
// test for any other error.
func violationsOf(t *testing.T, err error) []Violation {
	t.Helper()
	if err == nil {
		return nil
	}
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a *ConfigError", err)
	}
	return ce.Violations
}

// diffViolations compares violation lists.
func diffViolations(want, got []Violation) string {
	return cmp.Diff(want, got, cmpopts.EquateEmpty())
}
