package conn_test

import (
	"context"
	"net"
	"testing"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/fakeserver"
)

// TestDialTakesOverTCP: on Linux, Dial serves a *net.TCPConn its dialer
// returns from the calling thread when Config.ThreadSocket is set, and
// leaves it in the runtime's poller otherwise; a request works either
// way. (The other fake-server tests take the socket over in their own
// dialer, under the wrapper that records it, with -thread-socket.)
func TestDialTakesOverTCP(t *testing.T) {
	for _, thread := range []bool{false, true} {
		f := startFake(t, fakeserver.Config{Script: script(
			greet(infoJSON),
			expectPub("1", "q"),
			steps(msgTo("1", "a"), fakeserver.WaitClose()),
		)})
		cfg := f.config(t)
		cfg.Dialer = (&net.Dialer{}).DialContext
		cfg.ThreadSocket = thread
		ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
		c, err := conn.Dial(ctx, cfg)
		cancel()
		if err != nil {
			t.Fatalf("ThreadSocket %v: Dial: %v", thread, err)
		}
		if got := conn.ThreadSocketInUse(c); got != thread {
			t.Errorf("ThreadSocket %v: thread socket in use %v", thread, got)
		}
		if r, err := request(t, c, "q"); err != nil || string(r.Payload) != "a" {
			t.Fatalf("ThreadSocket %v: request %q, %v", thread, r.Payload, err)
		}
		if err := c.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if rec := f.session(t); rec.Err != nil {
			t.Errorf("ThreadSocket %v: script: %v", thread, rec.Err)
		}
	}
}
