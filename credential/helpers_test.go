package credential

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// user is a test identity: an account-signed user JWT and its seed.
type user struct {
	jwt    string
	seed   []byte
	public string
	creds  []byte
}

// newAccount returns a fresh account key pair.
func newAccount(t *testing.T) nkeys.KeyPair {
	t.Helper()
	kp, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

// newUser returns a user signed by account, expiring at expires (zero: never).
func newUser(t *testing.T, account nkeys.KeyPair, expires time.Time) user {
	t.Helper()
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
	claims := jwt.NewUserClaims(public)
	if !expires.IsZero() {
		claims.Expires = expires.Unix()
	}
	token, err := claims.Encode(account)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := jwt.FormatUserConfig(token, seed)
	if err != nil {
		t.Fatal(err)
	}
	return user{jwt: token, seed: append([]byte(nil), seed...), public: public, creds: creds}
}

// seedOf returns the encoded seed of a fresh key pair made by create.
func seedOf(t *testing.T, create func() (nkeys.KeyPair, error)) []byte {
	t.Helper()
	kp, err := create()
	if err != nil {
		t.Fatal(err)
	}
	seed, err := kp.Seed()
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), seed...)
}

// decorate writes a .creds file by hand, for contents FormatUserConfig
// refuses to produce.
func decorate(token string, seed []byte) []byte {
	return []byte("-----BEGIN NATS USER JWT-----\n" + token + "\n------END NATS USER JWT------\n\n" +
		"************************* IMPORTANT *************************\n" +
		"NKEY Seed printed below can be used to sign and prove identity.\n\n" +
		"-----BEGIN USER NKEY SEED-----\n" + string(seed) + "\n------END USER NKEY SEED------\n\n" +
		"*************************************************************\n")
}

// flip returns a copy of an encoded key with the character at i changed to
// another base32 letter, which breaks its checksum.
func flip(key []byte, i int) []byte {
	out := append([]byte(nil), key...)
	if out[i] == 'A' {
		out[i] = 'B'
	} else {
		out[i] = 'A'
	}
	return out
}

// verify checks that sig (base64 RawURL) is public's ed25519 signature of msg.
func verify(t *testing.T, public string, msg []byte, sig string) {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		t.Fatalf("signature is not base64 RawURL: %v", err)
	}
	kp, err := nkeys.FromPublicKey(public)
	if err != nil {
		t.Fatal(err)
	}
	if err := kp.Verify(msg, raw); err != nil {
		t.Fatalf("signature does not verify: %v", err)
	}
}
