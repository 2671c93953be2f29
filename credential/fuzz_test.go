package credential

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// Forms of FuzzSecret: which constructor the input is given to.
const (
	formCreds        = iota // ParseCreds(a)
	formNKey                // FromNKeySeed(a)
	formUserPassword        // FromUserPassword(a, b)
	formToken               // FromToken(a)
	numForms
)

// sentinels are the errors a constructor or Authenticate may return.
var sentinels = [...]error{
	ErrMalformed, ErrTooLarge, ErrNotUserJWT, ErrNotUserSeed, ErrMismatch,
	ErrExpired, ErrWiped, ErrNonceRequired, ErrMalformedNonce, ErrNotMarshalable,
	ErrCertificateKeyMismatch, ErrCertificateUsage, ErrCertificateExpired, ErrCertificateNotYetValid, ErrCertificateSet,
}

// fuzzNonce is the nonce the committed seeds sign, as 2.14.6 spells one.
const fuzzNonce = "kF3s_9Qa-xYz0bc"

// fixedKey returns the key pair of a fixed raw seed, so seeds built from it
// are the same on every run.
func fixedKey(t testing.TB, prefix nkeys.PrefixByte, fill byte) nkeys.KeyPair {
	t.Helper()
	kp, err := nkeys.FromRawSeed(prefix, bytes.Repeat([]byte{fill}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

// fixedCreds returns a .creds file, its JWT and its seed for a user key
// made from fill, signed by the account key made from fill+1.
func fixedCreds(t testing.TB, fill byte) (creds []byte, token string, seed []byte) {
	t.Helper()
	u := fixedKey(t, nkeys.PrefixByteUser, fill)
	pub, err := u.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	seed, err = u.Seed()
	if err != nil {
		t.Fatal(err)
	}
	token, err = jwt.NewUserClaims(pub).Encode(fixedKey(t, nkeys.PrefixByteAccount, fill+1))
	if err != nil {
		t.Fatal(err)
	}
	creds, err = jwt.FormatUserConfig(token, seed)
	if err != nil {
		t.Fatal(err)
	}
	return creds, token, seed
}

// FuzzSecret gives arbitrary bytes to every constructor (form selects
// ParseCreds, FromNKeySeed, FromUserPassword or FromToken) and checks:
//
//   - what is refused returns no Secret and exactly one of the sentinels,
//     whose fixed text is the whole message, so no byte of the input (the
//     seed, token or password) can be in it;
//   - what is accepted authenticates: for the nkey kinds Authenticate signs
//     nonce and the signature verifies against PublicKey (for a .creds file
//     the JWT's subject), or refuses an empty or malformed nonce; user,
//     password and token come back exactly as given;
//   - the user, password and token forms are accepted exactly when the
//     text is 1 to maxSecretLen bytes of UTF-8 without control characters,
//     and a seed exactly when nkeys decodes it as a user seed;
//   - every rendering of the Secret and of its Auth is that of any other
//     secret of the same kind, and after Wipe it authenticates no more.
//
// The committed corpus is in testdata/fuzz/FuzzSecret.
func FuzzSecret(f *testing.F) {
	for _, s := range secretSeeds(f) {
		f.Add(s.form, s.a, s.b, s.nonce)
	}
	creds, _, seed := fixedCreds(f, 1)
	refCreds, err := ParseCreds(creds)
	if err != nil {
		f.Fatal(err)
	}
	refs := [numForms]*Secret{formCreds: refCreds}
	if refs[formNKey], err = FromNKeySeed(seed); err != nil {
		f.Fatal(err)
	}
	if refs[formUserPassword], err = FromUserPassword("reference-user", "reference-password"); err != nil {
		f.Fatal(err)
	}
	if refs[formToken], err = FromToken("reference-token"); err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, form uint8, a, b, nonce []byte) {
		form %= numForms
		s, err := construct(form, a, b)
		secrets := secretsIn(form, a, b)
		if err != nil {
			checkRefusal(t, err, secrets)
			if s != nil {
				t.Fatalf("refused with a Secret")
			}
			checkOracle(t, form, a, b, false)
			return
		}
		checkOracle(t, form, a, b, true)
		checkAccepted(t, form, s, a, b, nonce)
		checkRendering(t, s, refs[form], nonce)
		s.Wipe()
		if _, err := s.Authenticate(nonce); !errors.Is(err, ErrWiped) {
			t.Fatalf("Authenticate after Wipe = %v, want ErrWiped", err)
		}
		if err := s.CheckCurrent(time.Unix(0, 0)); !errors.Is(err, ErrWiped) {
			t.Fatalf("CheckCurrent after Wipe = %v, want ErrWiped", err)
		}
	})
}

// secretSeed is one input of FuzzSecret.
type secretSeed struct {
	form  uint8
	a, b  []byte
	nonce []byte
}

// secretSeeds are accepted and refused inputs of every form.
func secretSeeds(t testing.TB) []secretSeed {
	creds, token, seed := fixedCreds(t, 1)
	return []secretSeed{
		{formCreds, creds, nil, []byte(fuzzNonce)},
		{formCreds, bytes.ReplaceAll(creds, []byte("\n"), []byte("\r\n")), nil, []byte("n")},
		{formCreds, []byte(string(creds) + "-----BEGIN X-----\nabc\n-----END X-----\n"), nil, []byte(fuzzNonce)},
		{formCreds, decorate(token, seed[:40]), nil, []byte(fuzzNonce)},
		{formNKey, append(append([]byte(" \n"), seed...), '\n'), nil, []byte(fuzzNonce)},
		{formNKey, seed, nil, nil},
		{formNKey, flip(seed, 10), nil, []byte(fuzzNonce)},
		{formUserPassword, []byte("alice"), []byte("s3cr\u00e9t"), nil},
		{formUserPassword, []byte("alice"), []byte("pa\nss"), nil},
		{formToken, []byte("tok-\u00e9n"), nil, nil},
		{formToken, []byte("tok\u0085en"), nil, nil},
		{formToken, []byte("tok\x7fen"), nil, nil},
		{formToken, []byte("tok\u009fen"), nil, nil},
		{formUserPassword, []byte("\u00a0alice"), []byte("pass\x1f"), nil},
		{formToken, bytes.Repeat([]byte("t"), maxSecretLen+1), nil, nil},
	}
}

func construct(form uint8, a, b []byte) (*Secret, error) {
	switch form {
	case formCreds:
		return ParseCreds(a)
	case formNKey:
		return FromNKeySeed(a)
	case formUserPassword:
		return FromUserPassword(string(a), string(b))
	default:
		return FromToken(string(a))
	}
}

// secretsIn lists the secret texts of an input: the whole input and, for
// a .creds file, each of its lines.
func secretsIn(form uint8, a, b []byte) []string {
	out := []string{string(a)}
	switch form {
	case formCreds:
		for line := range strings.Lines(string(a)) {
			out = append(out, strings.TrimSpace(line))
		}
	case formNKey:
		out = append(out, string(bytes.TrimSpace(a)))
	case formUserPassword:
		out = append(out, string(b))
	}
	return out
}

// checkRefusal requires err to be one sentinel with its fixed text, and no
// secret in it but what the fixed vocabulary of the package's messages
// holds anyway.
func checkRefusal(t *testing.T, err error, secrets []string) {
	t.Helper()
	var match error
	for _, s := range sentinels {
		if errors.Is(err, s) {
			match = s
			break
		}
	}
	if match == nil {
		t.Fatalf("refusal %v matches no sentinel", err)
	}
	msg := err.Error()
	if msg != match.Error() {
		t.Fatalf("refusal message %q is not the sentinel's %q", msg, match.Error())
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(msg, s) && !inVocabulary(s) {
			t.Fatalf("refusal message %q contains the secret %q", msg, s)
		}
	}
}

// inVocabulary reports whether s occurs in some sentinel's fixed text: a
// secret such as "cred" cannot be told apart from the message itself.
func inVocabulary(s string) bool {
	for _, e := range sentinels {
		if strings.Contains(e.Error(), s) {
			return true
		}
	}
	return false
}

// checkOracle compares acceptance with an independent reading of the
// rules: text forms by unicode.IsControl, a plain seed by nkeys.
func checkOracle(t *testing.T, form uint8, a, b []byte, accepted bool) {
	t.Helper()
	var want bool
	switch form {
	case formCreds:
		return // jwt/v2 and nkeys decide; checkAccepted verifies the result
	case formNKey:
		want = len(a) <= MaxCredsBytes && nkeysUserSeed(bytes.TrimSpace(a))
	case formUserPassword:
		want = validText(a) && validText(b)
	default:
		want = validText(a)
	}
	if accepted != want {
		t.Fatalf("form %d accepted=%v, independent rules say %v (a %q, b %q)", form, accepted, want, a, b)
	}
}

func validText(s []byte) bool {
	return len(s) > 0 && len(s) <= maxSecretLen && utf8.Valid(s) && bytes.IndexFunc(s, unicode.IsControl) < 0
}

// nkeysUserSeed reports whether nkeys reads seed as a user seed.
func nkeysUserSeed(seed []byte) bool {
	kp, err := nkeys.FromSeed(seed)
	if err != nil {
		return false
	}
	pub, err := kp.PublicKey()
	return err == nil && nkeys.IsValidPublicUserKey(pub)
}

// checkAccepted authenticates s with nonce and checks what comes back.
func checkAccepted(t *testing.T, form uint8, s *Secret, a, b, nonce []byte) {
	t.Helper()
	wantKind := [numForms]Kind{KindCreds, KindNKey, KindUserPassword, KindToken}[form]
	if s.Kind() != wantKind {
		t.Fatalf("kind %v, want %v", s.Kind(), wantKind)
	}
	auth, err := s.Authenticate(nonce)
	switch form {
	case formUserPassword:
		if err != nil || auth != (Auth{User: string(a), Pass: string(b)}) {
			t.Fatalf("user and password do not come back as given (err %v)", err)
		}
		return
	case formToken:
		if err != nil || auth != (Auth{Token: string(a)}) {
			t.Fatalf("token does not come back as given (err %v)", err)
		}
		return
	}
	switch {
	case len(nonce) == 0:
		if !errors.Is(err, ErrNonceRequired) {
			t.Fatalf("Authenticate without nonce = %v, want ErrNonceRequired", err)
		}
		return
	case !validNonce(nonce):
		if !errors.Is(err, ErrMalformedNonce) {
			t.Fatalf("Authenticate(%q) = %v, want ErrMalformedNonce", nonce, err)
		}
		return
	case err != nil:
		t.Fatalf("Authenticate(%q): %v", nonce, err)
	}
	pub := s.PublicKey()
	if form == formCreds {
		claims, err := jwt.DecodeUserClaims(auth.JWT)
		if err != nil {
			t.Fatalf("the JWT of an accepted .creds file does not decode: %v", err)
		}
		if claims.Subject != pub || auth.NKey != "" || !bytes.Contains(a, []byte(auth.JWT)) {
			t.Fatalf("creds auth: subject %q, public key %q, nkey set %v", claims.Subject, pub, auth.NKey != "")
		}
	} else if auth.NKey != pub || auth.JWT != "" {
		t.Fatalf("nkey auth carries %q, public key %q", auth.NKey, pub)
	}
	sig, err := base64.RawURLEncoding.DecodeString(auth.Sig)
	if err != nil {
		t.Fatalf("signature is not base64 RawURL: %v", err)
	}
	kp, err := nkeys.FromPublicKey(pub)
	if err != nil {
		t.Fatalf("public key %q: %v", pub, err)
	}
	if err := kp.Verify(nonce, sig); err != nil {
		t.Fatalf("signature of %q does not verify: %v", nonce, err)
	}
}

// validNonce is the nonce rule, read independently: 1 to MaxNonceLen
// printable ASCII bytes without space.
func validNonce(n []byte) bool {
	if len(n) == 0 || len(n) > MaxNonceLen {
		return false
	}
	for _, c := range n {
		if c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}

// renderVerbs are the fmt verbs a Secret or Auth might be printed with.
var renderVerbs = [...]string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"}

// checkRendering requires s and its Auth to print as ref and its Auth do:
// the rendering depends on the kind and on which fields are set, never on
// the material.
func checkRendering(t *testing.T, s, ref *Secret, nonce []byte) {
	t.Helper()
	for _, verb := range renderVerbs {
		if got, want := fmt.Sprintf(verb, *s), fmt.Sprintf(verb, *ref); got != want {
			t.Fatalf("Sprintf(%s) = %q, another secret of the kind prints %q", verb, got, want)
		}
	}
	auth, err := s.Authenticate(nonce)
	if err != nil {
		return
	}
	refAuth, err := ref.Authenticate(nonce)
	if err != nil {
		t.Fatalf("reference Authenticate: %v", err)
	}
	for _, verb := range renderVerbs {
		if got, want := fmt.Sprintf(verb, auth), fmt.Sprintf(verb, refAuth); got != want {
			t.Fatalf("Auth Sprintf(%s) = %q, another secret of the kind prints %q", verb, got, want)
		}
	}
}
