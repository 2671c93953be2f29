package conformance_test

import (
	"bytes"
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/tools/faultproxy"
)

// faultProxyDeadline is the deadline of a request whose reply the proxy
// swallows.
const faultProxyDeadline = 500 * time.Millisecond

// faultProxyCutAfter is where an up cut set before dialling lands: inside
// the TLS ClientHello, which is several hundred bytes long.
const faultProxyCutAfter = 100

// TestFaultProxy proves the fault proxy against the pinned broker: the
// connection dials through it as if directly, a blackholed reply costs a
// request its deadline and the connection, and a cut inside the TLS
// handshake fails the dial at StepTLS.
func TestFaultProxy(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{"acme"}})
	creds := connMintUser(t, b, connTenantUser)

	t.Run("dial and request through the proxy", func(t *testing.T) {
		p, cfg := faultProxyConfig(t, b, creds)
		c := connDial(t, cfg)
		r, err := connRequest(t, c, "$JS.API.INFO")
		if err != nil {
			t.Fatalf("request: %v", err)
		}
		if r.Status != 0 || !bytes.Contains(r.Payload, []byte(`"type":"io.nats.jetstream.api.v1.account_info_response"`)) {
			t.Fatalf("status %d, payload %q", r.Status, r.Payload)
		}
		if s := p.Stats(); s.Accepted != 1 || s.Open != 1 || s.Up.Forwarded == 0 || s.Down.Forwarded == 0 {
			t.Errorf("proxy counts %+v; want one open connection that carried bytes both ways", s)
		}
	})

	t.Run("down blackholed: the request fails at its deadline", func(t *testing.T) {
		p, cfg := faultProxyConfig(t, b, creds)
		c := connDial(t, cfg)
		if err := p.Set(faultproxy.Down, faultproxy.Fault{Kind: faultproxy.Blackhole}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), faultProxyDeadline)
		defer cancel()
		_, err := c.Request(ctx, "$JS.API.INFO", nil, nil)
		elapsed := time.Since(start)
		var ce *conn.ClosedError
		if !errors.As(err, &ce) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Request = %v; want a *conn.ClosedError for the deadline", err)
		}
		if elapsed < faultProxyDeadline {
			t.Errorf("Request failed after %v, before its deadline of %v", elapsed, faultProxyDeadline)
		}
		if !c.Closed() {
			t.Error("the connection is still open after the deadline")
		}
		// The broker did answer: the reply reached the proxy and was dropped.
		wctx, wcancel := context.WithTimeout(t.Context(), connTimeout)
		defer wcancel()
		if _, err := p.Wait(wctx, func(s faultproxy.Stats) bool { return s.Down.Dropped > 0 }); err != nil {
			t.Errorf("waiting for the dropped reply: %v", err)
		}
	})

	t.Run("up cut with RST inside the TLS handshake", func(t *testing.T) {
		p, cfg := faultProxyConfig(t, b, creds)
		if err := p.Set(faultproxy.Up, faultproxy.Fault{Kind: faultproxy.CutRST, After: faultProxyCutAfter}); err != nil {
			t.Fatal(err)
		}
		err := connDialErr(t, cfg)
		var he *conn.HandshakeError
		if !errors.As(err, &he) || he.Step != conn.StepTLS {
			t.Fatalf("Dial = %v; want a *conn.HandshakeError at %v", err, conn.StepTLS)
		}
		if !errors.Is(err, conn.ErrTLS) || !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("Dial = %v; want conn.ErrTLS caused by a reset", err)
		}
		wctx, wcancel := context.WithTimeout(t.Context(), connTimeout)
		defer wcancel()
		s, err := p.Wait(wctx, func(s faultproxy.Stats) bool { return s.Cut == 1 })
		if err != nil {
			t.Fatalf("waiting for the cut: %v", err)
		}
		if s.Up.Forwarded != faultProxyCutAfter {
			t.Errorf("the broker was sent %d bytes, want exactly %d", s.Up.Forwarded, faultProxyCutAfter)
		}
	})
}

// faultProxyConfig starts a proxy to b, closed at the test's end, and
// returns it with a Config for creds that dials through it.
func faultProxyConfig(t *testing.T, b *broker.Broker, creds broker.Creds) (*faultproxy.Proxy, conn.Config) {
	t.Helper()
	p, err := faultproxy.Start(b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	cfg := connConfig(t, b, creds)
	cfg.Dialer = p.Dialer()
	return p, cfg
}
