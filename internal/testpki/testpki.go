package testpki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// CA is a generated certificate authority with an ECDSA P-256 key.
type CA struct {
	cert *x509.Certificate
	key  crypto.Signer
	// PEM is the CA certificate, one CERTIFICATE block.
	PEM []byte
}

// NewCA generates a CA named cn, valid from notBefore to notAfter.
func NewCA(cn string, notBefore, notAfter time.Time) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("testpki: ca key: %w", err)
	}
	sn, err := serial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("testpki: ca certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("testpki: ca certificate: %w", err)
	}
	return &CA{cert: cert, key: key, PEM: encode("CERTIFICATE", der)}, nil
}

// Issue signs a client certificate (extended key usage client
// authentication) for pub, with common name cn, valid from notBefore to
// notAfter, and returns it as one CERTIFICATE block.
func (ca *CA) Issue(pub crypto.PublicKey, cn string, notBefore, notAfter time.Time) ([]byte, error) {
	return ca.issue(pub, clientTemplate(cn, notBefore, notAfter))
}

// clientTemplate is the template of a client certificate.
func clientTemplate(cn string, notBefore, notAfter time.Time) *x509.Certificate {
	return &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		NotBefore:   notBefore,
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
}

// IssueServer generates an ECDSA P-256 key and a server certificate for
// the DNS name dnsName (its only subject alternative name), valid from
// notBefore to notAfter, and returns both as PEM.
func (ca *CA) IssueServer(dnsName string, notBefore, notAfter time.Time) (certPEM, keyPEM []byte, err error) {
	return ca.issueWithKey(&x509.Certificate{
		Subject:     pkix.Name{CommonName: dnsName},
		NotBefore:   notBefore,
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{dnsName},
	})
}

// issue signs tmpl, given a fresh serial, for pub.
func (ca *CA) issue(pub crypto.PublicKey, tmpl *x509.Certificate) ([]byte, error) {
	if ca == nil || pub == nil {
		return nil, errors.New("testpki: no ca or no public key")
	}
	sn, err := serial()
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = sn
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
	if err != nil {
		return nil, fmt.Errorf("testpki: certificate: %w", err)
	}
	return encode("CERTIFICATE", der), nil
}

// issueWithKey generates an ECDSA P-256 key, signs tmpl for it and
// returns the certificate and the key (PKCS #8) as PEM.
func (ca *CA) issueWithKey(tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("testpki: key: %w", err)
	}
	certPEM, err = ca.issue(&key.PublicKey, tmpl)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("testpki: key: %w", err)
	}
	return certPEM, encode("PRIVATE KEY", der), nil
}

// IssueClient generates an ECDSA P-256 key and a client certificate for it
// (see Issue), and returns the certificate and the key as PEM (PKCS #8,
// "PRIVATE KEY").
func (ca *CA) IssueClient(cn string, notBefore, notAfter time.Time) (certPEM, keyPEM []byte, err error) {
	return ca.issueWithKey(clientTemplate(cn, notBefore, notAfter))
}

func encode(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func serial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("testpki: serial: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}
