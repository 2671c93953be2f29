package credential

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

func TestParseCreds(t *testing.T) {
	account := newAccount(t)
	expires := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		expires time.Time
		edit    func([]byte) []byte
	}{
		{name: "no expiry", edit: func(b []byte) []byte { return b }},
		{name: "expiry", expires: expires, edit: func(b []byte) []byte { return b }},
		{name: "crlf", edit: func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) }},
		{name: "no final newline", edit: func(b []byte) []byte {
			return bytes.TrimRight(b[:bytes.LastIndex(b, []byte("------END USER"))+30], "\n")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := newUser(t, account, tc.expires)
			s, err := ParseCreds(tc.edit(u.creds))
			if err != nil {
				t.Fatalf("ParseCreds: %v", err)
			}
			type got struct {
				Kind    Kind
				Public  string
				Expires time.Time
			}
			if diff := cmp.Diff(got{KindCreds, u.public, tc.expires}, got{s.Kind(), s.PublicKey(), s.Expires()}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			nonce := []byte("kF3s_9Qa-xYz0bc")
			a, err := s.Authenticate(nonce)
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			if diff := cmp.Diff(Auth{JWT: u.jwt, Sig: a.Sig}, a); diff != "" {
				t.Errorf("auth fields (-want +got):\n%s", diff)
			}
			verify(t, u.public, nonce, a.Sig)
		})
	}
}

func TestParseCredsRejects(t *testing.T) {
	account := newAccount(t)
	u := newUser(t, account, time.Time{})
	other := newUser(t, account, time.Time{})
	operator, err := nkeys.CreateOperator()
	if err != nil {
		t.Fatal(err)
	}
	accountPublic, err := account.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	accountJWT, err := jwt.NewAccountClaims(accountPublic).Encode(operator)
	if err != nil {
		t.Fatal(err)
	}
	tampered := []byte(u.jwt)
	tampered[len(tampered)-5] ^= 1 // inside the signature chunk
	block := bytes.Index(u.creds, []byte("-----BEGIN USER"))
	pad := func(b []byte, n int) []byte {
		return append(bytes.Clone(b), bytes.Repeat([]byte("\n"), n-len(b))...)
	}
	for _, tc := range []struct {
		name  string
		input []byte
		want  error
	}{
		{"empty", nil, ErrMalformed},
		{"bare jwt", []byte(u.jwt), ErrMalformed},
		{"bare seed", u.seed, ErrMalformed},
		{"jwt block only", u.creds[:block], ErrMalformed},
		{"three blocks", append(bytes.Clone(u.creds), u.creds[block:]...), ErrMalformed},
		{"jwt not a jwt", decorate("abc.def.ghi", u.seed), ErrMalformed},
		{"jwt bad signature", decorate(string(tampered), u.seed), ErrMalformed},
		{"seed truncated", decorate(u.jwt, u.seed[:50]), ErrMalformed},
		{"seed bad checksum", decorate(u.jwt, flip(u.seed, 30)), ErrMalformed},
		{"seed of another user", decorate(u.jwt, other.seed), ErrMismatch},
		{"account seed", decorate(u.jwt, seedOf(t, nkeys.CreateAccount)), ErrNotUserSeed},
		{"operator seed", decorate(u.jwt, seedOf(t, nkeys.CreateOperator)), ErrNotUserSeed},
		{"account jwt", decorate(accountJWT, u.seed), ErrNotUserJWT},
		{"one byte past the limit", pad(u.creds, MaxCredsBytes+1), ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseCreds(tc.input)
			if !errors.Is(err, tc.want) {
				t.Fatalf("ParseCreds error = %v, want %v", err, tc.want)
			}
			if s != nil {
				t.Errorf("ParseCreds returned a secret with error %v", err)
			}
		})
	}
	t.Run("at the limit", func(t *testing.T) {
		b := pad(u.creds, MaxCredsBytes)
		if len(b) != MaxCredsBytes {
			t.Fatalf("padded to %d", len(b))
		}
		if _, err := ParseCreds(b); err != nil {
			t.Fatalf("ParseCreds at MaxCredsBytes: %v", err)
		}
	})
}

// TestParseCredsKeepsNoAlias pins that the Secret owns its seed: zeroing the
// caller's file after parsing does not break signing.
func TestParseCredsKeepsNoAlias(t *testing.T) {
	u := newUser(t, newAccount(t), time.Time{})
	file := bytes.Clone(u.creds)
	s, err := ParseCreds(file)
	if err != nil {
		t.Fatal(err)
	}
	clear(file)
	a, err := s.Authenticate([]byte("nonce"))
	if err != nil {
		t.Fatal(err)
	}
	verify(t, u.public, []byte("nonce"), a.Sig)
}

func TestCheckCurrent(t *testing.T) {
	account := newAccount(t)
	expires := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	expiring, err := ParseCreds(newUser(t, account, expires).creds)
	if err != nil {
		t.Fatal(err)
	}
	forever, err := ParseCreds(newUser(t, account, time.Time{}).creds)
	if err != nil {
		t.Fatal(err)
	}
	token, err := FromToken("tok")
	if err != nil {
		t.Fatal(err)
	}
	wiped, err := FromToken("tok")
	if err != nil {
		t.Fatal(err)
	}
	wiped.Wipe()
	for _, tc := range []struct {
		name string
		s    *Secret
		now  time.Time
		want error
	}{
		{"before expiry", expiring, expires.Add(-time.Second), nil},
		{"at expiry", expiring, expires, ErrExpired},
		{"after expiry", expiring, expires.Add(time.Hour), ErrExpired},
		{"no expiry", forever, expires.Add(100 * 365 * 24 * time.Hour), nil},
		{"token", token, expires, nil},
		{"wiped", wiped, expires, ErrWiped},
		{"nil", nil, expires, ErrWiped},
		{"zero", &Secret{}, expires, ErrWiped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.s.CheckCurrent(tc.now); !errors.Is(err, tc.want) {
				t.Errorf("CheckCurrent = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestErrorsCarryNoSecret checks every rejection message against the secret
// it was given.
func TestErrorsCarryNoSecret(t *testing.T) {
	u := newUser(t, newAccount(t), time.Time{})
	other := newUser(t, newAccount(t), time.Time{})
	_, e1 := ParseCreds(decorate(u.jwt, other.seed))
	_, e2 := FromNKeySeed(u.seed[:40])
	_, e3 := FromUserPassword("alice", "pa\nss")
	_, e4 := FromToken("tok\x00en")
	for _, err := range []error{e1, e2, e3, e4} {
		if err == nil {
			t.Fatal("want an error")
		}
		for _, secret := range []string{u.jwt, string(u.seed), string(other.seed), string(u.seed[:40]), "pa\nss", "tok\x00en"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q contains a secret", err)
			}
		}
		if !strings.HasPrefix(err.Error(), "credential: ") {
			t.Errorf("error %q lacks the package prefix", err)
		}
	}
}
