package credential

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/internal/testpki"
)

// certWindow is the validity window of the test client certificates.
var certWindow = struct{ from, to time.Time }{
	time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC),
}

func newCA(t testing.TB) *testpki.CA {
	t.Helper()
	ca, err := testpki.NewCA("credential test CA", certWindow.from.Add(-time.Hour), certWindow.to.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// clientPair returns a client certificate for key and the key as PEM of
// block type typ.
func clientPair(t testing.TB, ca *testpki.CA, key crypto.Signer, typ string) (certPEM, keyPEM []byte) {
	t.Helper()
	certPEM, err := ca.Issue(key.Public(), "tenant-a", certWindow.from, certWindow.to)
	if err != nil {
		t.Fatal(err)
	}
	var der []byte
	switch typ {
	case pemPKCS8:
		der, err = x509.MarshalPKCS8PrivateKey(key)
	case pemEC:
		der, err = x509.MarshalECPrivateKey(key.(*ecdsa.PrivateKey))
	case pemRSA:
		der = x509.MarshalPKCS1PrivateKey(key.(*rsa.PrivateKey))
	}
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func ecKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestFromClientCertificate(t *testing.T) {
	ca := newCA(t)
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		key  crypto.Signer
		typ  string
	}{
		{"ecdsa pkcs8", ecKey(t), pemPKCS8},
		{"ecdsa sec1", ecKey(t), pemEC},
		{"ed25519 pkcs8", edKey, pemPKCS8},
		{"rsa pkcs1", rsaKey, pemRSA},
		{"rsa pkcs8", rsaKey, pemPKCS8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			certPEM, keyPEM := clientPair(t, ca, tc.key, tc.typ)
			s, err := FromClientCertificate(certPEM, keyPEM)
			if err != nil {
				t.Fatal(err)
			}
			if s.Kind() != KindCertificate || !s.HasClientCertificate() || !s.Expires().Equal(certWindow.to) {
				t.Errorf("kind %v has %v expires %v", s.Kind(), s.HasClientCertificate(), s.Expires())
			}
			a, err := s.Authenticate(nil)
			if err != nil || a != (Auth{}) {
				t.Errorf("Authenticate = %v, %v, want an empty Auth", a, err)
			}
			cert, release, err := s.ClientCertificate()
			if err != nil {
				t.Fatal(err)
			}
			block, _ := pem.Decode(certPEM)
			if len(cert.Certificate) != 1 || !bytes.Equal(cert.Certificate[0], block.Bytes) {
				t.Errorf("chain does not hold the certificate")
			}
			signer := cert.PrivateKey.(crypto.Signer)
			if !signer.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(tc.key.Public()) {
				t.Errorf("decoded key is not the certificate's")
			}
			release()
			if ed, ok := cert.PrivateKey.(ed25519.PrivateKey); ok && !bytes.Equal(ed, make([]byte, len(ed))) {
				t.Errorf("release left the ed25519 key")
			}
			//lint:ignore SA1019 the exposed scalar release zeroes
			if ec, ok := cert.PrivateKey.(*ecdsa.PrivateKey); ok && ec.D.Sign() != 0 {
				t.Errorf("release left the ecdsa scalar")
			}
			if r, ok := cert.PrivateKey.(*rsa.PrivateKey); ok && (r.D.Sign() != 0 || r.Primes[0].Sign() != 0) {
				t.Errorf("release left the rsa exponent or primes")
			}
		})
	}
}

// TestClientCertificateRefused is the should-fail table of
// FromClientCertificate, with the bounds at their limit and one past it.
func TestClientCertificateRefused(t *testing.T) {
	ca := newCA(t)
	certPEM, keyPEM := clientPair(t, ca, ecKey(t), pemPKCS8)
	otherCert, _ := clientPair(t, ca, ecKey(t), pemPKCS8)
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, edPEM := clientPair(t, ca, edKey, pemPKCS8)
	serverCert, serverKey, err := ca.IssueServer("broker.latent.test", certWindow.from, certWindow.to)
	if err != nil {
		t.Fatal(err)
	}
	chain := func(n int) []byte { return bytes.Repeat(certPEM, n) }
	encrypted := bytes.Replace(keyPEM, []byte("KEY-----\n"), []byte("KEY-----\nProc-Type: 4,ENCRYPTED\n\n"), 1)
	pad := func(b []byte, n int) []byte { return append(bytes.Repeat([]byte("\n"), n-len(b)), b...) }
	for _, tc := range []struct {
		name      string
		cert, key []byte
		want      error
		wantChain int
	}{
		{"chain at its length", chain(maxCertChainLen), keyPEM, nil, maxCertChainLen},
		{"chain past its length", chain(maxCertChainLen + 1), keyPEM, ErrTooLarge, 0},
		{"chain at its bytes", pad(certPEM, MaxCertChainBytes), keyPEM, nil, 1},
		{"chain past its bytes", pad(certPEM, MaxCertChainBytes+1), keyPEM, ErrTooLarge, 0},
		{"key at its bytes", certPEM, pad(keyPEM, MaxClientKeyBytes), nil, 1},
		{"key past its bytes", certPEM, pad(keyPEM, MaxClientKeyBytes+1), ErrTooLarge, 0},
		{"no certificate", nil, keyPEM, ErrMalformed, 0},
		{"no key", certPEM, nil, ErrMalformed, 0},
		{"certificate not pem", []byte("not a certificate"), keyPEM, ErrMalformed, 0},
		{"key as certificate", keyPEM, keyPEM, ErrMalformed, 0},
		{"certificate as key", certPEM, certPEM, ErrMalformed, 0},
		{"certificate with trailing data", append(bytes.Clone(certPEM), "junk"...), keyPEM, ErrMalformed, 0},
		{"key with trailing data", certPEM, append(bytes.Clone(keyPEM), "junk"...), ErrMalformed, 0},
		{"two keys", certPEM, append(bytes.Clone(keyPEM), keyPEM...), ErrMalformed, 0},
		{"encrypted key", certPEM, encrypted, ErrMalformed, 0},
		{"corrupt certificate", bytes.Replace(certPEM, []byte("MII"), []byte("MIA"), 1), keyPEM, ErrMalformed, 0},
		{"key of another certificate", otherCert, keyPEM, ErrCertificateKeyMismatch, 0},
		{"key of another type", certPEM, edPEM, ErrCertificateKeyMismatch, 0},
		{"server certificate", serverCert, serverKey, ErrCertificateUsage, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := FromClientCertificate(tc.cert, tc.key)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error = %v, want %v", err, tc.want)
			}
			if err != nil {
				if s != nil {
					t.Errorf("secret returned with an error")
				}
				return
			}
			cert, release, err := s.ClientCertificate()
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			if len(cert.Certificate) != tc.wantChain {
				t.Errorf("chain of %d, want %d", len(cert.Certificate), tc.wantChain)
			}
		})
	}
}

func TestClientCertificateValidity(t *testing.T) {
	ca := newCA(t)
	certPEM, keyPEM := clientPair(t, ca, ecKey(t), pemPKCS8)
	s, err := FromClientCertificate(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		now  time.Time
		want error
	}{
		{"before its window", certWindow.from.Add(-time.Second), ErrCertificateNotYetValid},
		{"at its start", certWindow.from, nil},
		{"just before its end", certWindow.to.Add(-time.Nanosecond), nil},
		{"at its end", certWindow.to, ErrCertificateExpired},
		{"after its end", certWindow.to.Add(time.Hour), ErrCertificateExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.CheckCurrent(tc.now); !errors.Is(err, tc.want) {
				t.Errorf("CheckCurrent = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestAddClientCertificate: a certificate beside a NATS credential; the
// earlier expiry of the two is the secret's; one certificate only; Wipe
// zeroes the key.
func TestAddClientCertificate(t *testing.T) {
	ca := newCA(t)
	certPEM, keyPEM := clientPair(t, ca, ecKey(t), pemPKCS8)
	jwtExpiry := certWindow.to.Add(-24 * time.Hour)
	u := newUser(t, newAccount(t), jwtExpiry)
	s, err := ParseCreds(u.creds)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddClientCertificate(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	if s.Kind() != KindCreds || !s.HasClientCertificate() || !s.Expires().Equal(jwtExpiry) {
		t.Errorf("kind %v has %v expires %v", s.Kind(), s.HasClientCertificate(), s.Expires())
	}
	if err := s.CheckCurrent(certWindow.from.Add(-time.Minute)); !errors.Is(err, ErrCertificateNotYetValid) {
		t.Errorf("CheckCurrent before the window = %v", err)
	}
	a, err := s.Authenticate([]byte("nonce"))
	if err != nil || a.JWT != u.jwt {
		t.Errorf("Authenticate = %v, %v", a, err)
	}
	if err := s.AddClientCertificate(certPEM, keyPEM); !errors.Is(err, ErrCertificateSet) {
		t.Errorf("second AddClientCertificate = %v, want ErrCertificateSet", err)
	}
	if err := s.AddClientCertificate(certPEM, certPEM); !errors.Is(err, ErrMalformed) {
		t.Errorf("AddClientCertificate of a bad key = %v, want ErrMalformed", err)
	}
	m := s.material()
	s.Wipe()
	if !bytes.Equal(m.cert.keyDER, make([]byte, len(m.cert.keyDER))) {
		t.Errorf("Wipe left the key")
	}
	if _, _, err := s.ClientCertificate(); !errors.Is(err, ErrWiped) {
		t.Errorf("ClientCertificate after Wipe = %v, want ErrWiped", err)
	}
	if !s.HasClientCertificate() || !strings.Contains(s.String(), "creds+certificate, wiped") {
		t.Errorf("after Wipe: has %v, %v", s.HasClientCertificate(), s)
	}
	if err := s.AddClientCertificate(certPEM, keyPEM); !errors.Is(err, ErrWiped) {
		t.Errorf("AddClientCertificate after Wipe = %v, want ErrWiped", err)
	}
	tok, err := FromToken("tok")
	if err != nil {
		t.Fatal(err)
	}
	if cert, release, err := tok.ClientCertificate(); cert != nil || err != nil {
		t.Errorf("ClientCertificate without one = %v, %v", cert, err)
	} else {
		release()
	}
	var none *Secret
	if err := none.AddClientCertificate(certPEM, keyPEM); !errors.Is(err, ErrWiped) {
		t.Errorf("nil AddClientCertificate = %v, want ErrWiped", err)
	}
}
