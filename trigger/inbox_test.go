package trigger

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/jsontree"
	"github.com/latent-systems/latent-nats/internal/wire"
)

// TestInboxPrefix: the inbox prefix of every valid tenant ID, the longest
// included, is a two-token literal subject that conn accepts (length and
// subject grammar); distinct tenant IDs get distinct prefixes; and '~',
// which stands for '.', is no part of any valid tenant ID.
func TestInboxPrefix(t *testing.T) {
	ids := []string{
		"a",
		"acme",
		strings.Repeat("t", maxIDLen),
		strings.Repeat(".", maxIDLen),
		strings.Repeat("a.", maxIDLen/2),
		"a.b", "a_b", "a-b", "a:b", "ab", "a..b", ".a", "a.",
		"A-Z.a_z:0-9",
	}
	want := map[string]string{
		"a.b":  "_INBOX.a~b",
		"a..b": "_INBOX.a~~b",
		".a":   "_INBOX.~a",
		"a:b":  "_INBOX.a:b",
	}
	errDialled := errors.New("dialled")
	seen := map[string]string{}
	for _, id := range ids {
		if !validID(id) {
			t.Fatalf("test table: %q is not a valid tenant ID", id)
		}
		p := InboxPrefix(id)
		if w, ok := want[id]; ok && p != w {
			t.Errorf("InboxPrefix(%q) = %q, want %q", id, p, w)
		}
		if len(p) > conn.MaxInboxPrefixLen {
			t.Errorf("InboxPrefix(%q) is %d bytes, over conn.MaxInboxPrefixLen %d", id, len(p), conn.MaxInboxPrefixLen)
		}
		if err := wire.ValidPublishSubject(p); err != nil {
			t.Errorf("InboxPrefix(%q) = %q is not a literal subject: %v", id, p, err)
		}
		if tok := strings.Split(p, "."); len(tok) != 2 || tok[0] != conn.DefaultInboxPrefix {
			t.Errorf("InboxPrefix(%q) = %q, want two tokens under %s", id, p, conn.DefaultInboxPrefix)
		}
		if other, dup := seen[p]; dup && other != id {
			t.Errorf("tenants %q and %q share the inbox prefix %q", other, id, p)
		}
		seen[p] = id

		// conn accepts it: its validation passes and the dialer is
		// reached.
		secret, err := credential.FromToken("token-0123456789")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		_, err = conn.Dial(ctx, conn.Config{
			Addr:           netip.MustParseAddrPort("127.0.0.1:4222"),
			AllowNonPublic: netip.MustParseAddr("127.0.0.1"),
			ServerName:     "nats.test",
			Roots:          x509.NewCertPool(),
			Credential:     secret,
			InboxPrefix:    p,
			Dialer: func(context.Context, string, string) (net.Conn, error) {
				return nil, errDialled
			},
		})
		cancel()
		if !errors.Is(err, errDialled) {
			t.Errorf("conn refused the inbox prefix of %q: %v", id, err)
		}
	}
	if got, want := len(InboxPrefix(strings.Repeat("t", maxIDLen))), len(conn.DefaultInboxPrefix)+1+maxIDLen; got != want {
		t.Errorf("longest prefix %d bytes, want %d", got, want)
	}

	// '~' is refused in a tenant ID, so "a~b" can never collide with the
	// prefix of "a.b".
	cfg := rtConfig(t, 1)
	cfg.Tenants[0].ID = "a~b"
	cfg.Bindings[0].Tenant = "a~b"
	err := cfg.Validate()
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("Validate = %v, want a *ConfigError", err)
	}
	path := jsontree.Field(jsontree.Index("tenants", 0), "id")
	found := false
	for _, v := range ce.Violations {
		found = found || v == Violation{Path: path, Rule: RuleID}
	}
	if !found {
		t.Errorf("violations %v, want %s: %v", ce.Violations, path, RuleID)
	}
}
