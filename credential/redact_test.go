package credential

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// verbs lists every fmt verb and flag combination the redaction tests use.
var verbs = []string{
	"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%o", "%b", "%c", "%U",
	"%e", "%f", "%g", "%t", "%10v", "%-40s", "%+q", "%#q", "% x", "%T", "%!",
}

// secretsOf returns each secret string a test secret holds, and a few
// fragments of each, none of which may appear in any rendering.
func secretsOf(parts ...string) []string {
	var out []string
	for _, p := range parts {
		if p == "" {
			continue
		}
		out = append(out, p)
		if len(p) >= 16 {
			out = append(out, p[:16], p[len(p)-16:], p[len(p)/2-8:len(p)/2+8])
		}
	}
	return out
}

// pemBody returns the base64 body of a PEM block, without armour or line
// breaks.
func pemBody(b []byte) string {
	var body strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "-----") {
			body.WriteString(line)
		}
	}
	return body.String()
}

// renderings formats v every way the package promises to redact. With
// raw, it adds the ways fmt bypasses Format (the %p verb on a non-pointer,
// values reached through unexported fields), which only Secret withstands.
func renderings(t *testing.T, v any, raw bool) []string {
	t.Helper()
	type exported struct {
		Field any
	}
	type unexported struct {
		field any
	}
	values := []any{v, exported{v}, []any{v}, map[string]any{"k": v}, &exported{v}}
	formats := verbs
	if raw {
		values = append(values, unexported{v}, &unexported{v})
		formats = append(formats, "%p", "%#p")
	}
	var out []string
	for _, x := range values {
		for _, verb := range formats {
			out = append(out, fmt.Sprintf(verb, x))
		}
		out = append(out, fmt.Sprint(x), fmt.Sprintln(x))
	}
	var buf bytes.Buffer
	for _, h := range []slog.Handler{slog.NewTextHandler(&buf, nil), slog.NewJSONHandler(&buf, nil)} {
		slog.New(h).Info("msg", "secret", v, slog.Any("any", v), slog.Group("g", "nested", v))
	}
	out = append(out, buf.String())
	return out
}

func TestRedaction(t *testing.T) {
	u := newUser(t, newAccount(t), time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC))
	creds, err := ParseCreds(u.creds)
	if err != nil {
		t.Fatal(err)
	}
	nkey, err := FromNKeySeed(u.seed)
	if err != nil {
		t.Fatal(err)
	}
	userPass, err := FromUserPassword("alice-user-name", "correct-horse-battery-staple")
	if err != nil {
		t.Fatal(err)
	}
	token, err := FromToken("t0k3n-abcdefghijklmnop")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM := clientPair(t, newCA(t), ecKey(t), pemPKCS8)
	certOnly, err := FromClientCertificate(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	credsCert, err := ParseCreds(u.creds)
	if err != nil {
		t.Fatal(err)
	}
	if err := credsCert.AddClientCertificate(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	// The key's PEM body and its DER in hex (the %x of a []byte): neither
	// may appear.
	keyBlock, _ := pem.Decode(keyPEM)
	keySecrets := secretsOf(pemBody(keyPEM), hex.EncodeToString(keyBlock.Bytes))
	for _, tc := range []struct {
		name    string
		s       *Secret
		secrets []string
	}{
		{"creds", creds, secretsOf(u.jwt, string(u.seed), u.public)},
		{"nkey", nkey, secretsOf(string(u.seed), u.public)},
		{"user_password", userPass, secretsOf("alice-user-name", "correct-horse-battery-staple")},
		{"token", token, secretsOf("t0k3n-abcdefghijklmnop")},
		{"certificate", certOnly, keySecrets},
		{"creds with certificate", credsCert, append(secretsOf(u.jwt, string(u.seed), u.public), keySecrets...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := tc.s.Authenticate([]byte("0123456789abcde"))
			if err != nil {
				t.Fatal(err)
			}
			secrets := append(secretsOf(a.Sig), tc.secrets...)
			for _, r := range [][]any{{tc.s, true}, {*tc.s, true}, {a, false}, {&a, false}} {
				v, raw := r[0], r[1].(bool)
				for _, r := range renderings(t, v, raw) {
					for _, secret := range secrets {
						if strings.Contains(r, secret) {
							t.Fatalf("rendering of %T contains a secret: %q", v, r)
						}
					}
				}
			}
			for _, v := range []any{tc.s, *tc.s, a, &a, struct{ S *Secret }{tc.s}, []Auth{a}} {
				b, err := json.Marshal(v)
				if !errors.Is(err, ErrNotMarshalable) {
					t.Errorf("json.Marshal(%T) error = %v, want ErrNotMarshalable", v, err)
				}
				if len(b) != 0 {
					t.Errorf("json.Marshal(%T) produced %d bytes", v, len(b))
				}
			}
			for _, m := range []interface{ MarshalText() ([]byte, error) }{tc.s, a} {
				if _, err := m.MarshalText(); !errors.Is(err, ErrNotMarshalable) {
					t.Errorf("MarshalText error = %v, want ErrNotMarshalable", err)
				}
			}
		})
	}
}

func TestRedactedText(t *testing.T) {
	token, err := FromToken("tok")
	if err != nil {
		t.Fatal(err)
	}
	wiped, err := FromUserPassword("u", "p")
	if err != nil {
		t.Fatal(err)
	}
	wiped.Wipe()
	certPEM, keyPEM := clientPair(t, newCA(t), ecKey(t), pemPKCS8)
	certOnly, err := FromClientCertificate(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	withCert, err := FromToken("tok")
	if err != nil {
		t.Fatal(err)
	}
	if err := withCert.AddClientCertificate(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	var nilSecret *Secret
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{"secret %v", fmt.Sprintf("%v", token), "credential.Secret(token, [redacted])"},
		{"secret %q", fmt.Sprintf("%q", token), `"credential.Secret(token, [redacted])"`},
		{"certificate", fmt.Sprintf("%v", certOnly), "credential.Secret(certificate, [redacted])"},
		{"token with certificate", fmt.Sprintf("%s", withCert), "credential.Secret(token+certificate, [redacted])"},
		{"wiped", fmt.Sprintf("%+v", wiped), "credential.Secret(user_password, wiped)"},
		{"zero", Secret{}.String(), "credential.Secret(none)"},
		{"nil pointer", fmt.Sprintf("%v", nilSecret), "<nil>"},
		{"auth", Auth{JWT: "j", Sig: "s"}.GoString(), "credential.Auth{JWT:[redacted] Sig:[redacted]}"},
		{"empty auth", fmt.Sprintf("%#v", Auth{}), "credential.Auth{}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}
