package trigger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/credential"
)

// testCredentials returns one matching credential per tenant of c, in
// reverse order.
func testCredentials(t *testing.T, c Config) []Credential {
	t.Helper()
	var out []Credential
	for i := len(c.Tenants) - 1; i >= 0; i-- {
		tn := c.Tenants[i]
		s, err := credential.FromToken("token-of-" + tn.ID + "-0123456789")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Credential{Tenant: tn.ID, ProviderID: tn.ProviderID, Destination: tn.Destination, Secret: s})
	}
	return out
}

func TestMatchCredentials(t *testing.T) {
	c := validConfig(t)
	creds := testCredentials(t, c)
	got, err := MatchCredentials(c, creds)
	if err != nil {
		t.Fatalf("MatchCredentials: %v", err)
	}
	want := []Credential{creds[1], creds[0]}
	if diff := cmp.Diff(want, got, cmpConfig, cmp.Comparer(func(a, b *credential.Secret) bool { return a == b })); diff != "" {
		t.Errorf("tenant order (-want +got):\n%s", diff)
	}
}

func TestMatchCredentialsRejects(t *testing.T) {
	c := validConfig(t)
	wiped, err := credential.FromUserPassword("u", "p")
	if err != nil {
		t.Fatal(err)
	}
	wiped.Wipe()
	for _, tc := range []struct {
		name string
		edit func([]Credential) []Credential
		want []Violation
	}{
		{"missing", func(cs []Credential) []Credential { return cs[:1] }, []Violation{{"tenants[0]", RuleCredentialMissing}}},
		{"none", func([]Credential) []Credential { return nil }, []Violation{
			{"tenants[0]", RuleCredentialMissing}, {"tenants[1]", RuleCredentialMissing}}},
		{"duplicate", func(cs []Credential) []Credential { return append(cs, cs[0]) }, []Violation{
			{"credentials[2].tenant", RuleCredentialDuplicate}}},
		{"unknown tenant", func(cs []Credential) []Credential {
			cs[0].Tenant = "initech"
			return cs
		}, []Violation{{"credentials[0].tenant", RuleCredentialUnknownTenant}, {"tenants[1]", RuleCredentialMissing}}},
		{"other provider", func(cs []Credential) []Credential {
			cs[1].ProviderID = "nats-us"
			return cs
		}, []Violation{{"credentials[1].provider_id", RuleCredentialProvider}}},
		{"other address", func(cs []Credential) []Credential {
			cs[1].Destination = c.Tenants[1].Destination
			return cs
		}, []Violation{{"credentials[1].destination", RuleCredentialDestination}}},
		{"other roots", func(cs []Credential) []Credential {
			cs[0].Destination.RootCAsPEM = pemOf(testCert(t, "nats.test", 7))
			return cs
		}, []Violation{{"credentials[0].destination", RuleCredentialDestination}}},
		{"other pin", func(cs []Credential) []Credential {
			cs[0].Destination.SPKISHA256 = ""
			return cs
		}, []Violation{{"credentials[0].destination", RuleCredentialDestination}}},
		{"other server name", func(cs []Credential) []Credential {
			cs[1].Destination.ServerName = "other.test"
			return cs
		}, []Violation{{"credentials[1].destination", RuleCredentialDestination}}},
		{"no opt-in", func(cs []Credential) []Credential {
			cs[1].Destination.AllowNonPublic = false
			return cs
		}, []Violation{{"credentials[1].destination", RuleCredentialDestination}}},
		{"nil secret", func(cs []Credential) []Credential {
			cs[0].Secret = nil
			return cs
		}, []Violation{{"credentials[0].secret", RuleCredentialSecret}}},
		{"wiped secret", func(cs []Credential) []Credential {
			cs[0].Secret = wiped
			return cs
		}, []Violation{{"credentials[0].secret", RuleCredentialSecret}}},
		{"everything wrong", func(cs []Credential) []Credential {
			cs[0].ProviderID, cs[0].Destination, cs[0].Secret = "x", Destination{}, nil
			return cs
		}, []Violation{
			{"credentials[0].provider_id", RuleCredentialProvider},
			{"credentials[0].destination", RuleCredentialDestination},
			{"credentials[0].secret", RuleCredentialSecret},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MatchCredentials(c, tc.edit(testCredentials(t, c)))
			var ce *CredentialsError
			if !errors.As(err, &ce) {
				t.Fatalf("MatchCredentials error = %v, want a *CredentialsError", err)
			}
			if diff := diffViolations(tc.want, ce.Violations); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if !errors.Is(err, ErrInvalidCredentials) || !errors.Is(err, tc.want[0].Rule) {
				t.Errorf("errors.Is fails for %v", err)
			}
			if got != nil {
				t.Error("credentials returned with an error")
			}
		})
	}
	t.Run("invalid config", func(t *testing.T) {
		bad := configWith(t, func(c *Config) { c.PollIntervalMS = 0 })
		_, err := MatchCredentials(bad, testCredentials(t, c))
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("MatchCredentials error = %v, want ErrInvalidConfig", err)
		}
	})
}

// TestCredentialRedaction checks that no rendering of a Credential shows
// its secret and that it refuses to be marshalled.
func TestCredentialRedaction(t *testing.T) {
	c := validConfig(t)
	const secret = "correct-horse-battery-staple"
	s, err := credential.FromUserPassword("alice-the-user", secret)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeClientCert(t, dir, "acme", certNow.Add(-time.Hour), certNow.Add(time.Hour))
	certPEM, err := os.ReadFile(filepath.Join(dir, "acme.crt"))
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, "acme.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddClientCertificate(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	// Lines of the key's PEM body: none may appear.
	keyLines := strings.Split(string(keyPEM), "\n")[1:3]
	cred := Credential{Tenant: "acme", ProviderID: "nats-eu", Destination: c.Tenants[0].Destination, Secret: s}
	type exported struct{ C Credential }
	type unexported struct{ c Credential }
	var out []string
	for _, v := range []any{cred, &cred, []Credential{cred}, exported{cred}, unexported{cred}, &unexported{cred}, map[string]Credential{"k": cred}} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%p", "%T", "%10v", "%-30s"} {
			out = append(out, fmt.Sprintf(verb, v))
		}
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("m", "cred", cred, "ptr", &cred)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("m", "cred", cred)
	out = append(out, buf.String(), cred.String(), cred.GoString())
	for _, r := range out {
		for _, bad := range append([]string{secret, "alice-the-user", "horse-battery"}, keyLines...) {
			if strings.Contains(r, bad) {
				t.Fatalf("rendering contains a secret: %q", r)
			}
		}
	}
	if want := `trigger.Credential{Tenant:"acme" ProviderID:"nats-eu" Address:127.0.0.1:4222 ServerName:"nats.test" Secret:user_password+certificate/[redacted]}`; cred.String() != want {
		t.Errorf("String() = %q, want %q", cred.String(), want)
	}
	for _, v := range []any{cred, &cred, []Credential{cred}, exported{cred}} {
		if _, err := json.Marshal(v); !errors.Is(err, ErrNotMarshalable) {
			t.Errorf("json.Marshal(%T) error = %v, want ErrNotMarshalable", v, err)
		}
	}
	if _, err := cred.MarshalText(); !errors.Is(err, ErrNotMarshalable) {
		t.Errorf("MarshalText error = %v, want ErrNotMarshalable", err)
	}
}
