package broker_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/jwt/v2"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
)

// TestScopedUser connects a user signed by a scoped signing key whose
// scope holds MaxScopeSubjects publish subjects: the broker accepts it
// with no permissions in its own JWT and enforces the scope's, an allowed
// request answered, a publish and a subscription outside the scope each a
// permissions violation. A second role of the same account grants
// something else, and a user of the account's own key is not bound by
// either scope.
func TestScopedUser(t *testing.T) {
	t.Parallel()
	pub := make([]string, 0, broker.MaxScopeSubjects)
	pub = append(pub, "$JS.API.INFO")
	for i := 1; len(pub) < broker.MaxScopeSubjects; i++ {
		pub = append(pub, fmt.Sprintf("allowed.%d", i))
	}
	b := brokertest.Start(t, broker.Options{
		Tenants: []string{"t1", "t2"},
		SigningKeys: []broker.SigningKey{
			{Tenant: "t1", Role: "trigger", PubAllow: pub, SubAllow: []string{"_INBOX.t1.>"}},
			{Tenant: "t1", Role: "other", PubAllow: []string{"other.x"}, SubAllow: []string{"other.>"}},
		},
	})
	user, err := b.ScopedUser("t1", "trigger", broker.UserSpec{Name: "runtime"})
	if err != nil {
		t.Fatal(err)
	}
	uc, err := jwt.DecodeUserClaims(user.JWT)
	if err != nil {
		t.Fatal(err)
	}
	acct, err := b.AccountKey("t1")
	if err != nil {
		t.Fatal(err)
	}
	if uc.IssuerAccount != acct || uc.Issuer == acct || !uc.HasEmptyPermissions() {
		t.Fatalf("scoped user: issuer %s, issuer account %s, empty permissions %v; want a signing key of %s, the account, true",
			uc.Issuer, uc.IssuerAccount, uc.HasEmptyPermissions(), acct)
	}
	t.Logf("scoped user JWT %d bytes; its scope holds %d publish subjects", len(user.JWT), len(pub))

	c := dialTLSFirst(t, b)
	if got := c.connect(user); got != "PONG" {
		t.Fatalf("CONNECT answered %.60q, want PONG", got)
	}
	if got := c.readInfo()["remote_account"]; got != acct {
		t.Errorf("remote_account %v, want %s", got, acct)
	}
	var resp struct {
		Type  string          `json:"type"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(c.request("$JS.API.INFO", "_INBOX.t1.info", ""), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Type != "io.nats.jetstream.api.v1.account_info_response" || resp.Error != nil {
		t.Errorf("allowed request: type %q, error %s", resp.Type, resp.Error)
	}
	for _, tc := range []struct {
		name, write, want string
	}{
		{"last subject of the scope", "PUB " + pub[len(pub)-1] + " 0\r\n\r\n", ""},
		{"publish outside the scope", "PUB forbidden.x 0\r\n\r\n", `-ERR 'Permissions Violation for Publish to "forbidden.x"'`},
		{"publish of the other role", "PUB other.x 0\r\n\r\n", `-ERR 'Permissions Violation for Publish to "other.x"'`},
		{"subscribe outside the scope", "SUB _INBOX.t2.> 2\r\n", `-ERR 'Permissions Violation for Subscription to "_INBOX.t2.>"'`},
	} {
		c.write(tc.write + "PING\r\n")
		if tc.want != "" {
			if got := c.mustLine(); got != tc.want {
				t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
			}
		}
		if got := c.mustLine(); got != "PONG" {
			t.Errorf("%s: got %q, want PONG", tc.name, got)
		}
	}

	// The other role's user gets the other scope.
	other, err := b.ScopedUser("t1", "other", broker.UserSpec{})
	if err != nil {
		t.Fatal(err)
	}
	o := dialTLSFirst(t, b)
	o.mustConnect(other)
	o.write("PUB other.x 0\r\n\r\nPUB $JS.API.INFO 0\r\n\r\nPING\r\n")
	if got, want := o.mustLine(), `-ERR 'Permissions Violation for Publish to "$JS.API.INFO"'`; got != want {
		t.Errorf("other role: got %q, want %q", got, want)
	}
	if got := o.mustLine(); got != "PONG" {
		t.Errorf("other role: got %q, want PONG", got)
	}

	if _, err := b.ScopedUser("t2", "trigger", broker.UserSpec{}); !errors.Is(err, broker.ErrUnknownRole) {
		t.Errorf("ScopedUser(t2, trigger) = %v, want ErrUnknownRole: the key is t1's", err)
	}
	if _, err := b.ScopedUser("nope", "trigger", broker.UserSpec{}); !errors.Is(err, broker.ErrUnknownTenant) {
		t.Errorf("ScopedUser(unknown tenant) = %v, want ErrUnknownTenant", err)
	}
}
