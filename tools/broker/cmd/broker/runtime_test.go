package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/tools/provision"
	"github.com/latent-systems/latent-nats/tools/validate"
	"github.com/latent-systems/latent-nats/trigger"
)

// testTimeout bounds each dial and operation against the local broker.
const testTimeout = 10 * time.Second

// fakeMinter mints real user JWTs signed by one generated account,
// recording every spec, and refuses the tenants it does not know.
type fakeMinter struct {
	t       *testing.T
	account nkeys.KeyPair
	tenants []string
	specs   map[string]broker.UserSpec
}

func newFakeMinter(t *testing.T, tenants ...string) *fakeMinter {
	t.Helper()
	acc, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	return &fakeMinter{t: t, account: acc, tenants: tenants, specs: map[string]broker.UserSpec{}}
}

func (m *fakeMinter) User(tenant string, spec broker.UserSpec) (broker.Creds, error) {
	m.t.Helper()
	known := false
	for _, n := range m.tenants {
		known = known || n == tenant
	}
	if !known {
		return broker.Creds{}, broker.ErrUnknownTenant
	}
	m.specs[tenant] = spec
	user, err := nkeys.CreateUser()
	if err != nil {
		m.t.Fatal(err)
	}
	pub, err := user.PublicKey()
	if err != nil {
		m.t.Fatal(err)
	}
	claims := jwt.NewUserClaims(pub)
	claims.Name = spec.Name
	claims.Pub.Allow, claims.Sub.Allow = spec.PubAllow, spec.SubAllow
	token, err := claims.Encode(m.account)
	if err != nil {
		m.t.Fatal(err)
	}
	seed, err := user.Seed()
	if err != nil {
		m.t.Fatal(err)
	}
	return broker.Creds{Tenant: tenant, User: pub, JWT: token, Seed: seed}, nil
}

// testBinding returns a valid binding of tenant on stream S.
func testBinding(id, tenant, consumer, subject string) trigger.Binding {
	return trigger.Binding{
		ID: id, Tenant: tenant, Principal: "svc:orders", Service: "orders",
		Contract: "latent:orders/handler@1.0.0", Function: "handle",
		Stream: "S", Consumer: consumer, FilterSubject: subject,
		MaxPayloadBytes: 4096, OperationTimeoutMS: 2000, RootBudgetMS: 1500,
		MaxDeliver: 5, AckWaitMS: 30_000, NakDelayMS: 500,
	}
}

// writeConfig writes a valid configuration of bindings, every tenant at
// d, into dir and returns its path and the configuration.
func writeConfig(t *testing.T, dir string, d trigger.Destination, bindings ...trigger.Binding) (string, trigger.Config) {
	t.Helper()
	cfg := trigger.Config{
		Profile: trigger.ProfileName, PollIntervalMS: 100, MaxControlLineBytes: 4096, MaxHeaderBytes: 4096,
		Bindings: bindings,
	}
	seen := map[string]bool{}
	for _, b := range bindings {
		if !seen[b.Tenant] {
			seen[b.Tenant] = true
			cfg.Tenants = append(cfg.Tenants, trigger.Tenant{ID: b.Tenant, ProviderID: "local", Destination: d})
		}
	}
	raw, err := cfg.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "trigger.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, cfg
}

// testCAPEM returns a self-signed CA certificate for name in PEM.
func testCAPEM(t *testing.T, name string) string {
	t.Helper()
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(nil, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// TestRuntimeCredsWrite: each tenant's user gets exactly provision's
// derived grants, one file per tenant, mode 0600 even over an existing
// file; nothing is written when a tenant cannot be minted or the
// configuration is invalid.
func TestRuntimeCredsWrite(t *testing.T) {
	d := trigger.Destination{
		Address: netip.MustParseAddrPort("127.0.0.1:4222"), ServerName: broker.DefaultServerName,
		RootCAsPEM: testCAPEM(t, broker.DefaultServerName), AllowNonPublic: true,
	}
	cfgPath, cfg := writeConfig(t, t.TempDir(), d,
		testBinding("b0", "acme", "c0", "acme.orders"),
		testBinding("b1", "globex", "c1", "globex.orders"),
		testBinding("b2", "acme", "c2", "acme.refunds"))
	perms, err := provision.DerivePermissions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	roots, err := d.CertPool()
	if err != nil {
		t.Fatal(err)
	}
	ep := endpoint{addrs: []netip.AddrPort{d.Address}, serverName: d.ServerName, roots: roots}

	t.Run("exactly the derived grants", func(t *testing.T) {
		out := t.TempDir()
		if err := os.WriteFile(filepath.Join(out, "acme"+runtimeCredsSuffix), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		m := newFakeMinter(t, "acme", "globex")
		files, err := runtimeCreds{config: cfgPath, out: out}.write(m, ep)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]broker.UserSpec{}
		var wantFiles []runtimeFile
		for _, p := range perms {
			want[p.Tenant] = broker.UserSpec{Name: runtimeUserName, PubAllow: p.Permissions.Publish, SubAllow: p.Permissions.Subscribe}
			wantFiles = append(wantFiles, runtimeFile{tenant: p.Tenant, path: filepath.Join(out, p.Tenant+runtimeCredsSuffix)})
		}
		if diff := cmp.Diff(want, m.specs); diff != "" {
			t.Errorf("users minted (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wantFiles, files, cmp.AllowUnexported(runtimeFile{})); diff != "" {
			t.Errorf("files (-want +got):\n%s", diff)
		}
		for _, f := range wantFiles {
			st, err := os.Stat(f.path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v, want 0600", f.path, st.Mode().Perm())
			}
			raw, err := os.ReadFile(f.path)
			if err != nil {
				t.Fatal(err)
			}
			s, err := credential.ParseCreds(raw)
			if err != nil {
				t.Errorf("%s: %v", f.path, err)
				continue
			}
			s.Wipe()
		}
	})

	invalidPath := filepath.Join(t.TempDir(), "invalid.json")
	if err := os.WriteFile(invalidPath, []byte(`{"profile":"nope"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	unknownTenant := func(err error) bool { return errors.Is(err, broker.ErrUnknownTenant) }
	invalid := func(err error) bool {
		var ve *validate.Error
		return errors.As(err, &ve)
	}
	for _, tc := range []struct {
		name    string
		config  string
		tenants []string
		isWant  func(error) bool
	}{
		{"a tenant the broker does not have", cfgPath, []string{"acme"}, unknownTenant},
		{"an invalid configuration", invalidPath, []string{"acme", "globex"}, invalid},
		{"no configuration", filepath.Join(t.TempDir(), "absent.json"), []string{"acme", "globex"}, invalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			files, err := runtimeCreds{config: tc.config, out: out}.write(newFakeMinter(t, tc.tenants...), ep)
			if !tc.isWant(err) {
				t.Errorf("write = %v, want the case's error", err)
			}
			left, _ := os.ReadDir(out)
			if len(files) != 0 || len(left) != 0 {
				t.Errorf("files %v written, %d left in the directory; want none", files, len(left))
			}
		})
	}
}

// TestEndpointCheck: a destination is this broker's only with one of its
// addresses, its server name and its CA.
func TestEndpointCheck(t *testing.T) {
	ca := testCAPEM(t, broker.DefaultServerName)
	good := trigger.Destination{
		Address: netip.MustParseAddrPort("127.0.0.1:4222"), ServerName: broker.DefaultServerName,
		RootCAsPEM: ca, AllowNonPublic: true,
	}
	roots, err := good.CertPool()
	if err != nil {
		t.Fatal(err)
	}
	ep := endpoint{addrs: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:4000"), good.Address}, serverName: good.ServerName, roots: roots}
	with := func(f func(*trigger.Destination)) trigger.Destination {
		d := good
		f(&d)
		return d
	}
	for _, tc := range []struct {
		name string
		d    trigger.Destination
		want error
	}{
		{"this broker", good, nil},
		{"another port", with(func(d *trigger.Destination) { d.Address = netip.MustParseAddrPort("127.0.0.1:4223") }), errNotThisBroker},
		{"another server name", with(func(d *trigger.Destination) { d.ServerName = "other.latent.test" }), errNotThisBroker},
		{"another CA", with(func(d *trigger.Destination) { d.RootCAsPEM = testCAPEM(t, broker.DefaultServerName) }), errNotThisBroker},
		{"no CA", with(func(d *trigger.Destination) { d.RootCAsPEM = "" }), errNotThisBroker},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := ep.check(tc.d); !errors.Is(err, tc.want) {
				t.Errorf("check = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestRuntimeCredsAgainstBroker: the runtime creds the command writes for
// a provisioned configuration connect with the tenant's private inbox,
// pull and acknowledge the event on the bound consumer, and may not read
// the stream.
func TestRuntimeCredsAgainstBroker(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{"acme"}})
	d := trigger.Destination{Address: b.Addr(), ServerName: b.ServerName(), RootCAsPEM: string(b.CAPEM()), AllowNonPublic: true}
	bd := testBinding("b0", "acme", "c0", "acme.orders")
	cfgPath, cfg := writeConfig(t, t.TempDir(), d, bd)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	admin, err := b.Admin("acme")
	if err != nil {
		t.Fatal(err)
	}
	adminSecret := parseCreds(t, admin)
	rep, err := provision.Run(ctx, cfg, []trigger.Credential{{Tenant: "acme", ProviderID: "local", Destination: d, Secret: adminSecret}}, provision.DefaultOptions())
	if err != nil || !rep.OK() {
		t.Fatalf("provisioning: %v, %+v", err, rep.Results)
	}
	acc, err := provision.ConnConfig(d, adminSecret)
	if err != nil {
		t.Fatal(err)
	}
	ac, err := provision.Dial(ctx, acc, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer ac.Close()
	if _, err := ac.Publish(ctx, bd.FilterSubject, []byte(`["order-1"]`)); err != nil {
		t.Fatal(err)
	}

	out := t.TempDir()
	ep := endpoint{addrs: []netip.AddrPort{b.Addr()}, serverName: b.ServerName(), roots: b.RootCAs()}
	files, err := runtimeCreds{config: cfgPath, out: out}.write(b, ep)
	if err != nil {
		t.Fatal(err)
	}
	want := []runtimeFile{{tenant: "acme", path: filepath.Join(out, "acme"+runtimeCredsSuffix)}}
	if diff := cmp.Diff(want, files, cmp.AllowUnexported(runtimeFile{})); diff != "" {
		t.Fatalf("files (-want +got):\n%s", diff)
	}
	raw, err := os.ReadFile(files[0].path)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := credential.ParseCreds(raw)
	if err != nil {
		t.Fatal(err)
	}
	defer secret.Wipe()
	cc, err := provision.ConnConfig(d, secret)
	if err != nil {
		t.Fatal(err)
	}
	cc.InboxPrefix = trigger.InboxPrefix("acme")
	dctx, dcancel := context.WithTimeout(ctx, testTimeout)
	defer dcancel()
	c, err := conn.Dial(dctx, cc)
	if err != nil {
		t.Fatalf("dial with the runtime creds: %v", err)
	}
	defer c.Close()

	pc, err := jspull.NewConsumer(provision.PullBinding(bd), jspull.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Inspect(ctx, c); err != nil {
		t.Fatalf("consumer info: %v", err)
	}
	res, err := pc.Next(ctx, c)
	if err != nil || res.Kind != jspull.KindMessage || !bytes.Equal(res.Payload, []byte(`["order-1"]`)) {
		t.Fatalf("pull: %v, %v, payload %q; want the message", res.Kind, err, res.Payload)
	}
	rec, err := pc.Ack(ctx, c, &res.Delivery, jspull.Command{Action: pull.ActionAck})
	if err != nil || rec.Outcome != pull.AckVerified {
		t.Errorf("ack: %v, %v; want verified", rec.Outcome, err)
	}

	rctx, rcancel := context.WithTimeout(ctx, testTimeout)
	defer rcancel()
	_, err = c.Request(rctx, "$JS.API.STREAM.INFO."+bd.Stream, nil, nil)
	var se *conn.ServerError
	if !errors.As(err, &se) || se.Kind != conn.KindPermission {
		t.Errorf("stream info with the runtime creds: %v, want a permission violation", err)
	}
}

// parseCreds parses a minted user's credentials.
func parseCreds(t *testing.T, c broker.Creds) *credential.Secret {
	t.Helper()
	file, err := c.File()
	if err != nil {
		t.Fatal(err)
	}
	s, err := credential.ParseCreds(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Wipe)
	return s
}
