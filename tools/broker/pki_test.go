package broker

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPKI(t *testing.T) {
	now := time.Now()
	p, err := newPKI("broker.latent.test", now)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(p.certPEM, p.keyPEM)
	if err != nil {
		t.Fatalf("key pair: %v", err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"broker.latent.test"}, cert.DNSNames); diff != "" {
		t.Errorf("DNS SANs (-want +got):\n%s", diff)
	}
	if len(cert.IPAddresses) != 0 || len(cert.URIs) != 0 || len(cert.EmailAddresses) != 0 {
		t.Errorf("certificate has SANs besides the DNS name: %v %v %v", cert.IPAddresses, cert.URIs, cert.EmailAddresses)
	}
	block, _ := pem.Decode(p.caPEM)
	if block == nil {
		t.Fatal("CA PEM does not decode")
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)

	for _, tc := range []struct {
		name    string
		dnsName string
		at      time.Time
		wantErr bool
	}{
		{"server name", "broker.latent.test", now, false},
		{"ip address", "127.0.0.1", now, true},
		{"other name", "other.latent.test", now, true},
		{"expired", "broker.latent.test", now.Add(CertValidity + time.Minute), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cert.Verify(x509.VerifyOptions{DNSName: tc.dnsName, Roots: roots, CurrentTime: tc.at})
			if (err != nil) != tc.wantErr {
				t.Errorf("Verify(%q) = %v, want error %v", tc.dnsName, err, tc.wantErr)
			}
		})
	}

	// The IP address is refused as a host name mismatch, not for another
	// reason.
	_, err = cert.Verify(x509.VerifyOptions{DNSName: "127.0.0.1", Roots: roots, CurrentTime: now})
	var he x509.HostnameError
	if !errors.As(err, &he) {
		t.Errorf("Verify(127.0.0.1) = %v, want x509.HostnameError", err)
	}
}

// TestClientCA: the client CA is not the server's, and the certificates
// it issues verify against it for client authentication only.
func TestClientCA(t *testing.T) {
	now := time.Now()
	p, err := newPKI("broker.latent.test", now)
	if err != nil {
		t.Fatal(err)
	}
	b := &Broker{pki: p}
	if string(b.ClientCAPEM()) == string(p.caPEM) {
		t.Fatal("client CA is the server CA")
	}
	certPEM, keyPEM, err := b.IssueClientCert("tenant-a", now.Add(-time.Minute), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatalf("key pair: %v", err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	pool := func(pemBytes []byte) *x509.CertPool {
		p := x509.NewCertPool()
		p.AppendCertsFromPEM(pemBytes)
		return p
	}
	for _, tc := range []struct {
		name    string
		roots   []byte
		usage   x509.ExtKeyUsage
		wantErr bool
	}{
		{"client CA, client auth", b.ClientCAPEM(), x509.ExtKeyUsageClientAuth, false},
		{"client CA, server auth", b.ClientCAPEM(), x509.ExtKeyUsageServerAuth, true},
		{"server CA", p.caPEM, x509.ExtKeyUsageClientAuth, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cert.Verify(x509.VerifyOptions{Roots: pool(tc.roots), KeyUsages: []x509.ExtKeyUsage{tc.usage}, CurrentTime: now})
			if (err != nil) != tc.wantErr {
				t.Errorf("Verify = %v, want error %v", err, tc.wantErr)
			}
		})
	}
}
