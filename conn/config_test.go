package conn_test

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
)

func x509Pool(t *testing.T) *x509.CertPool {
	t.Helper()
	return x509.NewCertPool()
}

// TestConfigValidation checks every refusal happens before the dialer is
// called, and every limit at its bound (accepted: the dialer is reached)
// and one past it (refused with ErrInvalidConfig).
func TestConfigValidation(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	name253 := strings.Join([]string{label63, label63, label63, strings.Repeat("b", 61)}, ".")
	prefixMax := strings.Repeat("p", conn.MaxInboxPrefixLen)
	tests := []struct {
		name   string
		mutate func(*conn.Config)
		ok     bool
	}{
		{"valid", func(*conn.Config) {}, true},
		{"server name empty", func(c *conn.Config) { c.ServerName = "" }, false},
		{"server name ip", func(c *conn.Config) { c.ServerName = "8.8.8.8" }, false},
		{"server name ipv6", func(c *conn.Config) { c.ServerName = "::1" }, false},
		{"server name with port", func(c *conn.Config) { c.ServerName = "broker.test:4222" }, false},
		{"server name trailing dot", func(c *conn.Config) { c.ServerName = "broker.test." }, false},
		{"server name empty label", func(c *conn.Config) { c.ServerName = "broker..test" }, false},
		{"server name leading hyphen", func(c *conn.Config) { c.ServerName = "-broker.test" }, false},
		{"server name label ending in hyphen", func(c *conn.Config) { c.ServerName = "broker-.test" }, false},
		{"server name underscore", func(c *conn.Config) { c.ServerName = "bro_ker.test" }, false},
		{"server name label at 63", func(c *conn.Config) { c.ServerName = label63 + ".test" }, true},
		{"server name label at 64", func(c *conn.Config) { c.ServerName = label63 + "a.test" }, false},
		{"server name at limit", func(c *conn.Config) { c.ServerName = name253 }, true},
		{"server name past limit", func(c *conn.Config) { c.ServerName = name253 + "b" }, false},
		{"no roots", func(c *conn.Config) { c.Roots = nil }, false},
		{"no credential", func(c *conn.Config) { c.Credential = nil }, false},
		{"client name at limit", func(c *conn.Config) { c.Name = strings.Repeat("n", conn.MaxClientNameLen) }, true},
		{"client name past limit", func(c *conn.Config) { c.Name = strings.Repeat("n", conn.MaxClientNameLen+1) }, false},
		{"client name control byte", func(c *conn.Config) { c.Name = "a\nb" }, false},
		{"inbox prefix at limit", func(c *conn.Config) { c.InboxPrefix = prefixMax }, true},
		{"inbox prefix past limit", func(c *conn.Config) { c.InboxPrefix = prefixMax + "p" }, false},
		{"inbox prefix multi-token", func(c *conn.Config) { c.InboxPrefix = "_I.tenant-a" }, true},
		{"inbox prefix of a 64-byte tenant", func(c *conn.Config) { c.InboxPrefix = "_INBOX." + strings.Repeat("t", 64) }, true},
		{"inbox prefix wildcard", func(c *conn.Config) { c.InboxPrefix = "_I.*" }, false},
		{"inbox prefix trailing dot", func(c *conn.Config) { c.InboxPrefix = "_I." }, false},
		{"inbox prefix space", func(c *conn.Config) { c.InboxPrefix = "_I x" }, false},
		{"max payload 1", func(c *conn.Config) { c.MaxPayload = 1 }, true},
		{"max payload at limit", func(c *conn.Config) { c.MaxPayload = conn.MaxPayloadLimit }, true},
		{"max payload past limit", func(c *conn.Config) { c.MaxPayload = conn.MaxPayloadLimit + 1 }, false},
		{"max payload negative", func(c *conn.Config) { c.MaxPayload = -1 }, false},
		{"max control line at minimum", func(c *conn.Config) { c.MaxControlLine = conn.MinReadCap }, true},
		{"max control line under minimum", func(c *conn.Config) { c.MaxControlLine = conn.MinReadCap - 1 }, false},
		{"max control line at limit", func(c *conn.Config) { c.MaxControlLine = conn.MaxReadLine }, true},
		{"max control line past limit", func(c *conn.Config) { c.MaxControlLine = conn.MaxReadLine + 1 }, false},
		{"max control line negative", func(c *conn.Config) { c.MaxControlLine = -1 }, false},
		{"max header at minimum", func(c *conn.Config) { c.MaxHeader = conn.MinReadCap }, true},
		{"max header under minimum", func(c *conn.Config) { c.MaxHeader = conn.MinReadCap - 1 }, false},
		{"max header at limit", func(c *conn.Config) { c.MaxHeader = conn.MaxReadHeader }, true},
		{"max header past limit", func(c *conn.Config) { c.MaxHeader = conn.MaxReadHeader + 1 }, false},
		{"max header negative", func(c *conn.Config) { c.MaxHeader = -1 }, false},
	}
	errDialled := errors.New("dialled")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t)
			dials := 0
			cfg.Dialer = func(context.Context, string, string) (net.Conn, error) {
				dials++
				return nil, errDialled
			}
			tt.mutate(&cfg)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			_, err := conn.Dial(ctx, cfg)
			if tt.ok {
				if !errors.Is(err, errDialled) || dials != 1 {
					t.Fatalf("Dial error = %v after %d dials, want the dialer's after 1", err, dials)
				}
				return
			}
			if !errors.Is(err, conn.ErrInvalidConfig) {
				t.Fatalf("Dial error = %v, want ErrInvalidConfig", err)
			}
			if dials != 0 {
				t.Errorf("invalid config was dialled %d times", dials)
			}
		})
	}
}

func TestDialNeedsDeadline(t *testing.T) {
	cfg := testConfig(t)
	_, err := conn.Dial(t.Context(), cfg)
	if !errors.Is(err, conn.ErrNoDeadline) {
		t.Fatalf("Dial error = %v, want ErrNoDeadline", err)
	}
}

func TestDialCancelledContext(t *testing.T) {
	cfg := testConfig(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	cancel()
	_, err := conn.Dial(ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Dial error = %v, want context.Canceled", err)
	}
}

// TestValidServerNameAndPrefix: the exported rules Dial applies, at their
// bounds and one past them, wrapping ErrInvalidConfig.
func TestValidServerNameAndPrefix(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	name253 := strings.Join([]string{label63, label63, label63, strings.Repeat("b", 61)}, ".")
	names := []struct {
		name string
		ok   bool
	}{
		{name253, true},
		{name253 + "b", false},
		{"Broker.Test", true},
		{"localhost", true},
		{label63 + "a.test", false},
		{"10.0.0.1", false},
		{"", false},
	}
	for _, tt := range names {
		if err := conn.ValidServerName(tt.name); (err == nil) != tt.ok || err != nil && !errors.Is(err, conn.ErrInvalidConfig) {
			t.Errorf("ValidServerName(%d bytes) = %v, want ok %v", len(tt.name), err, tt.ok)
		}
	}
	prefixes := []struct {
		prefix string
		ok     bool
	}{
		{strings.Repeat("p", conn.MaxInboxPrefixLen), true},
		{strings.Repeat("p", conn.MaxInboxPrefixLen+1), false},
		{"_INBOX.a*b", true},
		{"_INBOX.*", false},
		{"_INBOX..a", false},
		{"", false},
	}
	for _, tt := range prefixes {
		if err := conn.ValidInboxPrefix(tt.prefix); (err == nil) != tt.ok || err != nil && !errors.Is(err, conn.ErrInvalidConfig) {
			t.Errorf("ValidInboxPrefix(%q) = %v, want ok %v", tt.prefix, err, tt.ok)
		}
	}
}
