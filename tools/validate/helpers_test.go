package validate

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/latent-systems/latent-nats/internal/testpki"
	"github.com/latent-systems/latent-nats/trigger"
)

// testNow is the clock of the tests that call Check; Main uses the real
// clock. expiredAt is before both.
var (
	testNow   = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	expiredAt = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
)

func nowFunc() time.Time { return testNow }

// testRootPEM returns a deterministic self-signed CA certificate in PEM.
func testRootPEM(t testing.TB, name string, seed byte) string {
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
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// testConfig returns a valid configuration: two tenants on two loopback
// ports, three bindings.
func testConfig(t testing.TB) trigger.Config {
	t.Helper()
	dest := func(port uint16, seed byte) trigger.Destination {
		return trigger.Destination{
			Address:        netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), port),
			ServerName:     "broker.latent.test",
			RootCAsPEM:     testRootPEM(t, "broker.latent.test", seed),
			AllowNonPublic: true,
		}
	}
	binding := func(id, tenant, stream, consumer, subject string) trigger.Binding {
		return trigger.Binding{
			ID: id, Tenant: tenant, Principal: "svc:orders", Service: "orders",
			Contract: "latent:orders/handler@1.0.0", Function: "handle",
			Stream: stream, Consumer: consumer, FilterSubject: subject,
			MaxPayloadBytes: 4096, OperationTimeoutMS: 2000, RootBudgetMS: 1500,
			MaxDeliver: 5, AckWaitMS: 30_000, NakDelayMS: 500,
		}
	}
	return trigger.Config{
		Profile:             trigger.ProfileName,
		PollIntervalMS:      100,
		MaxControlLineBytes: 4096,
		MaxHeaderBytes:      4096,
		Tenants: []trigger.Tenant{
			{ID: "acme", ProviderID: "nats-eu", Destination: dest(4222, 1)},
			{ID: "globex", ProviderID: "nats-us", Destination: dest(4223, 2)},
		},
		Bindings: []trigger.Binding{
			binding("b0", "acme", "ORDERS", "c0", "acme.orders.created"),
			binding("b1", "acme", "ORDERS", "c1", "acme.orders.paid"),
			binding("b2", "globex", "EVENTS", "c2", "globex.events"),
		},
	}
}

// canonical returns the canonical encoding of c.
func canonical(t testing.TB, c trigger.Config) []byte {
	t.Helper()
	b, err := c.MarshalJSON()
	if err != nil {
		t.Fatalf("MarshalJSON: %v", err)
	}
	return b
}

// writeFile writes b to name in dir with mode and returns the path.
func writeFile(t testing.TB, dir, name string, b []byte, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // WriteFile's mode is masked by umask
		t.Fatal(err)
	}
	return p
}

// credsFile returns a decorated .creds file of a fresh user signed by a fresh
// account, expiring at expires (zero: never).
func credsFile(t testing.TB, expires time.Time) []byte {
	t.Helper()
	akp, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	ukp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	upub, err := ukp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	uc := jwt.NewUserClaims(upub)
	uc.IssuedAt = expiredAt.Add(-time.Hour).Unix()
	if !expires.IsZero() {
		uc.Expires = expires.Unix()
	}
	tok, err := uc.Encode(akp)
	if err != nil {
		t.Fatal(err)
	}
	seed, err := ukp.Seed()
	if err != nil {
		t.Fatal(err)
	}
	b, err := jwt.FormatUserConfig(tok, seed)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// userSeed returns a fresh encoded user nkey seed.
func userSeed(t testing.TB) []byte {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, err := kp.Seed()
	if err != nil {
		t.Fatal(err)
	}
	return seed
}

// writeClientCert writes a client certificate of a fresh CA valid from
// from to to as dir/<name>.crt (0644) and its key as dir/<name>.key
// (0600), and names them in entry e.
func writeClientCert(t testing.TB, dir, name string, from, to time.Time, e *CredentialsEntry) {
	t.Helper()
	ca, err := testpki.NewCA("validate test CA", from.Add(-time.Hour), to.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.IssueClient(name, from, to)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, name+".crt", certPEM, 0o644)
	writeFile(t, dir, name+".key", keyPEM, 0o600)
	e.ClientCert, e.ClientKey = name+".crt", name+".key"
}

// fixture is a directory with a valid configuration, one .creds file per
// tenant and a credentials file naming them.
type fixture struct {
	dir       string
	cfg       trigger.Config
	cfgPath   string
	credsPath string
	doc       CredentialsFile
}

// newFixture writes a valid fixture.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir(), cfg: testConfig(t)}
	f.cfgPath = writeFile(t, f.dir, "trigger.json", canonical(t, f.cfg), 0o644)
	for _, tn := range f.cfg.Tenants {
		name := tn.ID + ".creds"
		writeFile(t, f.dir, name, credsFile(t, time.Time{}), 0o600)
		f.doc.Credentials = append(f.doc.Credentials, CredentialsEntry{
			Tenant: tn.ID, ProviderID: tn.ProviderID, Destination: tn.Destination, Kind: "creds", File: name,
		})
	}
	f.writeCreds(t)
	return f
}

// writeCreds (re)writes the credentials file from f.doc.
func (f *fixture) writeCreds(t testing.TB) {
	t.Helper()
	b, err := json.MarshalIndent(f.doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	f.credsPath = writeFile(t, f.dir, "credentials.json", b, 0o644)
}

// brief is a Violation without its errors, for comparison.
type brief struct {
	Source Source
	Path   string
	Rule   string
}

func briefs(vs []Violation) []brief {
	out := make([]brief, 0, len(vs))
	for _, v := range vs {
		out = append(out, brief{v.Source, v.Path, v.Rule})
	}
	return out
}

func diffBriefs(want, got []brief) string { return cmp.Diff(want, got, cmpopts.EquateEmpty()) }
