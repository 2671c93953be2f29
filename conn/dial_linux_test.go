package conn_test

import (
	"context"
	"net"
	"testing"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/fakeserver"
)

// TestDialTakesOverTCP: on Linux, Dial serves a *net.TCPConn its dialer
// returns from the calling thread unless Config.RuntimePoller is set; a
// request works either way. (The other fake-server tests take the socket
// over in their own dialer, under the wrapper that records it.)
func TestDialTakesOverTCP(t *testing.T) {
	for _, poller := range []bool{false, true} {
		f := startFake(t, fakeserver.Config{Script: script(
			greet(infoJSON),
			expectPub("1", "q"),
			steps(msgTo("1", "a"), fakeserver.WaitClose()),
		)})
		cfg := f.config(t)
		cfg.Dialer = (&net.Dialer{}).DialContext
		cfg.RuntimePoller = poller
		ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
		c, err := conn.Dial(ctx, cfg)
		cancel()
		if err != nil {
			t.Fatalf("RuntimePoller %v: Dial: %v", poller, err)
		}
		if got := conn.ThreadSocketInUse(c); got == poller {
			t.Errorf("RuntimePoller %v: thread socket in use %v", poller, got)
		}
		if r, err := request(t, c, "q"); err != nil || string(r.Payload) != "a" {
			t.Fatalf("RuntimePoller %v: request %q, %v", poller, r.Payload, err)
		}
		if err := c.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if rec := f.session(t); rec.Err != nil {
			t.Errorf("RuntimePoller %v: script: %v", poller, rec.Err)
		}
	}
}
