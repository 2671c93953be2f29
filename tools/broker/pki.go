package broker

import (
	"fmt"
	"time"

	"github.com/latent-systems/latent-nats/internal/testpki"
)

// pki is a generated CA and one server certificate whose only subject
// alternative name is a DNS name, and the client CA that signs the client
// certificates a broker with Options.ClientCertificates requires.
type pki struct {
	caPEM   []byte
	certPEM []byte
	keyPEM  []byte
	client  *testpki.CA
}

// newPKI generates an ECDSA P-256 CA and a server certificate for the DNS
// name serverName (no IP address SAN), and the client CA, valid from an
// hour before now for CertValidity.
func newPKI(serverName string, now time.Time) (*pki, error) {
	notBefore, notAfter := now.Add(-time.Hour), now.Add(CertValidity)
	ca, err := testpki.NewCA("latent-nats test CA", notBefore, notAfter)
	if err != nil {
		return nil, fmt.Errorf("broker: ca: %w", err)
	}
	certPEM, keyPEM, err := ca.IssueServer(serverName, notBefore, notAfter)
	if err != nil {
		return nil, fmt.Errorf("broker: server certificate: %w", err)
	}
	client, err := testpki.NewCA("latent-nats test client CA", notBefore, notAfter)
	if err != nil {
		return nil, fmt.Errorf("broker: client ca: %w", err)
	}
	return &pki{caPEM: ca.PEM, certPEM: certPEM, keyPEM: keyPEM, client: client}, nil
}
