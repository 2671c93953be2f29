package credential

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"time"
)

// clientCert is a TLS client certificate chain and its private key, as a
// Secret keeps them: the chain's DER (public) and the key's DER (secret,
// zeroed by Wipe). The key is decoded into a private key only for one TLS
// handshake (ClientCertificate).
type clientCert struct {
	chain     [][]byte // DER, leaf first
	keyType   string   // the key's PEM block type
	keyDER    []byte   // secret
	notBefore time.Time
	notAfter  time.Time
}

// The PEM block types of a private key this package decodes.
const (
	pemPKCS8 = "PRIVATE KEY"
	pemEC    = "EC PRIVATE KEY"
	pemRSA   = "RSA PRIVATE KEY"
	pemCert  = "CERTIFICATE"
)

// FromClientCertificate returns a KindCertificate Secret: a TLS client
// certificate chain and its private key that authenticate by themselves
// (a broker with verify_and_map maps the certificate to a user), so
// CONNECT carries no credential field. certPEM holds the leaf first, then
// any intermediates, as CERTIFICATE blocks; keyPEM one unencrypted private
// key (PKCS #8 "PRIVATE KEY", "EC PRIVATE KEY" or "RSA PRIVATE KEY": ECDSA,
// Ed25519 or RSA) whose public key is the leaf's (ErrCertificateKeyMismatch);
// a leaf whose extended key usages exclude client authentication is
// refused (ErrCertificateUsage).
// Sizes are bounded by MaxCertChainBytes, 8 certificates and
// MaxClientKeyBytes. The validity window is not checked here: CheckCurrent
// does. Both inputs are copied; the caller keeps ownership of keyPEM and
// should zero it.
func FromClientCertificate(certPEM, keyPEM []byte) (*Secret, error) {
	cc, err := parseClientCert(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	return newSecret(KindCertificate, &material{cert: cc}), nil
}

// AddClientCertificate attaches a TLS client certificate chain and its
// private key, checked as FromClientCertificate checks them, to a Secret of
// another kind, which then authenticates with both: the certificate in the
// TLS handshake, the secret in CONNECT. Attach it before the Secret is
// handed to a dial or an installation. A wiped Secret is refused
// (ErrWiped), and so is one that holds a certificate already
// (ErrCertificateSet): rotate a certificate by a new Secret. keyPEM stays
// the caller's, who should zero it.
func (s *Secret) AddClientCertificate(certPEM, keyPEM []byte) error {
	m := s.material()
	if m == nil {
		return ErrWiped
	}
	cc, err := parseClientCert(certPEM, keyPEM)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.wiped:
		err = ErrWiped
	case m.cert != nil:
		err = ErrCertificateSet
	}
	if err != nil {
		clear(cc.keyDER)
		return err
	}
	m.cert = cc
	return nil
}

// HasClientCertificate reports whether the secret carries a TLS client
// certificate (KindCertificate, or one attached by AddClientCertificate).
// It stays available after Wipe.
func (s *Secret) HasClientCertificate() bool {
	m := s.material()
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cert != nil
}

// ClientCertificate returns the secret's client certificate chain with its
// private key decoded, for one TLS handshake, and release, which zeroes the
// decoded key: call it as soon as the handshake ends. A secret without a
// certificate returns nil and a no-op release. After Wipe, ErrWiped.
//
// release zeroes the key's bytes (Ed25519) or big-number words (ECDSA,
// RSA) that the private key value exposes; the standard library may keep a
// derived form of its own until the garbage collector reclaims it.
func (s *Secret) ClientCertificate() (cert *tls.Certificate, release func(), err error) {
	m := s.material()
	if m == nil {
		return nil, func() {}, ErrWiped
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.wiped {
		return nil, func() {}, ErrWiped
	}
	if m.cert == nil {
		return nil, func() {}, nil
	}
	key, err := parseKey(m.cert.keyType, m.cert.keyDER)
	if err != nil {
		return nil, func() {}, ErrMalformed
	}
	chain := make([][]byte, len(m.cert.chain))
	copy(chain, m.cert.chain)
	return &tls.Certificate{Certificate: chain, PrivateKey: key}, func() { zeroKey(key) }, nil
}

// parseClientCert checks a certificate chain and its key and returns them
// as a Secret keeps them.
func parseClientCert(certPEM, keyPEM []byte) (*clientCert, error) {
	if len(certPEM) > MaxCertChainBytes || len(keyPEM) > MaxClientKeyBytes {
		return nil, ErrTooLarge
	}
	chain, leaf, err := parseChain(certPEM)
	if err != nil {
		return nil, err
	}
	block, rest := pem.Decode(keyPEM)
	if block == nil {
		return nil, ErrMalformed
	}
	keyDER := block.Bytes
	fail := func(err error) (*clientCert, error) {
		clear(keyDER)
		return nil, err
	}
	if len(bytes.TrimSpace(rest)) != 0 || len(block.Headers) != 0 {
		// A second block, trailing data, or an encrypted (Proc-Type) key.
		return fail(ErrMalformed)
	}
	key, err := parseKey(block.Type, keyDER)
	if err != nil {
		return fail(ErrMalformed)
	}
	defer zeroKey(key)
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(leaf.PublicKey) {
		return fail(ErrCertificateKeyMismatch)
	}
	if !clientUsage(leaf) {
		return fail(ErrCertificateUsage)
	}
	return &clientCert{chain: chain, keyType: block.Type, keyDER: keyDER,
		notBefore: leaf.NotBefore, notAfter: leaf.NotAfter}, nil
}

// clientUsage reports whether a leaf may authenticate a TLS client: no
// extended key usage (any use), or one of client authentication or any.
func clientUsage(leaf *x509.Certificate) bool {
	if len(leaf.ExtKeyUsage) == 0 && len(leaf.UnknownExtKeyUsage) == 0 {
		return true
	}
	for _, u := range leaf.ExtKeyUsage {
		if u == x509.ExtKeyUsageClientAuth || u == x509.ExtKeyUsageAny {
			return true
		}
	}
	return false
}

// parseChain decodes 1 to maxCertChainLen CERTIFICATE blocks and nothing
// else but white space, and parses each.
func parseChain(certPEM []byte) ([][]byte, *x509.Certificate, error) {
	var chain [][]byte
	var leaf *x509.Certificate
	rest := certPEM
	for len(bytes.TrimSpace(rest)) > 0 {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil || block.Type != pemCert || len(block.Headers) != 0 {
			return nil, nil, ErrMalformed
		}
		if len(chain) == maxCertChainLen {
			return nil, nil, ErrTooLarge
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, nil, ErrMalformed
		}
		if leaf == nil {
			leaf = c
		}
		chain = append(chain, block.Bytes)
	}
	if leaf == nil {
		return nil, nil, ErrMalformed
	}
	return chain, leaf, nil
}

// parseKey decodes a private key of a PEM block type this package knows.
func parseKey(typ string, der []byte) (crypto.Signer, error) {
	var key any
	var err error
	switch typ {
	case pemPKCS8:
		key, err = x509.ParsePKCS8PrivateKey(der)
	case pemEC:
		key, err = x509.ParseECPrivateKey(der)
	case pemRSA:
		key, err = x509.ParsePKCS1PrivateKey(der)
	default:
		return nil, ErrMalformed
	}
	if err != nil {
		return nil, ErrMalformed
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey, ed25519.PrivateKey, *rsa.PrivateKey:
		return k.(crypto.Signer), nil
	}
	zeroKey(key)
	return nil, ErrMalformed
}

// zeroKey zeroes what a decoded private key exposes of its secret.
func zeroKey(key any) {
	switch k := key.(type) {
	case ed25519.PrivateKey:
		clear(k)
	case *ecdsa.PrivateKey:
		// The scalar is deprecated as an encoding; here it is only the
		// exposed copy of the key, zeroed after its last use.
		//lint:ignore SA1019 zeroing the exposed scalar after the handshake
		zeroInt(k.D)
	case *rsa.PrivateKey:
		zeroInt(k.D)
		for _, p := range k.Primes {
			zeroInt(p)
		}
		zeroInt(k.Precomputed.Dp)
		zeroInt(k.Precomputed.Dq)
		zeroInt(k.Precomputed.Qinv)
	}
}

// zeroInt zeroes n's words and sets it to 0.
func zeroInt(n *big.Int) {
	if n != nil {
		clear(n.Bits())
		n.SetInt64(0)
	}
}

// checkValidity reports a certificate outside its validity window at now.
func (c *clientCert) checkValidity(now time.Time) error {
	switch {
	case now.Before(c.notBefore):
		return ErrCertificateNotYetValid
	case !now.Before(c.notAfter):
		return ErrCertificateExpired
	}
	return nil
}
