package broker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
)

// TestRevokeUser revokes one user of an account while it and another user
// of the same account are connected: the server closes the revoked user's
// connection with the revocation's error, refuses its next connect, also
// after a restart, and keeps the other user's connection.
func TestRevokeUser(t *testing.T) {
	t.Parallel()
	b := brokertest.Start(t, broker.Options{Tenants: []string{"t1", "t2"}})
	revoked, err := b.User("t1", broker.UserSpec{Name: "revoked"})
	if err != nil {
		t.Fatal(err)
	}
	kept, err := b.User("t1", broker.UserSpec{Name: "kept"})
	if err != nil {
		t.Fatal(err)
	}
	sys, err := b.System()
	if err != nil {
		t.Fatal(err)
	}
	req := broker.RequestFunc(func(ctx context.Context, subject string, payload []byte) ([]byte, error) {
		return rawRequest(ctx, b, sys, subject, payload)
	})
	rc := dialTLSFirst(t, b)
	rc.mustConnect(revoked)
	kc := dialTLSFirst(t, b)
	kc.mustConnect(kept)

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := b.RevokeUser(ctx, req, "t1", revoked.User, time.Now()); err != nil {
		t.Fatalf("RevokeUser: %v", err)
	}
	if got, want := rc.mustLine(), "-ERR 'User Authentication Revoked'"; got != want {
		t.Errorf("revoked connection read %q, want %q", got, want)
	}
	if rest := readUntilEOF(t, rc.conn); len(rest) != 0 {
		t.Errorf("after the revocation: %d more bytes, want the connection closed", len(rest))
	}
	kc.write("PING\r\n")
	if got := kc.mustLine(); got != "PONG" {
		t.Errorf("the other user's connection answered %q, want PONG", got)
	}
	refused := func(when string) {
		t.Helper()
		c := dialTLSFirst(t, b)
		if got, want := c.connect(revoked), "-ERR 'Authorization Violation'"; got != want {
			t.Errorf("%s: the revoked user's CONNECT answered %q, want %q", when, got, want)
		}
	}
	refused("after the revocation")
	if err := b.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	refused("after a restart")
	c := dialTLSFirst(t, b)
	c.mustConnect(kept)
}

// TestRevokeUserRefused: an unknown tenant, a key that is not a user's and
// a closed broker are refused before any request.
func TestRevokeUserRefused(t *testing.T) {
	t.Parallel()
	b := brokertest.Start(t, broker.Options{Tenants: []string{"t1"}})
	u, err := b.User("t1", broker.UserSpec{})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	req := broker.RequestFunc(func(context.Context, string, []byte) ([]byte, error) {
		calls++
		return nil, errors.New("test: no request expected")
	})
	tests := []struct {
		name         string
		tenant, user string
		want         error
	}{
		{"unknown tenant", "t9", u.User, broker.ErrUnknownTenant},
		{"account key", "t1", u.Account, broker.ErrInvalidUser},
		{"empty", "t1", "", broker.ErrInvalidUser},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := b.RevokeUser(t.Context(), req, tc.tenant, tc.user, time.Now()); !errors.Is(err, tc.want) {
				t.Errorf("RevokeUser: %v, want %v", err, tc.want)
			}
		})
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.RevokeUser(t.Context(), req, "t1", u.User, time.Now()); !errors.Is(err, broker.ErrClosed) {
		t.Errorf("RevokeUser after Close: %v, want ErrClosed", err)
	}
	if calls != 0 {
		t.Errorf("%d requests, want none", calls)
	}
}
