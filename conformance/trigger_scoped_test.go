package conformance_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/internal/wire"
	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/trigger"
)

// brokerMaxControlLine is nats-server's default max_control_line: the
// longest CONNECT argument (the JSON after "CONNECT ") it reads before it
// closes the connection. The suite's brokers keep the default.
const brokerMaxControlLine = 4096

// connectSigLen is the length of a CONNECT's nonce signature: an Ed25519
// signature in unpadded base64url.
const connectSigLen = 86

// trigScopedStart starts a broker whose tenant accounts each hold a scoped
// signing key of spec.scopedRole with exactly the permissions
// jspull.DerivePermissions gives for the tenant's bindings and private
// inbox, and installs spec with runtime users signed by those keys. It
// returns each tenant's permissions beside the case.
func trigScopedStart(t *testing.T, spec trigSpec) (*trigEnv, []jspull.Permissions) {
	t.Helper()
	var keys []broker.SigningKey
	var perms []jspull.Permissions
	for k, id := range spec.tenants {
		binds := make([]jspull.Binding, 0, spec.perTenant[k])
		for i := range spec.perTenant[k] {
			binds = append(binds, trigPullBinding(spec.bindingOf(k, i)))
		}
		p, err := jspull.DerivePermissions(trigger.InboxPrefix(id), binds...)
		if err != nil {
			t.Fatal(err)
		}
		perms = append(perms, p)
		keys = append(keys, broker.SigningKey{Tenant: id, Role: spec.scopedRole, PubAllow: p.Publish, SubAllow: p.Subscribe})
	}
	b := brokertest.Start(t, broker.Options{Tenants: spec.tenants, SigningKeys: keys})
	return trigInstall(t, b, spec), perms
}

// runtimeConnectLen returns the length of the CONNECT argument the trigger
// runtime sends with a user JWT, the fields conn writes (TLS required,
// JWT, nonce signature, client name, language, protocol 1, headers and
// no-responders on): what the broker holds against max_control_line.
func runtimeConnectLen(t *testing.T, userJWT string) int {
	t.Helper()
	c := wire.Connect{
		TLSRequired: true, JWT: userJWT, Sig: strings.Repeat("s", connectSigLen),
		Name: trigger.ClientName, Lang: "go", Protocol: 1, Headers: true, NoResponders: true,
	}
	out, err := wire.AppendConnect(nil, &c)
	if err != nil {
		t.Fatal(err)
	}
	return len(out) - len("CONNECT ") - len("\r\n")
}

// plainUserJWT returns a user JWT named like the runtime's user that
// carries perms itself, signed by a fresh account key: the same size as
// one its account would sign (every key has the same length).
func plainUserJWT(t *testing.T, perms jspull.Permissions) string {
	t.Helper()
	akp, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	defer akp.Wipe()
	ukp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	defer ukp.Wipe()
	upub, err := ukp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	uc := jwt.NewUserClaims(upub)
	uc.Name = "trigger"
	uc.Permissions.Pub.Allow = jwt.StringList(perms.Publish)
	uc.Permissions.Sub.Allow = jwt.StringList(perms.Subscribe)
	tok, err := uc.Encode(akp)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestTriggerScopedSigningKey runs the profile's most bindings, 256 of one
// tenant, with exact permissions (each binding's consumer-info, pull and
// two acknowledgement subjects, 1,024 publish subjects, and the tenant's
// private inbox) held by a scoped signing key of the tenant's account: the
// runtime's user JWT is signed by that key and carries no permissions, so
// its CONNECT fits the broker's default max_control_line, which the same
// grants inside a user JWT exceed many times over (and conn's own CONNECT
// cap, conn.MaxConnectLen). Every binding delivers one event with a
// verified acknowledgement in one lap of explicit steps over a single
// connection, and the broker still enforces the exact grants: a consumer
// no binding names and the stream API are refused to that user.
func TestTriggerScopedSigningKey(t *testing.T) {
	t.Parallel()
	const role = "trigger"
	spec := trigSpec{tenants: []string{"scoped"}, perTenant: []int{trigger.MaxBindings}, scopedRole: role}
	e, perms := trigScopedStart(t, spec)
	te := e.tenant(0)
	p := perms[0]
	if got, want := len(p.Publish), 4*trigger.MaxBindings; got != want {
		t.Fatalf("%d publish grants derived, want %d (four per binding)", got, want)
	}
	for _, s := range slices.Concat(p.Publish, p.Subscribe) {
		if strings.HasSuffix(s, ".*") || s == "$JS.API.>" || s == "_INBOX.>" {
			t.Fatalf("grant %q is a stream-wide or account-wide wildcard, want exact grants", s)
		}
	}

	// The CONNECT figures. The installed runtime user was minted the same
	// way (name "trigger", no expiry), so this one has its size.
	scoped, err := e.b.ScopedUser(te.id, role, broker.UserSpec{Name: "trigger"})
	if err != nil {
		t.Fatal(err)
	}
	uc, err := jwt.DecodeUserClaims(scoped.JWT)
	if err != nil {
		t.Fatal(err)
	}
	if uc.IssuerAccount != te.account || uc.Issuer == te.account || !uc.HasEmptyPermissions() {
		t.Fatalf("runtime user: issuer %s, issuer account %s, empty permissions %v; want a signing key of %s",
			uc.Issuer, uc.IssuerAccount, uc.HasEmptyPermissions(), te.account)
	}
	plain := plainUserJWT(t, p)
	scopedConnect, plainConnect := runtimeConnectLen(t, scoped.JWT), runtimeConnectLen(t, plain)
	if scopedConnect > brokerMaxControlLine {
		t.Errorf("scoped user's CONNECT is %d bytes, over max_control_line %d", scopedConnect, brokerMaxControlLine)
	}
	if plainConnect <= brokerMaxControlLine || plainConnect <= conn.MaxConnectLen {
		t.Errorf("exact grants in the user JWT: CONNECT %d bytes, want over max_control_line %d and conn.MaxConnectLen %d",
			plainConnect, brokerMaxControlLine, conn.MaxConnectLen)
	}
	// How many of these bindings exact grants in a user JWT would fit.
	fit := 0
	for n := 1; n <= trigger.MaxBindings; n++ {
		var binds []jspull.Binding
		for i := range n {
			binds = append(binds, trigPullBinding(spec.bindingOf(0, i)))
		}
		pn, err := jspull.DerivePermissions(trigger.InboxPrefix(te.id), binds...)
		if err != nil {
			t.Fatal(err)
		}
		if runtimeConnectLen(t, plainUserJWT(t, pn)) > brokerMaxControlLine {
			break
		}
		fit = n
	}
	if fit == 0 || fit >= trigger.MaxBindings {
		t.Errorf("exact grants in a user JWT fit %d bindings under max_control_line, want some and fewer than %d", fit, trigger.MaxBindings)
	}
	t.Logf("%d bindings, %d publish grants: scoped user JWT %d bytes, CONNECT %d bytes; the grants in a user JWT: %d bytes, CONNECT %d bytes (max_control_line %d, conn.MaxConnectLen %d); a user JWT with exact grants fits %d of these bindings",
		trigger.MaxBindings, len(p.Publish), len(scoped.JWT), scopedConnect, len(plain), plainConnect, brokerMaxControlLine, conn.MaxConnectLen, fit)

	// Every binding delivers: one event each, then one lap of explicit
	// steps, each a delivery acknowledged with a verified receipt, all over
	// the one connection the broker accepted with the scoped user.
	seqs := make([]uint64, trigger.MaxBindings)
	for i := range seqs {
		seqs[i] = e.publish(0, i, argOK)
	}
	for i := range trigger.MaxBindings {
		r := e.step(t)
		if r.Binding != i || r.Result != trigger.ResultDelivered || r.StreamSeq != seqs[i] ||
			r.Action != pull.ActionAck || r.Ack != pull.AckVerified {
			t.Fatalf("step %d: %+v, want binding %d's event %d delivered and acknowledged (verified)", i+1, r, i, seqs[i])
		}
	}
	snap := e.mon.Snapshot()
	if snap.Dials != 1 {
		t.Errorf("%d dials, want 1", snap.Dials)
	}
	for i, c := range snap.Bindings {
		if c.Acked != 1 {
			t.Errorf("binding %d: %d acknowledged, want 1", i, c.Acked)
		}
	}
	// The broker agrees: every consumer's ack floor is past its event.
	for i := range trigger.MaxBindings {
		if info := te.info(i); info.AckFloor.StreamSeq != seqs[i] || info.NumAckPending != 0 || info.NumPending != 0 {
			t.Errorf("consumer %d: ack floor %d, %d ack pending, %d pending; want %d, 0, 0",
				i, info.AckFloor.StreamSeq, info.NumAckPending, info.NumPending, seqs[i])
		}
	}

	// The scope is exact: the runtime's user reaches the last binding's
	// consumer, not one no binding names, nor the stream API.
	cfg := connConfig(t, e.b, scoped)
	cfg.InboxPrefix = trigger.InboxPrefix(te.id)
	c := connDial(t, cfg)
	last := spec.bindingOf(0, trigger.MaxBindings-1)
	if r, err := connRequest(t, c, "$JS.API.CONSUMER.INFO."+last.Stream+"."+last.Consumer); err != nil || r.Status != 0 {
		t.Errorf("the last binding's consumer info: status %d, %v", r.Status, err)
	}
	for _, subject := range []string{
		"$JS.API.CONSUMER.INFO." + trigStream + ".unbound",
		"$JS.API.STREAM.INFO." + trigStream,
	} {
		_, err := connRequest(t, c, subject)
		var se *conn.ServerError
		if !errors.As(err, &se) || se.Kind != conn.KindPermission {
			t.Errorf("request %s: %v, want a permission *conn.ServerError", subject, err)
		}
	}
}

// publicKey returns the public key of a fresh key pair made by create.
func publicKey(t *testing.T, create func() (nkeys.KeyPair, error)) string {
	t.Helper()
	kp, err := create()
	if err != nil {
		t.Fatal(err)
	}
	defer kp.Wipe()
	pub, err := kp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// scopedUserJWT returns a user JWT shaped like one broker.ScopedUser mints
// with name "trigger": signed by a fresh signing key, naming a fresh
// account as its issuer account, with no permissions or limits. Every key
// has the same length, so it has the size of any such user.
func scopedUserJWT(t *testing.T) string {
	t.Helper()
	sk, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Wipe()
	uc := jwt.NewUserClaims(publicKey(t, nkeys.CreateUser))
	uc.Name = "trigger"
	uc.IssuerAccount = publicKey(t, nkeys.CreateAccount)
	uc.UserPermissionLimits = jwt.UserPermissionLimits{}
	tok, err := uc.Encode(sk)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestTriggerScopedConnectMeasured checks the CONNECT figure
// TestTriggerScopedSigningKey computes against the broker itself: a
// broker whose max_control_line is exactly the computed length of the
// runtime's CONNECT with a scoped user accepts that user's handshake, and
// one a byte shorter refuses it at connect.
func TestTriggerScopedConnectMeasured(t *testing.T) {
	t.Parallel()
	want := scopedUserJWT(t)
	n := runtimeConnectLen(t, want)
	for _, tc := range []struct {
		name string
		mcl  int
		ok   bool
	}{
		{"max_control_line at the computed length", n, true},
		{"one byte shorter", n - 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := brokertest.Start(t, broker.Options{
				Tenants:     []string{"scoped"},
				SigningKeys: []broker.SigningKey{{Tenant: "scoped", Role: "trigger", PubAllow: []string{"$JS.API.INFO"}, SubAllow: []string{"_INBOX.scoped.>"}}},
				Extra:       fmt.Sprintf("max_control_line: %d", tc.mcl),
			})
			user, err := b.ScopedUser("scoped", "trigger", broker.UserSpec{Name: "trigger"})
			if err != nil {
				t.Fatal(err)
			}
			if len(user.JWT) != len(want) {
				t.Fatalf("scoped user JWT %d bytes, computed with %d", len(user.JWT), len(want))
			}
			cfg := connConfig(t, b, user)
			cfg.Name = trigger.ClientName
			cfg.InboxPrefix = trigger.InboxPrefix("scoped")
			if !tc.ok {
				connAssertHandshake(t, connDialErr(t, cfg), conn.StepConnect)
				t.Logf("CONNECT of %d bytes refused at max_control_line %d", n, tc.mcl)
				return
			}
			c := connDial(t, cfg)
			if r, err := connRequest(t, c, "$JS.API.INFO"); err != nil || r.Status != 0 {
				t.Fatalf("request: status %d, %v", r.Status, err)
			}
			t.Logf("CONNECT of %d bytes accepted at max_control_line %d", n, tc.mcl)
		})
	}
}
