package credential

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"errors"
	"strings"
	"testing"
)

// FuzzClientCertificate feeds FromClientCertificate any chain and key. A
// refusal is one sentinel with its fixed text, holding no line of the key;
// inputs over their bounds are ErrTooLarge; an accepted pair hands out a
// chain of 1 to maxCertChainLen parsable certificates whose leaf's public
// key is the decoded key's, and nothing after Wipe.
func FuzzClientCertificate(f *testing.F) {
	ca := newCA(f)
	certPEM, keyPEM := clientPair(f, ca, ecKey(f), pemPKCS8)
	otherCert, _ := clientPair(f, ca, ecKey(f), pemPKCS8)
	_, ecPEM := clientPair(f, ca, ecKey(f), pemEC)
	f.Add(certPEM, keyPEM)
	f.Add(append(bytes.Clone(certPEM), certPEM...), keyPEM)
	f.Add(otherCert, keyPEM)
	f.Add(certPEM, ecPEM)
	f.Add(certPEM[:len(certPEM)/2], keyPEM)
	f.Add(certPEM, keyPEM[:len(keyPEM)-20])
	f.Add([]byte{}, []byte{})
	f.Add(keyPEM, certPEM)
	f.Fuzz(func(t *testing.T, chain, key []byte) {
		s, err := FromClientCertificate(chain, key)
		if err != nil {
			if s != nil {
				t.Fatal("refused with a Secret")
			}
			var lines []string
			for line := range strings.Lines(string(key)) {
				if l := strings.TrimSpace(line); len(l) >= 8 {
					lines = append(lines, l)
				}
			}
			checkRefusal(t, err, lines)
			if (len(chain) > MaxCertChainBytes || len(key) > MaxClientKeyBytes) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("input over its bound refused with %v, want ErrTooLarge", err)
			}
			return
		}
		cert, release, err := s.ClientCertificate()
		if err != nil {
			t.Fatal(err)
		}
		if n := len(cert.Certificate); n < 1 || n > maxCertChainLen {
			t.Fatalf("chain of %d certificates", n)
		}
		leaf, err := x509.ParseCertificate(cert.Certificate[0])
		if err != nil {
			t.Fatalf("leaf does not parse: %v", err)
		}
		pub := cert.PrivateKey.(crypto.Signer).Public().(interface{ Equal(crypto.PublicKey) bool })
		if !pub.Equal(leaf.PublicKey) {
			t.Fatal("decoded key is not the leaf's")
		}
		release()
		s.Wipe()
		if _, _, err := s.ClientCertificate(); !errors.Is(err, ErrWiped) {
			t.Fatalf("ClientCertificate after Wipe = %v", err)
		}
	})
}
