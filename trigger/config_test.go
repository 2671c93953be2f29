package trigger

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestValidConfigRoundTrip(t *testing.T) {
	c := validConfig(t)
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	b, err := c.MarshalJSON()
	if err != nil {
		t.Fatalf("MarshalJSON: %v", err)
	}
	got, err := ParseConfig(b)
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	if diff := cmp.Diff(c, got, cmpConfig); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	again, err := got.MarshalJSON()
	if err != nil {
		t.Fatalf("MarshalJSON: %v", err)
	}
	if diff := cmp.Diff(string(b), string(again)); diff != "" {
		t.Errorf("re-encoding (-want +got):\n%s", diff)
	}
}

func TestDurations(t *testing.T) {
	c := validConfig(t)
	b := c.Bindings[0]
	got := []time.Duration{c.PollInterval(), b.OperationTimeout(), b.RootBudget(), b.AckWait(), b.NakDelay()}
	want := []time.Duration{100 * time.Millisecond, 2 * time.Second, 1500 * time.Millisecond, 30 * time.Second, 500 * time.Millisecond}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCloneAndTenantIndex(t *testing.T) {
	c := validConfig(t)
	d := c.Clone()
	d.Tenants[0].ID = "changed"
	d.Bindings[0].ID = "changed"
	if c.Tenants[0].ID != "acme" || c.Bindings[0].ID != "b0" {
		t.Error("Clone shares slices with the original")
	}
	for _, tc := range []struct {
		id   string
		want int
	}{{"acme", 0}, {"globex", 1}, {"initech", -1}, {"", -1}} {
		if got := c.TenantIndex(tc.id); got != tc.want {
			t.Errorf("TenantIndex(%q) = %d, want %d", tc.id, got, tc.want)
		}
	}
}

func TestDestinationRoots(t *testing.T) {
	a, b := testCert(t, "a.test", 5), testCert(t, "b.test", 6)
	d := Destination{RootCAsPEM: pemOf(a, b)}
	certs, err := d.Certificates()
	if err != nil {
		t.Fatal(err)
	}
	if len(certs) != 2 || !certs[0].Equal(a) || !certs[1].Equal(b) {
		t.Errorf("Certificates returned %d certificates, not a then b", len(certs))
	}
	if got, want := d.RetainedRootBytes(), len(a.Raw)+len(b.Raw); got != want {
		t.Errorf("RetainedRootBytes = %d, want %d", got, want)
	}
	pool, err := d.CertPool()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Verify(x509.VerifyOptions{Roots: pool, DNSName: "a.test"}); err != nil {
		t.Errorf("root does not verify against the pool: %v", err)
	}
	bad := Destination{RootCAsPEM: "junk"}
	if _, err := bad.CertPool(); !errors.Is(err, RuleRootCAs) {
		t.Errorf("CertPool error = %v, want RuleRootCAs", err)
	}
	if bad.RetainedRootBytes() != 0 {
		t.Error("RetainedRootBytes of junk is not 0")
	}
	sum := sha256.Sum256(a.RawSubjectPublicKeyInfo)
	if got := SPKIPin(a); got != hex.EncodeToString(sum[:]) || !validPin(got) {
		t.Errorf("SPKIPin = %q", got)
	}
}
