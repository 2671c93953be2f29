package conn_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/testpki"
)

// mtlsServer is a TLS listener that runs one handshake per test with the
// client-certificate policy given, reports the client certificate it saw,
// and then closes: enough to see where Dial fails.
type mtlsServer struct {
	ln    net.Listener
	cfg   *tls.Config
	seen  chan string // the client leaf's common name, "" for none
	roots *x509.CertPool
}

const mtlsName = "mtls.latent.test"

func startMTLS(t *testing.T, ca *testpki.CA, auth tls.ClientAuthType, version uint16) *mtlsServer {
	t.Helper()
	now := time.Now()
	certPEM, keyPEM, err := ca.IssueServer(mtlsName, now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.PEM)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &mtlsServer{ln: ln, roots: pool, seen: make(chan string, 1), cfg: &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   auth,
		ClientCAs:    pool,
		MinVersion:   version,
		MaxVersion:   version,
	}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		tc := tls.Server(c, s.cfg)
		cn := ""
		if tc.Handshake() == nil {
			if pc := tc.ConnectionState().PeerCertificates; len(pc) > 0 {
				cn = pc[0].Subject.CommonName
			}
		}
		s.seen <- cn
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
	})
	return s
}

func (s *mtlsServer) dial(t *testing.T, secret *credential.Secret) error {
	t.Helper()
	addr := netip.MustParseAddrPort(s.ln.Addr().String())
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := conn.Dial(ctx, conn.Config{
		Addr: addr, AllowNonPublic: addr.Addr(), ServerName: mtlsName, Roots: s.roots, Credential: secret,
	})
	if err == nil {
		_ = c.Close()
	}
	return err
}

// TestClientCertificateRefused: a server that requires a client
// certificate refuses none, one from another authority and an expired one,
// each at StepTLS with ErrClientCertificate, under TLS 1.2 (the alert ends
// the handshake) and TLS 1.3 (the alert comes where the INFO would); a
// good one passes StepTLS. A server that asks for none sees none.
func TestClientCertificateRefused(t *testing.T) {
	now := time.Now()
	ca, err := testpki.NewCA("server and client CA", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	other, err := testpki.NewCA("another CA", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	withCert := func(ca *testpki.CA, from, to time.Time) *credential.Secret {
		certPEM, keyPEM, err := ca.IssueClient("tenant-a", from, to)
		if err != nil {
			t.Fatal(err)
		}
		s, err := credential.FromToken("token")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddClientCertificate(certPEM, keyPEM); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, version := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		for _, tc := range []struct {
			name     string
			auth     tls.ClientAuthType
			secret   func() *credential.Secret
			wantStep conn.Step
			refused  bool
			wantSeen string
		}{
			{"none", tls.RequireAndVerifyClientCert, func() *credential.Secret {
				s, err := credential.FromToken("token")
				if err != nil {
					t.Fatal(err)
				}
				return s
			}, conn.StepTLS, true, ""},
			{"another authority", tls.RequireAndVerifyClientCert, func() *credential.Secret {
				return withCert(other, now.Add(-time.Minute), now.Add(time.Hour))
			}, conn.StepTLS, true, ""},
			{"expired", tls.RequireAndVerifyClientCert, func() *credential.Secret {
				return withCert(ca, now.Add(-time.Hour), now.Add(-time.Minute))
			}, conn.StepTLS, true, ""},
			{"good", tls.RequireAndVerifyClientCert, func() *credential.Secret {
				return withCert(ca, now.Add(-time.Minute), now.Add(time.Hour))
			}, conn.StepInfo, false, "tenant-a"},
			{"good, alone (verify_and_map)", tls.RequireAndVerifyClientCert, func() *credential.Secret {
				certPEM, keyPEM, err := ca.IssueClient("tenant-a", now.Add(-time.Minute), now.Add(time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				s, err := credential.FromClientCertificate(certPEM, keyPEM)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}, conn.StepInfo, false, "tenant-a"},
			{"not asked", tls.NoClientCert, func() *credential.Secret {
				return withCert(ca, now.Add(-time.Minute), now.Add(time.Hour))
			}, conn.StepInfo, false, ""},
		} {
			t.Run(tls.VersionName(version)+"/"+tc.name, func(t *testing.T) {
				s := startMTLS(t, ca, tc.auth, version)
				err := s.dial(t, tc.secret())
				var he *conn.HandshakeError
				if !errors.As(err, &he) || he.Step != tc.wantStep {
					t.Fatalf("Dial error = %v, want a failure at %v", err, tc.wantStep)
				}
				if errors.Is(err, conn.ErrClientCertificate) != tc.refused {
					t.Errorf("Dial error = %v, ErrClientCertificate %v", err, tc.refused)
				}
				if tc.refused && err.Error() != "conn: handshake failed at tls: client certificate refused" {
					t.Errorf("message %q carries more than the sentinel", err.Error())
				}
				if seen := <-s.seen; seen != tc.wantSeen {
					t.Errorf("server saw client certificate %q, want %q", seen, tc.wantSeen)
				}
			})
		}
	}
}
