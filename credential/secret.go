package credential

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nkeys"
)

// Secret is one tenant's broker secret. Construct it with ParseCreds,
// FromNKeySeed, FromUserPassword, FromToken or FromClientCertificate (and
// attach a client certificate to the others with AddClientCertificate);
// the zero value and a nil
// *Secret behave as wiped. A Secret is safe for concurrent use.
//
// A Secret redacts itself in every fmt verb, in slog and in every
// marshaller (see redact.go).
type Secret struct {
	kind Kind
	// m is a pointer to a pointer on purpose: fmt expands a pointer to a
	// struct when a bad verb makes it restart at depth 0, even for values it
	// reached through unexported fields where Format cannot be called; it
	// never expands a pointer to a pointer. So no print of a Secret value,
	// however reached, shows the material.
	m **material
}

// material holds the secret bytes of a Secret.
type material struct {
	mu      sync.Mutex
	wiped   bool
	seed    []byte // encoded user seed "SU...": KindCreds, KindNKey
	jwt     []byte // user JWT: KindCreds
	user    []byte // KindUserPassword
	pass    []byte // KindUserPassword
	token   []byte // KindToken
	public  string // user public key "U...": KindCreds, KindNKey (not secret)
	expires time.Time
	// cert is the TLS client certificate: KindCertificate, or attached to
	// another kind (AddClientCertificate); nil without one.
	cert *clientCert
}

// newSecret wraps material.
func newSecret(kind Kind, m *material) *Secret {
	return &Secret{kind: kind, m: &m}
}

// material returns the Secret's material, nil for a nil or zero Secret.
func (s *Secret) material() *material {
	if s == nil || s.m == nil {
		return nil
	}
	return *s.m
}

// FromNKeySeed returns a KindNKey Secret for an encoded user nkey seed
// ("SU...", 58 characters). Leading and trailing ASCII white space is
// ignored so the contents of a seed file can be passed as read. The seed is
// copied; the caller keeps ownership of seed and should zero it.
func FromNKeySeed(seed []byte) (*Secret, error) {
	if len(seed) > MaxCredsBytes {
		return nil, ErrTooLarge
	}
	own, public, err := userSeed(bytes.TrimSpace(seed))
	if err != nil {
		return nil, err
	}
	return newSecret(KindNKey, &material{seed: own, public: public}), nil
}

// FromUserPassword returns a KindUserPassword Secret. Both must be
// non-empty, at most 4,096 bytes, valid UTF-8 and free of control
// characters.
func FromUserPassword(user, pass string) (*Secret, error) {
	if err := checkText(user); err != nil {
		return nil, err
	}
	if err := checkText(pass); err != nil {
		return nil, err
	}
	return newSecret(KindUserPassword, &material{user: []byte(user), pass: []byte(pass)}), nil
}

// FromToken returns a KindToken Secret. The token must be non-empty, at
// most 4,096 bytes, valid UTF-8 and free of control characters.
func FromToken(token string) (*Secret, error) {
	if err := checkText(token); err != nil {
		return nil, err
	}
	return newSecret(KindToken, &material{token: []byte(token)}), nil
}

// checkText validates a user name, password or token.
func checkText(s string) error {
	if len(s) > maxSecretLen {
		return ErrTooLarge
	}
	if s == "" || !utf8.ValidString(s) {
		return ErrMalformed
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ErrMalformed
		}
	}
	return nil
}

// userSeed validates an encoded seed as a user seed and returns a private
// copy of it and its public key. Derived private material is zeroed before
// it returns.
func userSeed(seed []byte) (own []byte, public string, err error) {
	if len(seed) != userSeedLen {
		return nil, "", ErrMalformed
	}
	own = bytes.Clone(seed)
	prefix, raw, err := nkeys.DecodeSeed(own)
	if err != nil {
		clear(own)
		return nil, "", ErrMalformed
	}
	defer clear(raw)
	if prefix != nkeys.PrefixByteUser {
		clear(own)
		return nil, "", ErrNotUserSeed
	}
	priv := ed25519.NewKeyFromSeed(raw)
	defer clear(priv)
	pub, err := nkeys.Encode(nkeys.PrefixByteUser, priv.Public().(ed25519.PublicKey))
	if err != nil {
		clear(own)
		return nil, "", ErrMalformed
	}
	return own, string(pub), nil
}

// Kind returns the kind of the secret, or 0 for a nil or zero Secret.
func (s *Secret) Kind() Kind {
	if s == nil {
		return 0
	}
	return s.kind
}

// Expires returns the earliest of the JWT's expiry (KindCreds) and the
// client certificate's NotAfter (when the secret carries one), and the
// zero time when neither has one. It stays available after Wipe.
func (s *Secret) Expires() time.Time {
	m := s.material()
	if m == nil {
		return time.Time{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.expires
	if m.cert != nil && (e.IsZero() || m.cert.notAfter.Before(e)) {
		e = m.cert.notAfter
	}
	return e
}

// PublicKey returns the user's public nkey ("U...") for KindCreds and
// KindNKey, and "" for the other kinds. A public key is not secret.
func (s *Secret) PublicKey() string {
	m := s.material()
	if m == nil {
		return ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.public
}

// CheckCurrent reports whether the secret can still authenticate at now:
// ErrWiped after Wipe, ErrExpired when a JWT expiry is at or before now,
// ErrCertificateNotYetValid or ErrCertificateExpired when now is before the
// client certificate's NotBefore or at or after its NotAfter, nil
// otherwise.
func (s *Secret) CheckCurrent(now time.Time) error {
	m := s.material()
	if m == nil {
		return ErrWiped
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.wiped {
		return ErrWiped
	}
	if !m.expires.IsZero() && !now.Before(m.expires) {
		return ErrExpired
	}
	if m.cert != nil {
		return m.cert.checkValidity(now)
	}
	return nil
}

// Authenticate returns what a CONNECT carries for this secret. For
// KindCreds and KindNKey it signs nonce, the nonce exactly as the server's
// INFO spells it (its ASCII bytes, not their base64 decoding), with ed25519
// and returns the signature base64 RawURL encoded; the private key derived
// for that is zeroed before Authenticate returns. Those kinds need a nonce
// (ErrNonceRequired); the other kinds ignore it. KindCertificate returns an
// empty Auth: its certificate authenticates in the TLS handshake (see
// ClientCertificate). After Wipe, ErrWiped.
func (s *Secret) Authenticate(nonce []byte) (Auth, error) {
	m := s.material()
	if m == nil {
		return Auth{}, ErrWiped
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.wiped {
		return Auth{}, ErrWiped
	}
	switch s.kind {
	case KindUserPassword:
		return Auth{User: string(m.user), Pass: string(m.pass)}, nil
	case KindToken:
		return Auth{Token: string(m.token)}, nil
	case KindCertificate:
		return Auth{}, nil
	case KindCreds, KindNKey:
		sig, err := sign(m.seed, nonce)
		if err != nil {
			return Auth{}, err
		}
		if s.kind == KindCreds {
			return Auth{JWT: string(m.jwt), Sig: sig}, nil
		}
		return Auth{NKey: m.public, Sig: sig}, nil
	default:
		return Auth{}, ErrWiped
	}
}

// sign signs nonce with the encoded seed and zeroes the derived keys.
func sign(seed, nonce []byte) (string, error) {
	if len(nonce) == 0 {
		return "", ErrNonceRequired
	}
	if len(nonce) > MaxNonceLen {
		return "", ErrMalformedNonce
	}
	for _, c := range nonce {
		if c < 0x21 || c > 0x7e {
			return "", ErrMalformedNonce
		}
	}
	_, raw, err := nkeys.DecodeSeed(seed)
	if err != nil {
		return "", ErrMalformed
	}
	defer clear(raw)
	priv := ed25519.NewKeyFromSeed(raw)
	defer clear(priv)
	return base64.RawURLEncoding.EncodeToString(ed25519.Sign(priv, nonce)), nil
}

// Wiped reports whether the secret was wiped (true for a nil or zero
// Secret): it can no longer authenticate.
func (s *Secret) Wiped() bool {
	m := s.material()
	if m == nil {
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.wiped
}

// Wipe zeroes every secret byte the Secret retains and marks it wiped:
// later Authenticate, ClientCertificate and CheckCurrent calls return
// ErrWiped. Kind, Expires, PublicKey and HasClientCertificate stay
// available. Wipe is idempotent.
func (s *Secret) Wipe() {
	m := s.material()
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range [][]byte{m.seed, m.jwt, m.user, m.pass, m.token} {
		clear(b)
	}
	if m.cert != nil {
		clear(m.cert.keyDER)
	}
	m.wiped = true
}
