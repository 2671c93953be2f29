package conn_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"syscall"
	"testing"

	"github.com/latent-systems/latent-nats/conn"
)

// TestDialRefused: a socket refused or reset at StepDial matches
// ErrRefused (issue 20: a dial failure did not say it was a refusal), the
// errno stays reachable; any other dial failure does not match.
func TestDialRefused(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().(*net.TCPAddr).AddrPort()
	_ = ln.Close()
	failing := func(err error) conn.Dialer {
		return func(context.Context, string, string) (net.Conn, error) { return nil, err }
	}
	tests := []struct {
		name    string
		dialer  conn.Dialer // nil: the default dialer, to closed
		refused bool
		also    error // what else the error matches
	}{
		{"nothing listens", nil, true, syscall.ECONNREFUSED},
		{"reset", failing(&net.OpError{Op: "dial", Net: "tcp4", Err: syscall.ECONNRESET}), true, syscall.ECONNRESET},
		{"unreachable", failing(&net.OpError{Op: "dial", Net: "tcp4", Err: syscall.ENETUNREACH}), false, conn.ErrServerClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.Addr = netip.AddrPortFrom(closed.Addr().Unmap(), closed.Port())
			cfg.AllowNonPublic = cfg.Addr.Addr()
			cfg.Dialer = tc.dialer
			ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
			defer cancel()
			c, err := conn.Dial(ctx, cfg)
			if err == nil {
				_ = c.Close()
				t.Fatal("Dial succeeded")
			}
			assertStep(t, err, conn.StepDial)
			if got := errors.Is(err, conn.ErrRefused); got != tc.refused {
				t.Errorf("errors.Is(%v, ErrRefused) = %v, want %v", err, got, tc.refused)
			}
			if !errors.Is(err, tc.also) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.also)
			}
		})
	}
}
