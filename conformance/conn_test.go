package conformance_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
)

// connTimeout bounds one Dial or Request against the local broker.
const connTimeout = 5 * time.Second

// connTenantUser may ask JetStream for account info and publish under
// "allowed.>", nothing else; it subscribes only to the default inbox.
var connTenantUser = broker.UserSpec{
	Name:     "conn-user",
	PubAllow: []string{"$JS.API.INFO", "allowed.>"},
	SubAllow: []string{"_INBOX.>"},
}

// connConfig is the configuration a tenant's client would use for b.
func connConfig(t testing.TB, b *broker.Broker, c broker.Creds) conn.Config {
	t.Helper()
	file, err := c.File()
	if err != nil {
		t.Fatalf("creds file: %v", err)
	}
	secret, err := credential.ParseCreds(file)
	if err != nil {
		t.Fatalf("ParseCreds: %v", err)
	}
	t.Cleanup(secret.Wipe)
	return conn.Config{
		Addr:           b.Addr(),
		AllowNonPublic: b.Addr().Addr(),
		ServerName:     b.ServerName(),
		Roots:          b.RootCAs(),
		Credential:     secret,
		Name:           "conformance",
	}
}

func connMintUser(t testing.TB, b *broker.Broker, spec broker.UserSpec) broker.Creds {
	t.Helper()
	c, err := b.User("acme", spec)
	if err != nil {
		t.Fatalf("minting user: %v", err)
	}
	return c
}

func connDial(t testing.TB, cfg conn.Config) *conn.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), connTimeout)
	defer cancel()
	c, err := conn.Dial(ctx, cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func connDialErr(t *testing.T, cfg conn.Config) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), connTimeout)
	defer cancel()
	c, err := conn.Dial(ctx, cfg)
	if err == nil {
		_ = c.Close()
		t.Fatal("Dial succeeded, want an error")
	}
	return err
}

func connRequest(t *testing.T, c *conn.Conn, subject string) (conn.Reply, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), connTimeout)
	defer cancel()
	return c.Request(ctx, subject, nil, nil)
}

// TestConnHandshakeFirst runs the connection against the pinned broker in
// its production mode, TLS first with no fallback.
func TestConnHandshakeFirst(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{"acme"}})

	t.Run("request $JS.API.INFO with a tenant user's creds", func(t *testing.T) {
		c := connDial(t, connConfig(t, b, connMintUser(t, b, connTenantUser)))
		if !c.JetStream() || c.LameDuck() || c.Clustered() {
			t.Errorf("JetStream = %v, LameDuck = %v, Clustered = %v; want true, false, false", c.JetStream(), c.LameDuck(), c.Clustered())
		}
		for i := range 3 {
			r, err := connRequest(t, c, "$JS.API.INFO")
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			if r.Status != 0 || !bytes.Contains(r.Payload, []byte(`"type":"io.nats.jetstream.api.v1.account_info_response"`)) {
				t.Fatalf("request %d: status %d, payload %q", i, r.Status, r.Payload)
			}
			if !bytes.HasPrefix(r.Subject, []byte(c.Inbox()+".")) || r.Forwarded {
				t.Errorf("reply subject %q not under inbox %q (forwarded %v)", r.Subject, c.Inbox(), r.Forwarded)
			}
		}
		ctx, cancel := context.WithTimeout(t.Context(), connTimeout)
		defer cancel()
		if err := c.Check(ctx); err != nil {
			t.Errorf("Check on an idle connection: %v", err)
		}
	})

	t.Run("no responders is a 503 reply with headers", func(t *testing.T) {
		c := connDial(t, connConfig(t, b, connMintUser(t, b, connTenantUser)))
		r, err := connRequest(t, c, "allowed.nobody")
		if err != nil {
			t.Fatalf("request: %v", err)
		}
		subj, ok := r.HeaderValue("Nats-Subject")
		if r.Status != 503 || !ok || string(subj) != "allowed.nobody" || len(r.Payload) != 0 {
			t.Errorf("reply status %d, Nats-Subject %q (%v), payload %q; want 503, allowed.nobody, empty", r.Status, subj, ok, r.Payload)
		}
	})

	t.Run("denied publish is a permission error and the connection stays usable", func(t *testing.T) {
		c := connDial(t, connConfig(t, b, connMintUser(t, b, connTenantUser)))
		_, err := connRequest(t, c, "denied.subject")
		var se *conn.ServerError
		if !errors.As(err, &se) || se.Kind != conn.KindPermission {
			t.Fatalf("request error = %v, want a permission *ServerError", err)
		}
		if errors.Is(err, conn.ErrClosed) || c.Closed() {
			t.Fatalf("permission error closed the connection: %v", err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), connTimeout)
		defer cancel()
		if err := c.Check(ctx); err != nil {
			t.Fatalf("Check after the permission error: %v", err)
		}
		if r, err := connRequest(t, c, "$JS.API.INFO"); err != nil || r.Status != 0 {
			t.Fatalf("request after the permission error: status %d, %v", r.Status, err)
		}
	})

	t.Run("custom inbox prefix needs only its own subscribe permission", func(t *testing.T) {
		spec := connTenantUser
		spec.SubAllow = []string{"_I.acme.>"}
		cfg := connConfig(t, b, connMintUser(t, b, spec))
		cfg.InboxPrefix = "_I.acme"
		c := connDial(t, cfg)
		if !strings.HasPrefix(c.Inbox(), "_I.acme.") {
			t.Errorf("inbox %q not under the prefix", c.Inbox())
		}
		if _, err := connRequest(t, c, "$JS.API.INFO"); err != nil {
			t.Fatalf("request: %v", err)
		}
	})

	t.Run("inbox subscription denied fails the handshake", func(t *testing.T) {
		spec := connTenantUser
		spec.SubAllow = []string{"elsewhere.>"}
		err := connDialErr(t, connConfig(t, b, connMintUser(t, b, spec)))
		connAssertHandshake(t, err, conn.StepConnect)
		connAssertServerKind(t, err, conn.KindPermission)
	})

	t.Run("wrong server name", func(t *testing.T) {
		cfg := connConfig(t, b, connMintUser(t, b, connTenantUser))
		cfg.ServerName = "wrong.latent.test"
		err := connDialErr(t, cfg)
		connAssertHandshake(t, err, conn.StepTLS)
		var he x509.HostnameError
		if !errors.Is(err, conn.ErrCertificate) || !errors.As(err, &he) {
			t.Errorf("error = %v, want ErrCertificate wrapping x509.HostnameError", err)
		}
		if strings.Contains(err.Error(), b.ServerName()) {
			t.Errorf("message carries certificate text: %q", err)
		}
	})

	t.Run("roots without the broker's CA", func(t *testing.T) {
		cfg := connConfig(t, b, connMintUser(t, b, connTenantUser))
		cfg.Roots = x509.NewCertPool()
		err := connDialErr(t, cfg)
		connAssertHandshake(t, err, conn.StepTLS)
		var ua x509.UnknownAuthorityError
		if !errors.Is(err, conn.ErrCertificate) || !errors.As(err, &ua) {
			t.Errorf("error = %v, want ErrCertificate wrapping x509.UnknownAuthorityError", err)
		}
	})

	t.Run("spki pin", func(t *testing.T) {
		pin := connServerPin(t, b)
		cfg := connConfig(t, b, connMintUser(t, b, connTenantUser))
		cfg.SPKIPin = pin
		connDial(t, cfg)
		cfg.SPKIPin[0] ^= 1
		err := connDialErr(t, cfg)
		connAssertHandshake(t, err, conn.StepTLS)
		if !errors.Is(err, conn.ErrPinMismatch) || !errors.Is(err, conn.ErrCertificate) {
			t.Errorf("error = %v, want ErrPinMismatch and ErrCertificate", err)
		}
	})

	t.Run("expired user jwt", func(t *testing.T) {
		spec := connTenantUser
		spec.Expires = time.Now().Add(-2 * time.Second)
		err := connDialErr(t, connConfig(t, b, connMintUser(t, b, spec)))
		connAssertHandshake(t, err, conn.StepConnect)
		connAssertServerKind(t, err, conn.KindAuthorization)
	})

	t.Run("unknown account", func(t *testing.T) {
		creds, err := b.UnknownAccountUser(connTenantUser)
		if err != nil {
			t.Fatalf("UnknownAccountUser: %v", err)
		}
		err = connDialErr(t, connConfig(t, b, creds))
		connAssertHandshake(t, err, conn.StepConnect)
		connAssertServerKind(t, err, conn.KindAuthorization)
	})

	t.Run("jwt expiring while a request waits", func(t *testing.T) {
		// A request to another connection's inbox is delivered and never
		// answered; the server then expires the user and closes.
		sink := connDial(t, connConfig(t, b, connMintUser(t, b, connTenantUser)))
		spec := connTenantUser
		spec.PubAllow = []string{"_INBOX.>"}
		spec.Expires = time.Now().Add(2 * time.Second)
		c := connDial(t, connConfig(t, b, connMintUser(t, b, spec)))
		ctx, cancel := context.WithTimeout(t.Context(), 4*time.Second)
		defer cancel()
		_, err := c.Request(ctx, sink.Inbox()+".unanswered", nil, nil)
		if !errors.Is(err, conn.ErrClosed) || !c.Closed() {
			t.Fatalf("request error = %v, want one that closed the connection", err)
		}
		connAssertServerKind(t, err, conn.KindAuthenticationExpired)
	})
}

// connPlainTLSTimeout is the TLS handshake timeout of the brokers that may
// speak plaintext first: far above anything a Dial needs, so that a failure
// within connPromptBound cannot be the server ending the handshake.
const connPlainTLSTimeout = 10 * time.Second

// connPromptBound is what "fails promptly" means: half the broker's TLS
// timeout.
const connPromptBound = connPlainTLSTimeout / 2

// connFallbackAttempts bounds the dials of a TLS-first client against a
// broker with a fallback delay (50 ms in auto mode): a dial stalled past
// that delay between its TCP connect and its ClientHello finds the server
// speaking plaintext first, fails with ErrPlaintext as it must, and shows
// nothing about the mode; it is made again.
const connFallbackAttempts = 5

// TestConnNotHandshakeFirst runs against brokers that may speak plaintext
// first: the connection never does, and fails promptly when the server
// does.
func TestConnNotHandshakeFirst(t *testing.T) {
	tests := []struct {
		name string
		opts broker.Options
		// tlsFirstWorks: a client whose ClientHello is the first byte gets
		// TLS (the server's fallback has not fired yet).
		tlsFirstWorks bool
	}{
		{"handshake_first false", broker.Options{Handshake: broker.HandshakeAfterInfo}, false},
		{"auto", broker.Options{Handshake: broker.HandshakeAuto}, true},
		{"fallback 300ms", broker.Options{Handshake: broker.HandshakeFallback, FallbackDelay: 300 * time.Millisecond}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.opts.Tenants = []string{"acme"}
			tt.opts.TLSTimeout = connPlainTLSTimeout
			b := brokertest.Start(t, tt.opts)
			cfg := connConfig(t, b, connMintUser(t, b, connTenantUser))

			// A prompt failure: well inside the server's TLS timeout, which
			// would otherwise end the attempt.
			prompt := func(t *testing.T, cfg conn.Config) {
				ctx, cancel := context.WithTimeout(t.Context(), connPromptBound)
				defer cancel()
				c, err := conn.Dial(ctx, cfg)
				if err == nil {
					_ = c.Close()
					t.Fatal("Dial succeeded after the server spoke plaintext")
				}
				connAssertHandshake(t, err, conn.StepTLS)
				if !errors.Is(err, conn.ErrPlaintext) {
					t.Fatalf("error = %v, want ErrPlaintext", err)
				}
			}

			if tt.tlsFirstWorks {
				c := connDialBeforeFallback(t, cfg)
				if _, err := connRequest(t, c, "$JS.API.INFO"); err != nil {
					t.Fatalf("request: %v", err)
				}
				// A client that lets the fallback fire sees plaintext: the
				// dialer waits for the server's first bytes before TLS
				// starts.
				stalled := cfg
				stalled.Dialer = connWaitForServerBytes(t)
				prompt(t, stalled)
				return
			}
			prompt(t, cfg)
		})
	}
}

// connDialBeforeFallback dials a broker with a fallback delay, once more
// (up to connFallbackAttempts) for each attempt that the fallback beat:
// those fail at StepTLS with ErrPlaintext, anything else fails the test.
func connDialBeforeFallback(t *testing.T, cfg conn.Config) *conn.Conn {
	t.Helper()
	for attempt := 1; attempt <= connFallbackAttempts; attempt++ {
		ctx, cancel := context.WithTimeout(t.Context(), connTimeout)
		c, err := conn.Dial(ctx, cfg)
		cancel()
		if err == nil {
			t.Cleanup(func() { _ = c.Close() })
			return c
		}
		var he *conn.HandshakeError
		if !errors.As(err, &he) || he.Step != conn.StepTLS || !errors.Is(err, conn.ErrPlaintext) {
			t.Fatalf("Dial (attempt %d): %v", attempt, err)
		}
		t.Logf("attempt %d: the fallback fired before the ClientHello arrived: %v", attempt, err)
	}
	t.Fatalf("every one of %d dials lost the race with the fallback", connFallbackAttempts)
	return nil
}

// waitForServerBytes returns a dialer that, before handing the socket to
// Dial, waits (bounded) for the server to write first, and replays what it
// read. It fails the test unless those bytes are a plaintext INFO.
func connWaitForServerBytes(t *testing.T) conn.Dialer {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		raw, err := (&net.Dialer{}).DialContext(ctx, network, address)
		if err != nil {
			return nil, err
		}
		if err := raw.SetReadDeadline(time.Now().Add(connPromptBound)); err != nil {
			_ = raw.Close()
			return nil, err
		}
		buf := make([]byte, 5)
		n, err := raw.Read(buf)
		if err != nil {
			_ = raw.Close()
			return nil, err
		}
		if string(buf[:n]) != "INFO "[:n] {
			t.Errorf("server's first bytes %q, want a plaintext INFO", buf[:n])
		}
		return &connReplayConn{Conn: raw, pending: buf[:n]}, nil
	}
}

type connReplayConn struct {
	net.Conn
	pending []byte
}

func (r *connReplayConn) Read(p []byte) (int, error) {
	if len(r.pending) > 0 {
		n := copy(p, r.pending)
		r.pending = r.pending[n:]
		return n, nil
	}
	return r.Conn.Read(p)
}

// serverPin reads the broker's leaf certificate with crypto/tls directly
// and returns the SHA-256 of its SubjectPublicKeyInfo.
func connServerPin(t *testing.T, b *broker.Broker) [sha256.Size]byte {
	t.Helper()
	d := &tls.Dialer{Config: &tls.Config{ServerName: b.ServerName(), RootCAs: b.RootCAs(), MinVersion: tls.VersionTLS12}}
	ctx, cancel := context.WithTimeout(t.Context(), connTimeout)
	defer cancel()
	nc, err := d.DialContext(ctx, "tcp4", b.Addr().String())
	if err != nil {
		t.Fatalf("tls dial: %v", err)
	}
	defer nc.Close()
	leaf := nc.(*tls.Conn).ConnectionState().PeerCertificates[0]
	return sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
}

func connAssertHandshake(t *testing.T, err error, step conn.Step) {
	t.Helper()
	var he *conn.HandshakeError
	if !errors.As(err, &he) {
		t.Fatalf("error %v (%T) is not a *HandshakeError", err, err)
	}
	if he.Step != step {
		t.Fatalf("handshake failed at %v, want %v (error %v)", he.Step, step, err)
	}
}

func connAssertServerKind(t *testing.T, err error, kind conn.ErrKind) {
	t.Helper()
	var se *conn.ServerError
	if !errors.As(err, &se) || se.Kind != kind {
		t.Fatalf("error = %v, want a *ServerError of kind %v", err, kind)
	}
}

// BenchmarkConnRequest measures one request round trip on one connection to
// the pinned broker: a no-responders reply (the broker answers itself with
// a 503 status) and $JS.API.INFO (a JetStream API call).
func BenchmarkConnRequest(b *testing.B) {
	brk := brokertest.Start(b, broker.Options{Tenants: []string{"acme"}})
	c := connDial(b, connConfig(b, brk, connMintUser(b, brk, connTenantUser)))
	for _, bm := range []struct {
		name, subject string
		status        int
	}{
		{"no-responders", "allowed.nobody", 503},
		{"js-api-info", "$JS.API.INFO", 0},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
			defer cancel()
			for b.Loop() {
				r, err := c.Request(ctx, bm.subject, nil, nil)
				if err != nil || r.Status != bm.status {
					b.Fatalf("request: status %d, %v", r.Status, err)
				}
			}
		})
	}
}

// BenchmarkConnEntryPoints measures the two request entry points on the
// shape of jspull's hot loop: one request after another on one connection,
// each with its own bound, to a subject the caller holds as bytes in a
// reused buffer and longer than 32 bytes, as an acknowledgement subject
// is (the broker answers the no-responders status itself).
//
//   - exchange: Exchange under one long-lived context, the bound given as
//     the deadline argument, the subject as the caller's bytes (what pull
//     and the trigger runtime do);
//   - request: Request, the bound given as a context of its own per call
//     (context.WithDeadline, canceled after the call) and the subject
//     converted to a string (what pull would do without Exchange);
//   - request-detach: the same with Detach before the cancel, so the
//     context's end runs nothing (see conn.Conn.Detach).
func BenchmarkConnEntryPoints(b *testing.B) {
	brk := brokertest.Start(b, broker.Options{Tenants: []string{"acme"}})
	c := connDial(b, connConfig(b, brk, connMintUser(b, brk, connTenantUser)))
	subject := []byte("allowed.nobody.ORDERS.worker.1.2.3.1764950400000000000.0")
	check := func(b *testing.B, r conn.Reply, err error) {
		if err != nil || r.Status != 503 {
			b.Fatalf("request: status %d, %v", r.Status, err)
		}
	}
	b.Run("exchange", func(b *testing.B) {
		b.ReportAllocs()
		ctx := b.Context()
		for b.Loop() {
			r, err := c.Exchange(ctx, time.Now().Add(time.Second), conn.Call{Subject: subject})
			check(b, r, err)
		}
		c.Detach() // before b's context ends: its end then runs nothing
	})
	b.Run("request", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx, cancel := context.WithDeadline(b.Context(), time.Now().Add(time.Second))
			r, err := c.Request(ctx, string(subject), nil, nil)
			cancel()
			check(b, r, err)
		}
	})
	b.Run("request-detach", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx, cancel := context.WithDeadline(b.Context(), time.Now().Add(time.Second))
			r, err := c.Request(ctx, string(subject), nil, nil)
			c.Detach()
			cancel()
			check(b, r, err)
		}
	})
}

// TestConnRequestAllocations: with the broker in another process,
// testing.AllocsPerRun counts this client's allocations: crypto/tls's
// reader per record read (one more under the race detector) and nothing of
// conn's own (the reply subject is kept as bytes in the inbox; it used to
// be a string per request), for a subject given as a string or as bytes.
// The half allocation of slack absorbs a rare broker log line copied by
// the test harness.
func TestConnRequestAllocations(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{"acme"}})
	c := connDial(t, connConfig(t, b, connMintUser(t, b, connTenantUser)))
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	subject := []byte("allowed.nobody")
	deadline := time.Now().Add(20 * time.Second)
	tests := []struct {
		name    string
		request func() (conn.Reply, error)
	}{
		{"Request", func() (conn.Reply, error) { return c.Request(ctx, "allowed.nobody", nil, nil) }},
		{"Exchange", func() (conn.Reply, error) { return c.Exchange(ctx, deadline, conn.Call{Subject: subject}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var failed error
			allocs := testing.AllocsPerRun(200, func() {
				r, err := tt.request()
				if (err != nil || r.Status != 503) && failed == nil {
					failed = fmt.Errorf("status %d, %w", r.Status, err)
				}
			})
			if failed != nil {
				t.Fatalf("request: %v", failed)
			}
			t.Logf("%.2f allocations per request", allocs)
			if want := 1 + connRaceAllocs; allocs > float64(want)+0.5 {
				t.Errorf("%.2f allocations per request, want at most %d", allocs, want)
			}
		})
	}
}
