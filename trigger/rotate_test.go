package trigger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/pull"
)

// rotRig is a rig whose dials record the secret each authenticated with.
type rotRig struct {
	*rig
	mu      sync.Mutex
	secrets []*credential.Secret
	// wipedAtDial counts dials given a secret already wiped.
	wipedAtDial int
}

func newRotRig(t *testing.T, h *capture, perTenant ...int) *rotRig {
	t.Helper()
	r := &rotRig{rig: newLogRig(t, rtConfig(t, perTenant...), PoolLimits{}, h)}
	inner := r.trig.dial
	r.trig.dial = func(ctx context.Context, ts *tenantState) (link, error) {
		sec := r.trig.connConfig(ts).Credential
		r.mu.Lock()
		r.secrets = append(r.secrets, sec)
		if sec.Wiped() {
			r.wipedAtDial++
		}
		r.mu.Unlock()
		return inner(ctx, ts)
	}
	return r
}

// dialled returns the secrets of the dials so far.
func (r *rotRig) dialled() []*credential.Secret {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*credential.Secret(nil), r.secrets...)
}

// token returns a fresh token credential of tenant t0 with text tok.
func (r *rotRig) token(t *testing.T, tok string) Credential {
	t.Helper()
	s, err := credential.FromToken(tok)
	if err != nil {
		t.Fatal(err)
	}
	c := r.creds[0]
	c.Secret = s
	return c
}

// TestRotateReplacesConnectionAtCheckout: a rotation leaves the pooled
// connection to the end of its step; the next checkout closes it, dials
// once with the new secret and wipes the old one; the new one stays the
// caller's.
func TestRotateReplacesConnectionAtCheckout(t *testing.T) {
	h := &capture{}
	r := newRotRig(t, h, 1)
	old := r.creds[0].Secret
	r.net.publish(0, "p1")
	if rep := r.step(t); rep.Result != ResultDelivered {
		t.Fatalf("first step: %+v", rep)
	}
	h.take()
	next := r.token(t, "token-of-t0-rotated-0123456789")
	if err := r.trig.Rotate(next); err != nil {
		t.Fatalf("Rotate: %v", err)
	}
	if old.Wiped() {
		t.Fatal("the old secret was wiped while the pooled connection still uses it")
	}
	if got := r.net.openLinks(); got != 1 {
		t.Fatalf("%d open links after Rotate, want the pooled one kept until its checkout", got)
	}
	r.net.publish(0, "p2")
	if rep := r.step(t); rep.Result != ResultDelivered || rep.Ack != pull.AckVerified {
		t.Fatalf("step after the rotation: %+v", rep)
	}
	if got, want := r.dialled(), []*credential.Secret{old, next.Secret}; !equalSecrets(got, want) {
		t.Errorf("dials authenticated with %d secrets %v, want the old then the new", len(got), got)
	}
	if !old.Wiped() || next.Secret.Wiped() {
		t.Errorf("old wiped %v, new wiped %v: want only the old", old.Wiped(), next.Secret.Wiped())
	}
	if got := r.net.openLinks(); got != 1 {
		t.Errorf("%d open links, want the new one", got)
	}
	s := r.mon.Snapshot()
	if s.Rotations != 1 || s.Dials != 2 || s.Replaced != 1 {
		t.Errorf("snapshot rotations %d dials %d replaced %d, want 1, 2, 1", s.Rotations, s.Dials, s.Replaced)
	}
	want := []logRec{{slog.LevelInfo, msgRotated, tenantAttrs()}, {slog.LevelInfo, msgReplaced, tenantAttrs()}}
	if diff := cmp.Diff(want, h.take()); diff != "" {
		t.Errorf("records after the first step (-want +got):\n%s", diff)
	}
	r.trig.Close()
	if next.Secret.Wiped() {
		t.Error("Close wiped the current secret: it is the caller's")
	}
}

func equalSecrets(a, b []*credential.Secret) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRotateUnusedSecretWipedAtOnce: a secret no connection uses is wiped
// by Rotate itself, and a secret rotated in and out before any dial too.
func TestRotateUnusedSecretWipedAtOnce(t *testing.T) {
	r := newRotRig(t, nil, 1)
	old := r.creds[0].Secret
	b := r.token(t, "token-of-t0-b-0123456789")
	c := r.token(t, "token-of-t0-c-0123456789")
	if err := r.trig.Rotate(b); err != nil {
		t.Fatal(err)
	}
	if !old.Wiped() {
		t.Error("the old secret, used by no connection, was not wiped")
	}
	if err := r.trig.Rotate(c); err != nil {
		t.Fatal(err)
	}
	if !b.Secret.Wiped() || c.Secret.Wiped() {
		t.Errorf("b wiped %v, c wiped %v: want b only", b.Secret.Wiped(), c.Secret.Wiped())
	}
	r.net.publish(0, "p")
	r.step(t)
	if got := r.dialled(); !equalSecrets(got, []*credential.Secret{c.Secret}) {
		t.Errorf("dials %v, want one with the last secret", got)
	}
	if got := r.mon.Snapshot().Rotations; got != 2 {
		t.Errorf("Rotations %d, want 2", got)
	}
}

// TestRotateRefused: a rotation that does not match the configuration, or
// whose secret cannot be used, is a *CredentialsError naming every
// mismatch, and changes nothing; after Close, ErrClosed.
func TestRotateRefused(t *testing.T) {
	r := newRotRig(t, nil, 1, 1)
	cur := r.creds[0]
	wiped := r.token(t, "token-of-t0-wiped-0123456789")
	wiped.Secret.Wipe()
	fresh := r.token(t, "token-of-t0-fresh-0123456789").Secret
	tests := []struct {
		name string
		edit func(c *Credential)
		want []Violation
	}{
		{"unknown tenant", func(c *Credential) { c.Tenant = "nobody"; c.Secret = fresh },
			[]Violation{{"credential.tenant", RuleCredentialUnknownTenant}}},
		{"unknown tenant, no secret", func(c *Credential) { c.Tenant = "nobody"; c.Secret = nil },
			[]Violation{{"credential.tenant", RuleCredentialUnknownTenant}, {"credential.secret", RuleCredentialSecret}}},
		{"other provider", func(c *Credential) { c.ProviderID = "other"; c.Secret = fresh },
			[]Violation{{"credential.provider_id", RuleCredentialProvider}}},
		{"other tenant's destination", func(c *Credential) { c.Destination = r.creds[1].Destination; c.Secret = fresh },
			[]Violation{{"credential.destination", RuleCredentialDestination}}},
		{"no secret", func(c *Credential) { c.Secret = nil },
			[]Violation{{"credential.secret", RuleCredentialSecret}}},
		{"wiped secret", func(c *Credential) { c.Secret = wiped.Secret },
			[]Violation{{"credential.secret", RuleCredentialSecret}}},
		{"the current secret", func(*Credential) {},
			[]Violation{{"credential.secret", RuleCredentialSecret}}},
		{"everything", func(c *Credential) { c.ProviderID = "other"; c.Destination = Destination{}; c.Secret = nil },
			[]Violation{
				{"credential.provider_id", RuleCredentialProvider},
				{"credential.destination", RuleCredentialDestination},
				{"credential.secret", RuleCredentialSecret},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := cur
			tc.edit(&c)
			err := r.trig.Rotate(c)
			var ce *CredentialsError
			if !errors.As(err, &ce) {
				t.Fatalf("Rotate: %v, want a *CredentialsError", err)
			}
			if diff := cmp.Diff(tc.want, ce.Violations); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
	if cur.Secret.Wiped() || fresh.Wiped() || r.trig.tenants[0].cred.current() != cur.Secret {
		t.Error("a refused rotation changed the credential")
	}
	if got := r.mon.Snapshot().Rotations; got != 0 {
		t.Errorf("Rotations %d after refusals, want 0", got)
	}
	r.trig.Close()
	if err := r.trig.Rotate(Credential{Tenant: cur.Tenant, ProviderID: cur.ProviderID, Destination: cur.Destination, Secret: fresh}); !errors.Is(err, ErrClosed) {
		t.Errorf("Rotate after Close: %v, want ErrClosed", err)
	}
	if fresh.Wiped() || cur.Secret.Wiped() {
		t.Error("Rotate after Close wiped a secret")
	}
}

// TestRotateFromCallback: a host callback that rotates (here the
// activation) neither deadlocks nor disturbs its step: the delivery is
// acknowledged on the connection that pulled it, and the next step
// replaces that connection.
func TestRotateFromCallback(t *testing.T) {
	r := newRotRig(t, nil, 1)
	old := r.creds[0].Secret
	next := r.token(t, "token-of-t0-callback-0123456789")
	var rotErr error
	r.host.activate = func(context.Context, Activation) Outcome {
		rotErr = r.trig.Rotate(next)
		return OutcomeSuccess
	}
	r.net.publish(0, "p1")
	rep := r.step(t)
	if rotErr != nil {
		t.Fatalf("Rotate in the activation: %v", rotErr)
	}
	if rep.Result != ResultDelivered || rep.Ack != pull.AckVerified || rep.Error != 0 {
		t.Fatalf("step that rotated: %+v, want acknowledged", rep)
	}
	if old.Wiped() || r.net.openLinks() != 1 {
		t.Fatalf("after the step: old wiped %v, %d open links: want the old connection kept to its checkout", old.Wiped(), r.net.openLinks())
	}
	r.host.activate = nil
	r.net.publish(0, "p2")
	if rep := r.step(t); rep.Result != ResultDelivered || rep.Ack != pull.AckVerified {
		t.Fatalf("next step: %+v", rep)
	}
	if !old.Wiped() || len(r.dialled()) != 2 {
		t.Errorf("old wiped %v after %d dials, want wiped after the redial", old.Wiped(), len(r.dialled()))
	}
	if got := r.net.ackLog(); len(got) != 2 {
		t.Errorf("acks %v, want both deliveries acknowledged", got)
	}
}

// TestRotateExpiryCheckedAtOnce: the credential checks read the new secret
// from the rotation on: a rotated-in JWT that has expired stops the next
// visit before any network, and the acknowledgement of a delivery in
// flight when an expired secret is rotated in is not sent.
func TestRotateExpiryCheckedAtOnce(t *testing.T) {
	r := newRotRig(t, nil, 1)
	expired := func() Credential {
		s, err := credential.ParseCreds(credsFile(t, time.Now().Add(-time.Minute)))
		if err != nil {
			t.Fatal(err)
		}
		c := r.creds[0]
		c.Secret = s
		return c
	}
	r.host.activate = func(context.Context, Activation) Outcome {
		if err := r.trig.Rotate(expired()); err != nil {
			t.Errorf("Rotate: %v", err)
		}
		return OutcomeSuccess
	}
	r.net.publish(0, "p1")
	if rep := r.step(t); rep.Ack != pull.AckNone || rep.Error != ClassCredential {
		t.Errorf("step whose activation rotated in an expired secret: %+v, want nothing sent (credential)", rep)
	}
	r.host.activate = nil
	dials := len(r.dialled())
	if rep := r.step(t); rep.Result != ResultSkipped || rep.Error != ClassCredential {
		t.Errorf("next step: %+v, want skipped: credential", rep)
	}
	if got := len(r.dialled()); got != dials {
		t.Errorf("%d dials after the expired rotation, want none", got-dials)
	}
}

// TestRotateConcurrentWithRun rotates from another goroutine while Run
// delivers (run under -race): every delivery is acknowledged, every secret
// but the last is wiped once Run has closed its connections, and no dial
// was given a secret already wiped.
func TestRotateConcurrentWithRun(t *testing.T) {
	r := newRotRig(t, nil, 2)
	const rounds = 20
	for i := range 40 {
		r.net.publish(i%2, fmt.Sprintf("p%d", i))
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.trig.Run(ctx, r.host) }()
	secrets := []*credential.Secret{r.creds[0].Secret}
	for i := range rounds {
		c := r.token(t, fmt.Sprintf("token-of-t0-round-%02d-0123456789", i))
		if err := r.trig.Rotate(c); err != nil {
			t.Fatalf("Rotate %d: %v", i, err)
		}
		secrets = append(secrets, c.Secret)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(r.net.ackLog()) < 40 && time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("Run returned early: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := len(r.net.ackLog()); got != 40 {
		t.Fatalf("%d acks, want 40", got)
	}
	last := secrets[len(secrets)-1]
	for i, s := range secrets[:len(secrets)-1] {
		if !s.Wiped() {
			t.Errorf("secret %d not wiped after Run closed its connections", i)
		}
	}
	if last.Wiped() {
		t.Error("the current secret was wiped")
	}
	if r.wipedAtDial != 0 {
		t.Errorf("%d dials given a wiped secret", r.wipedAtDial)
	}
	if got := r.mon.Snapshot().Rotations; got != rounds {
		t.Errorf("Rotations %d, want %d", got, rounds)
	}
}

// TestRotateLogRedacted: one record per rotation, naming the tenant, with
// no secret in any record or in the refusal's message.
func TestRotateLogRedacted(t *testing.T) {
	h := &capture{}
	r := newRotRig(t, h, 1)
	h.take()
	const tok = "token-of-t0-SECRET-MATERIAL-0123456789"
	c := r.token(t, tok)
	if err := r.trig.Rotate(c); err != nil {
		t.Fatal(err)
	}
	want := []logRec{{slog.LevelInfo, msgRotated, tenantAttrs()}}
	recs := h.take()
	if diff := cmp.Diff(want, recs); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	bad := r.token(t, "token-of-t0-OTHER-MATERIAL-0123456789")
	bad.ProviderID = "other"
	err := r.trig.Rotate(bad)
	if err == nil {
		t.Fatal("a rotation to another provider was accepted")
	}
	text := fmt.Sprint(recs, err, c, bad) + fmt.Sprintf("%+v %#v", c, bad)
	for _, s := range []string{"SECRET-MATERIAL", "OTHER-MATERIAL", "token-of"} {
		if strings.Contains(text, s) {
			t.Errorf("secret text %q in a record, an error or a credential's rendering", s)
		}
	}
}
