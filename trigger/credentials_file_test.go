package trigger

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/latent-systems/latent-nats/credential"
)

// credEntry is one entry of a credentials file as the tests write it.
type credEntry map[string]any

// credEntries returns one token entry per tenant of c, in tenant order,
// with its secret file written to dir ("<tenant>.tok", mode 0600).
func credEntries(t *testing.T, dir string, c Config) []credEntry {
	t.Helper()
	var out []credEntry
	for _, tn := range c.Tenants {
		d := tn.Destination
		dest := map[string]any{"address": d.Address.String(), "server_name": d.ServerName, "root_cas_pem": d.RootCAsPEM}
		if d.AllowNonPublic {
			dest["allow_non_public"] = true
		}
		if d.SPKISHA256 != "" {
			dest["spki_sha256"] = d.SPKISHA256
		}
		file := tn.ID + ".tok"
		writeSecret(t, dir, file, []byte("token-of-"+tn.ID+"-0123456789\n"), 0o600)
		out = append(out, credEntry{"tenant": tn.ID, "provider_id": tn.ProviderID, "destination": dest, "kind": "token", "file": file})
	}
	return out
}

// writeSecret writes b to dir/name with exactly mode.
func writeSecret(t *testing.T, dir, name string, b []byte, mode fs.FileMode) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // WriteFile's mode is masked by umask
		t.Fatal(err)
	}
}

// writeCredentialsFile writes entries as dir/credentials.json and returns
// its path.
func writeCredentialsFile(t *testing.T, dir string, entries []credEntry) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"credentials": entries})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "credentials.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// credsFile returns a decorated .creds file of a fresh user whose JWT
// expires at exp (zero: never).
func credsFile(t *testing.T, exp time.Time) []byte {
	t.Helper()
	akp, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	ukp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	upub, err := ukp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	uc := jwt.NewUserClaims(upub)
	if !exp.IsZero() {
		uc.Expires = exp.Unix()
	}
	tok, err := uc.Encode(akp)
	if err != nil {
		t.Fatal(err)
	}
	seed, err := ukp.Seed()
	if err != nil {
		t.Fatal(err)
	}
	b, err := jwt.FormatUserConfig(tok, seed)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLoadCredentials: a valid credentials file gives one credential per
// tenant, in tenant order, with each kind's secret read (issue 20: the
// loader was validate's alone).
func TestLoadCredentials(t *testing.T) {
	dir := t.TempDir()
	c := validConfig(t)
	entries := credEntries(t, dir, c)
	seed, err := mustUser(t).Seed()
	if err != nil {
		t.Fatal(err)
	}
	writeSecret(t, dir, "acme.nk", append(seed, '\n'), 0o600)
	entries[0]["kind"], entries[0]["file"] = "nkey", "acme.nk"
	entries[1]["kind"], entries[1]["user"] = "user_password", "globex-runtime"
	// File order is not tenant order.
	path := writeCredentialsFile(t, dir, []credEntry{entries[1], entries[0]})

	got, err := LoadCredentials(path, c, time.Now())
	if err != nil {
		t.Fatalf("LoadCredentials: %v", err)
	}
	type brief struct {
		Tenant string
		Kind   credential.Kind
	}
	var briefs []brief
	for _, cr := range got {
		briefs = append(briefs, brief{cr.Tenant, cr.Secret.Kind()})
		cr.Secret.Wipe()
	}
	want := []brief{{"acme", credential.KindNKey}, {"globex", credential.KindUserPassword}}
	if diff := cmp.Diff(want, briefs); diff != "" {
		t.Errorf("credentials (-want +got):\n%s", diff)
	}
	if err := CheckCredentialsFile(path, time.Now()); err != nil {
		t.Errorf("CheckCredentialsFile: %v", err)
	}
}

// rewriteEntry sets key of entry i of dir/credentials.json to v.
func rewriteEntry(t *testing.T, dir string, i int, key string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "credentials.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Credentials []credEntry }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc.Credentials[i][key] = v
	writeCredentialsFile(t, dir, doc.Credentials)
}

func mustUser(t *testing.T) nkeys.KeyPair {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

// TestLoadCredentialsRefuses lists what LoadCredentials refuses: every
// violation of the file, the secret files and the matching at once, an
// entry broken on its own not matched again, the cause behind each, and
// an invalid configuration before any file is read.
func TestLoadCredentialsRefuses(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		edit  func(t *testing.T, dir string, es []credEntry) []credEntry
		cfg   func(*Config)
		want  []Violation
		cause error
	}{
		{name: "broken entry and a missing tenant",
			edit: func(t *testing.T, dir string, es []credEntry) []credEntry {
				es[0]["file"], es[0]["provider_id"] = "absent.tok", "nats-us"
				return es
			},
			cfg:   func(*Config) {},
			want:  []Violation{{"credentials[0].file", RuleUnreadable}},
			cause: fs.ErrNotExist},
		{name: "expired creds",
			edit: func(t *testing.T, dir string, es []credEntry) []credEntry {
				writeSecret(t, dir, "acme.creds", credsFile(t, now.Add(-time.Hour)), 0o600)
				es[0]["kind"], es[0]["file"] = "creds", "acme.creds"
				return es
			},
			cfg:   func(*Config) {},
			want:  []Violation{{"credentials[0].file", RuleSecretExpired}},
			cause: credential.ErrExpired},
		{name: "empty list",
			edit:  func(*testing.T, string, []credEntry) []credEntry { return []credEntry{} },
			cfg:   func(*Config) {},
			want:  []Violation{{"credentials", RuleCount}, {"tenants[0]", RuleCredentialMissing}, {"tenants[1]", RuleCredentialMissing}},
			cause: ErrInvalidCredentials},
		{name: "secret file shared",
			edit: func(t *testing.T, dir string, es []credEntry) []credEntry {
				writeSecret(t, dir, "globex.tok", []byte("token-of-globex-0123456789"), 0o640)
				return es
			},
			cfg:   func(*Config) {},
			want:  []Violation{{"credentials[1].file", RuleSecretShared}},
			cause: RuleSecretShared},
		{name: "invalid configuration",
			edit:  func(_ *testing.T, _ string, es []credEntry) []credEntry { return es },
			cfg:   func(c *Config) { c.PollIntervalMS = 0 },
			want:  []Violation{{"poll_interval_ms", RuleRange}},
			cause: ErrInvalidConfig},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := validConfig(t)
			path := writeCredentialsFile(t, dir, tc.edit(t, dir, credEntries(t, dir, c)))
			tc.cfg(&c)
			got, err := LoadCredentials(path, c, now)
			if got != nil {
				t.Errorf("credentials returned with %v", err)
			}
			if diff := diffViolations(tc.want, violationsOrCredentialsOf(err)); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
			if !errors.Is(err, tc.cause) {
				t.Errorf("error %v does not match %v", err, tc.cause)
			}
		})
	}
}

// TestCredentialsFileLimits checks each bound of the credentials file at
// the limit and one past it.
func TestCredentialsFileLimits(t *testing.T) {
	pad := func(b []byte, n int) []byte { return append(b, bytes.Repeat([]byte(" "), n-len(b))...) }
	// nested returns a document whose one entry reaches depth d: the
	// document is at depth 0, the list at 1 and its entry at 2.
	nested := func(d int) []byte {
		n := d - 2
		return []byte(`{"credentials":[` + strings.Repeat("[", n+1) + strings.Repeat("]", n+1) + `]}`)
	}
	tests := []struct {
		name string
		edit func(t *testing.T, dir, path string)
		want []Violation
	}{
		{"file at MaxCredentialsFileBytes", func(t *testing.T, _, path string) {
			b, _ := os.ReadFile(path)
			writeSecret(t, filepath.Dir(path), "credentials.json", pad(b, MaxCredentialsFileBytes), 0o644)
		}, nil},
		{"file past MaxCredentialsFileBytes", func(t *testing.T, _, path string) {
			b, _ := os.ReadFile(path)
			writeSecret(t, filepath.Dir(path), "credentials.json", pad(b, MaxCredentialsFileBytes+1), 0o644)
		}, []Violation{{"", RuleTooLarge}}},
		{"secret at MaxSecretFileBytes", func(t *testing.T, dir, _ string) {
			writeSecret(t, dir, "acme.tok", pad(credsFile(t, time.Time{}), MaxSecretFileBytes), 0o600)
			rewriteEntry(t, dir, 0, "kind", "creds")
		}, nil},
		{"secret past MaxSecretFileBytes", func(t *testing.T, dir, _ string) {
			writeSecret(t, dir, "acme.tok", pad(credsFile(t, time.Time{}), MaxSecretFileBytes+1), 0o600)
			rewriteEntry(t, dir, 0, "kind", "creds")
		}, []Violation{{"credentials[0].file", RuleTooLarge}}},
		{"at maxCredentialsDepth", func(t *testing.T, _, path string) {
			writeSecret(t, filepath.Dir(path), "credentials.json", nested(maxCredentialsDepth), 0o644)
		}, []Violation{{"credentials[0]", RuleWrongType}}},
		{"past maxCredentialsDepth", func(t *testing.T, _, path string) {
			writeSecret(t, filepath.Dir(path), "credentials.json", nested(maxCredentialsDepth+1), 0o644)
		}, []Violation{{keyCredentials + strings.Repeat("[0]", maxCredentialsDepth), RuleSyntax}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := validConfig(t)
			path := writeCredentialsFile(t, dir, credEntries(t, dir, c))
			tc.edit(t, dir, path)
			if diff := diffViolations(tc.want, violationsOrCredentialsOf(CheckCredentialsFile(path, time.Now()))); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}
