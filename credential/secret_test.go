package credential

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nkeys"
)

func TestKindString(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		want string
	}{
		{KindCreds, "creds"},
		{KindNKey, "nkey"},
		{KindUserPassword, "user_password"},
		{KindToken, "token"},
		{KindCertificate, "certificate"},
		{0, "Kind(0)"},
		{KindCertificate + 1, "Kind(6)"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := tc.kind.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFromNKeySeed(t *testing.T) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, err := kp.Seed()
	if err != nil {
		t.Fatal(err)
	}
	public, err := kp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		input []byte
	}{
		{"bare", bytes.Clone(seed)},
		{"seed file", append(append([]byte(" \t"), seed...), "\r\n"...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := FromNKeySeed(tc.input)
			if err != nil {
				t.Fatalf("FromNKeySeed: %v", err)
			}
			clear(tc.input)
			if s.Kind() != KindNKey || s.PublicKey() != public || !s.Expires().IsZero() {
				t.Errorf("kind %v public %q expires %v", s.Kind(), s.PublicKey(), s.Expires())
			}
			nonce := []byte("QmFzZTY0Tm9uY2U")
			a, err := s.Authenticate(nonce)
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			if diff := cmp.Diff(Auth{NKey: public, Sig: a.Sig}, a); diff != "" {
				t.Errorf("auth fields (-want +got):\n%s", diff)
			}
			verify(t, public, nonce, a.Sig)
		})
	}
}

func TestFromNKeySeedRejects(t *testing.T) {
	user := seedOf(t, nkeys.CreateUser)
	userPublic, err := nkeys.FromSeed(user)
	if err != nil {
		t.Fatal(err)
	}
	public, err := userPublic.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		input []byte
		want  error
	}{
		{"empty", nil, ErrMalformed},
		{"public key", []byte(public), ErrMalformed},
		{"truncated", user[:57], ErrMalformed},
		{"one extra character", append(bytes.Clone(user), 'A'), ErrMalformed},
		{"bad checksum", flip(user, 20), ErrMalformed},
		{"lower case", bytes.ToLower(user), ErrMalformed},
		{"operator seed", seedOf(t, nkeys.CreateOperator), ErrNotUserSeed},
		{"account seed", seedOf(t, nkeys.CreateAccount), ErrNotUserSeed},
		{"server seed", seedOf(t, nkeys.CreateServer), ErrNotUserSeed},
		{"cluster seed", seedOf(t, nkeys.CreateCluster), ErrNotUserSeed},
		{"curve seed", seedOf(t, nkeys.CreateCurveKeys), ErrNotUserSeed},
		{"past the size limit", bytes.Repeat([]byte(" "), MaxCredsBytes+1), ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := FromNKeySeed(tc.input)
			if !errors.Is(err, tc.want) {
				t.Fatalf("FromNKeySeed error = %v, want %v", err, tc.want)
			}
			if s != nil {
				t.Error("got a secret with an error")
			}
		})
	}
}

// TestSignsNonceASCII pins PROTOCOL.md 2.3: the signed bytes are the nonce
// as INFO spells it, not its base64 decoding, and the signature is base64
// RawURL (no padding, URL alphabet).
func TestSignsNonceASCII(t *testing.T) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, err := kp.Seed()
	if err != nil {
		t.Fatal(err)
	}
	s, err := FromNKeySeed(seed)
	if err != nil {
		t.Fatal(err)
	}
	// 11 random bytes, base64 RawURL: the server's nonce shape.
	nonce := base64.RawURLEncoding.EncodeToString([]byte{0xfb, 0xff, 0x3e, 1, 2, 3, 4, 5, 6, 7, 8})
	a, err := s.Authenticate([]byte(nonce))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Sig) != 86 || strings.ContainsAny(a.Sig, "=+/") {
		t.Errorf("signature %d characters, want 86 of the RawURL alphabet", len(a.Sig))
	}
	sig, err := base64.RawURLEncoding.DecodeString(a.Sig)
	if err != nil {
		t.Fatal(err)
	}
	if err := kp.Verify([]byte(nonce), sig); err != nil {
		t.Errorf("signature of the ASCII nonce does not verify: %v", err)
	}
	decoded, err := base64.RawURLEncoding.DecodeString(nonce)
	if err != nil {
		t.Fatal(err)
	}
	if err := kp.Verify(decoded, sig); err == nil {
		t.Error("signature verifies over the decoded nonce; it must cover the ASCII bytes")
	}
}

func TestAuthenticateNonce(t *testing.T) {
	nkey, err := FromNKeySeed(seedOf(t, nkeys.CreateUser))
	if err != nil {
		t.Fatal(err)
	}
	creds, err := ParseCreds(newUser(t, newAccount(t), time.Time{}).creds)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Secret{nkey, creds} {
		for _, tc := range []struct {
			name  string
			nonce []byte
			want  error
		}{
			{"nil", nil, ErrNonceRequired},
			{"empty", []byte{}, ErrNonceRequired},
			{"at the limit", bytes.Repeat([]byte("n"), MaxNonceLen), nil},
			{"one past the limit", bytes.Repeat([]byte("n"), MaxNonceLen+1), ErrMalformedNonce},
			{"space", []byte("ab cd"), ErrMalformedNonce},
			{"control", []byte("ab\ncd"), ErrMalformedNonce},
			{"non-ascii", []byte("ab\xffcd"), ErrMalformedNonce},
		} {
			t.Run(s.Kind().String()+"/"+tc.name, func(t *testing.T) {
				_, err := s.Authenticate(tc.nonce)
				if !errors.Is(err, tc.want) {
					t.Errorf("Authenticate error = %v, want %v", err, tc.want)
				}
			})
		}
	}
}

func TestFromUserPasswordAndToken(t *testing.T) {
	long := strings.Repeat("x", maxSecretLen)
	for _, tc := range []struct {
		name    string
		make    func() (*Secret, error)
		want    Auth
		wantErr error
	}{
		{"user password", func() (*Secret, error) { return FromUserPassword("alice", "s3cr3t") }, Auth{User: "alice", Pass: "s3cr3t"}, nil},
		{"unicode password", func() (*Secret, error) { return FromUserPassword("bob", "pässwörd") }, Auth{User: "bob", Pass: "pässwörd"}, nil},
		{"password at the limit", func() (*Secret, error) { return FromUserPassword("alice", long) }, Auth{User: "alice", Pass: long}, nil},
		{"password one past the limit", func() (*Secret, error) { return FromUserPassword("alice", long+"x") }, Auth{}, ErrTooLarge},
		{"user one past the limit", func() (*Secret, error) { return FromUserPassword(long+"x", "p") }, Auth{}, ErrTooLarge},
		{"empty user", func() (*Secret, error) { return FromUserPassword("", "p") }, Auth{}, ErrMalformed},
		{"empty password", func() (*Secret, error) { return FromUserPassword("u", "") }, Auth{}, ErrMalformed},
		{"control in password", func() (*Secret, error) { return FromUserPassword("u", "a\rb") }, Auth{}, ErrMalformed},
		{"DEL in user", func() (*Secret, error) { return FromUserPassword("u\x7f", "p") }, Auth{}, ErrMalformed},
		{"C1 control in password", func() (*Secret, error) { return FromUserPassword("u", "a\u0085b") }, Auth{}, ErrMalformed},
		{"invalid utf-8", func() (*Secret, error) { return FromUserPassword("u", "a\xffb") }, Auth{}, ErrMalformed},
		{"token", func() (*Secret, error) { return FromToken("t0k3n") }, Auth{Token: "t0k3n"}, nil},
		{"token at the limit", func() (*Secret, error) { return FromToken(long) }, Auth{Token: long}, nil},
		{"token one past the limit", func() (*Secret, error) { return FromToken(long + "x") }, Auth{}, ErrTooLarge},
		{"empty token", func() (*Secret, error) { return FromToken("") }, Auth{}, ErrMalformed},
		{"token with tab", func() (*Secret, error) { return FromToken("a\tb") }, Auth{}, ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.make()
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("constructor error = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			// These kinds sign nothing: the nonce is ignored, even absent.
			got, err := s.Authenticate(nil)
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if s.PublicKey() != "" || !s.Expires().IsZero() {
				t.Errorf("public %q expires %v, want none", s.PublicKey(), s.Expires())
			}
		})
	}
}

func TestWipe(t *testing.T) {
	u := newUser(t, newAccount(t), time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC))
	creds, err := ParseCreds(u.creds)
	if err != nil {
		t.Fatal(err)
	}
	nkey, err := FromNKeySeed(u.seed)
	if err != nil {
		t.Fatal(err)
	}
	userPass, err := FromUserPassword("alice", "s3cr3t")
	if err != nil {
		t.Fatal(err)
	}
	token, err := FromToken("t0k3n")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Secret{creds, nkey, userPass, token} {
		t.Run(s.Kind().String(), func(t *testing.T) {
			m := s.material()
			retained := [][]byte{m.seed, m.jwt, m.user, m.pass, m.token}
			expires, public := s.Expires(), s.PublicKey()
			if s.Wiped() {
				t.Fatal("Wiped before Wipe")
			}
			s.Wipe()
			s.Wipe() // idempotent
			for i, b := range retained {
				if !bytes.Equal(b, make([]byte, len(b))) {
					t.Errorf("retained buffer %d not zeroed", i)
				}
			}
			if _, err := s.Authenticate([]byte("nonce")); !errors.Is(err, ErrWiped) {
				t.Errorf("Authenticate after Wipe = %v, want ErrWiped", err)
			}
			if err := s.CheckCurrent(time.Time{}); !errors.Is(err, ErrWiped) {
				t.Errorf("CheckCurrent after Wipe = %v, want ErrWiped", err)
			}
			if !s.Wiped() {
				t.Error("Wiped false after Wipe")
			}
			if s.Expires() != expires || s.PublicKey() != public {
				t.Error("Expires or PublicKey changed by Wipe")
			}
		})
	}
}

func TestZeroAndNilSecret(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *Secret
	}{
		{"nil", nil},
		{"zero", &Secret{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.s.Authenticate([]byte("n")); !errors.Is(err, ErrWiped) {
				t.Errorf("Authenticate = %v, want ErrWiped", err)
			}
			tc.s.Wipe()
			if !tc.s.Wiped() {
				t.Error("Wiped false")
			}
			if tc.s.Kind() != 0 || tc.s.PublicKey() != "" || !tc.s.Expires().IsZero() {
				t.Error("nil or zero secret reports data")
			}
		})
	}
}

// TestWipeRacesAuthenticate runs Wipe against concurrent Authenticate calls
// (meaningful under -race): each call either signs or reports ErrWiped.
func TestWipeRacesAuthenticate(t *testing.T) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, err := kp.Seed()
	if err != nil {
		t.Fatal(err)
	}
	public, err := kp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	s, err := FromNKeySeed(seed)
	if err != nil {
		t.Fatal(err)
	}
	const workers, calls = 4, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers*calls)
	for range workers {
		wg.Go(func() {
			for range calls {
				a, err := s.Authenticate([]byte("nonce"))
				if err != nil {
					errs <- err
					continue
				}
				if a.NKey != public {
					errs <- errors.New("wrong public key")
				}
			}
		})
	}
	s.Wipe()
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, ErrWiped) {
			t.Errorf("concurrent Authenticate: %v", err)
		}
	}
}
