package fakeserver

import (
	"crypto/tls"
	"fmt"
	"time"

	"github.com/latent-systems/latent-nats/internal/testpki"
)

// certValidity is how long the generated certificates are valid.
const certValidity = 24 * time.Hour

// newCert generates a CA (internal/testpki) and a server certificate whose
// only SAN is the DNS name serverName. It returns the CA in PEM and the
// server's key pair.
func newCert(serverName string, now time.Time) ([]byte, tls.Certificate, error) {
	notBefore, notAfter := now.Add(-time.Hour), now.Add(certValidity)
	ca, err := testpki.NewCA("fakeserver test CA", notBefore, notAfter)
	if err != nil {
		return nil, tls.Certificate{}, fmt.Errorf("fakeserver: %w", err)
	}
	certPEM, keyPEM, err := ca.IssueServer(serverName, notBefore, notAfter)
	if err != nil {
		return nil, tls.Certificate{}, fmt.Errorf("fakeserver: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, tls.Certificate{}, fmt.Errorf("fakeserver: server key pair: %w", err)
	}
	return ca.PEM, cert, nil
}
