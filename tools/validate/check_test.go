package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/trigger"
)

func TestCheckValid(t *testing.T) {
	f := newFixture(t)
	res := Check(Input{ConfigPath: f.cfgPath, CredentialsPath: f.credsPath, Now: nowFunc})
	defer res.Wipe()
	if !res.OK() {
		t.Fatalf("violations: %v", res.Violations)
	}
	if err := res.Err(); err != nil {
		t.Errorf("Err() = %v, want nil", err)
	}
	if len(res.Credentials) != len(f.cfg.Tenants) {
		t.Fatalf("got %d credentials, want %d", len(res.Credentials), len(f.cfg.Tenants))
	}
	for i, c := range res.Credentials {
		if c.Tenant != f.cfg.Tenants[i].ID || c.Secret.Kind() != credential.KindCreds || c.Secret.Wiped() {
			t.Errorf("credential %d = %v, want tenant %q with a usable creds secret", i, c, f.cfg.Tenants[i].ID)
		}
	}
	if !bytes.Equal(res.Canonical, canonical(t, f.cfg)) {
		t.Errorf("Canonical differs from the configuration's encoding")
	}
	secrets := res.Credentials
	res.Wipe()
	for i, c := range secrets {
		if !c.Secret.Wiped() {
			t.Errorf("credential %d not wiped by Wipe", i)
		}
	}
}

func TestCheckEveryKind(t *testing.T) {
	f := newFixture(t)
	writeFile(t, f.dir, "acme.seed", append(userSeed(t), '\n'), 0o600)
	writeFile(t, f.dir, "globex.pass", []byte("s3cret\r\n"), 0o600)
	f.doc.Credentials[0].Kind, f.doc.Credentials[0].File = "nkey", "acme.seed"
	f.doc.Credentials[1].Kind, f.doc.Credentials[1].File, f.doc.Credentials[1].User = "user_password", "globex.pass", "globex-user"
	f.writeCreds(t)
	res := Check(Input{ConfigPath: f.cfgPath, CredentialsPath: f.credsPath, Now: nowFunc})
	defer res.Wipe()
	if !res.OK() {
		t.Fatalf("violations: %v", res.Violations)
	}
	if got := []credential.Kind{res.Credentials[0].Secret.Kind(), res.Credentials[1].Secret.Kind()}; got[0] != credential.KindNKey || got[1] != credential.KindUserPassword {
		t.Errorf("kinds = %v, want nkey and user_password", got)
	}

	writeFile(t, f.dir, "globex.token", []byte("tok-123\n"), 0o600)
	f.doc.Credentials[1].Kind, f.doc.Credentials[1].File, f.doc.Credentials[1].User = "token", "globex.token", ""
	f.writeCreds(t)
	res2 := Check(Input{ConfigPath: f.cfgPath, CredentialsPath: f.credsPath, Now: nowFunc})
	defer res2.Wipe()
	if !res2.OK() || res2.Credentials[1].Secret.Kind() != credential.KindToken {
		t.Fatalf("token kind: violations %v", res2.Violations)
	}
}

// TestCheckClientCertificates: a client certificate beside a creds file,
// and one alone (kind certificate), pass and reach the secrets.
func TestCheckClientCertificates(t *testing.T) {
	f := newFixture(t)
	writeClientCert(t, f.dir, "acme", testNow.Add(-time.Hour), testNow.Add(time.Hour), &f.doc.Credentials[0])
	writeClientCert(t, f.dir, "globex", testNow.Add(-time.Hour), testNow.Add(time.Hour), &f.doc.Credentials[1])
	f.doc.Credentials[1].Kind, f.doc.Credentials[1].File = "certificate", ""
	f.writeCreds(t)
	res := Check(Input{ConfigPath: f.cfgPath, CredentialsPath: f.credsPath, Now: nowFunc})
	defer res.Wipe()
	if !res.OK() {
		t.Fatalf("violations: %v", res.Violations)
	}
	for i, want := range []credential.Kind{credential.KindCreds, credential.KindCertificate} {
		if s := res.Credentials[i].Secret; s.Kind() != want || !s.HasClientCertificate() {
			t.Errorf("credential %d: kind %v, certificate %v; want %v with one", i, s.Kind(), s.HasClientCertificate(), want)
		}
	}
}

func TestCheckConfigOnly(t *testing.T) {
	f := newFixture(t)
	res := Check(Input{ConfigPath: f.cfgPath})
	if !res.OK() || len(res.Config.Bindings) != 3 || res.Credentials != nil {
		t.Fatalf("config only: ok %v, %d bindings, credentials %v", res.OK(), len(res.Config.Bindings), res.Credentials)
	}
}

// violationCase edits a valid fixture and expects exactly these violations.
type violationCase struct {
	name        string
	anySpelling bool
	edit        func(t *testing.T, f *fixture)
	want        []brief
}

// replaceConfig rewrites the configuration file with old replaced by new
// (once, which must be found).
func replaceConfig(t *testing.T, f *fixture, old, new string) {
	t.Helper()
	b := canonical(t, f.cfg)
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%q not in the configuration", old)
	}
	writeFile(t, f.dir, "trigger.json", bytes.Replace(b, []byte(old), []byte(new), 1), 0o644)
}

// replaceCreds rewrites the credentials file with old replaced by new.
func replaceCreds(t *testing.T, f *fixture, old, new string) {
	t.Helper()
	b, err := json.Marshal(f.doc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%q not in the credentials file", old)
	}
	writeFile(t, f.dir, "credentials.json", bytes.Replace(b, []byte(old), []byte(new), 1), 0o644)
}

func violationCases() []violationCase {
	const (
		cfg   = SourceConfig
		creds = SourceCredentials
	)
	return []violationCase{
		// The configuration.
		{name: "config missing", edit: func(t *testing.T, f *fixture) { f.cfgPath += ".absent" },
			want: []brief{{cfg, "", "unreadable"}}},
		{name: "config syntax", edit: func(t *testing.T, f *fixture) { writeFile(t, f.dir, "trigger.json", []byte(`{"profile":`), 0o644) },
			want: []brief{{cfg, "profile", "syntax"}}},
		{name: "config not canonical", edit: func(t *testing.T, f *fixture) {
			writeFile(t, f.dir, "trigger.json", append(canonical(t, f.cfg), '\n'), 0o644)
		}, want: []brief{{cfg, "", "not_canonical"}}},
		{name: "config unknown field and out of range", edit: func(t *testing.T, f *fixture) {
			replaceConfig(t, f, `{"profile"`, `{"color":1,"profile"`)
			b, _ := readFileForTest(f.cfgPath)
			writeFile(t, f.dir, "trigger.json", bytes.Replace(b, []byte(`"poll_interval_ms":100`), []byte(`"poll_interval_ms":5`), 1), 0o644)
		}, want: []brief{{cfg, "color", "unknown_field"}, {cfg, "poll_interval_ms", "out_of_range"}}},
		{name: "config ack wait too short", edit: func(t *testing.T, f *fixture) {
			replaceConfig(t, f, `"ack_wait_ms":30000,"nak_delay_ms":500}]`, `"ack_wait_ms":2999,"nak_delay_ms":500}]`)
		}, want: []brief{{cfg, "bindings[2].ack_wait_ms", "ack_wait_too_short"}}},
		{name: "config invalid, credentials not matched", edit: func(t *testing.T, f *fixture) {
			replaceConfig(t, f, `"stream":"EVENTS"`, `"stream":"EV.ENTS"`)
		}, want: []brief{{cfg, "bindings[2].stream", "invalid_asset_name"}}},

		// The credentials file itself.
		{name: "credentials missing", edit: func(t *testing.T, f *fixture) { f.credsPath += ".absent" },
			want: []brief{{creds, "", "unreadable"}}},
		{name: "credentials syntax", edit: func(t *testing.T, f *fixture) {
			writeFile(t, f.dir, "credentials.json", []byte(`{"credentials":[}`), 0o644)
		},
			want: []brief{{creds, "credentials[0]", "syntax"}}},
		{name: "credentials trailing data", edit: func(t *testing.T, f *fixture) {
			writeFile(t, f.dir, "credentials.json", []byte(`{"credentials":[]} {}`), 0o644)
		},
			want: []brief{{creds, "", "syntax"}}},
		{name: "credentials with invalid UTF-8", edit: func(t *testing.T, f *fixture) {
			// A file path with a byte that is not UTF-8 would be read as
			// another path once replaced with U+FFFD: refused instead.
			replaceCreds(t, f, `"tenant":"acme"`, "\"tenant\":\"ac\xffme\"")
		},
			want: []brief{{creds, "credentials[0].tenant", "invalid_utf8"}}},
		{name: "credentials not an object", edit: func(t *testing.T, f *fixture) { writeFile(t, f.dir, "credentials.json", []byte(`[]`), 0o644) },
			want: []brief{{creds, "", "wrong_type"}}},
		{name: "credentials empty", edit: func(t *testing.T, f *fixture) {
			writeFile(t, f.dir, "credentials.json", []byte(`{"credentials":[]}`), 0o644)
		},
			want: []brief{{creds, "credentials", "count_out_of_range"}, {cfg, "tenants[0]", "credential_missing"}, {cfg, "tenants[1]", "credential_missing"}}},
		{name: "unknown, duplicate, missing keys and wrong types", edit: func(t *testing.T, f *fixture) {
			replaceCreds(t, f, `{"tenant":"acme",`, `{"tenant":"acme","tenant":"x","extra":true,`)
			b, _ := readFileForTest(f.credsPath)
			b = bytes.Replace(b, []byte(`"provider_id":"nats-us",`), []byte(`"provider_id":7,`), 1)
			b = bytes.Replace(b, []byte(`"server_name":"broker.latent.test",`), []byte(``), 1)
			writeFile(t, f.dir, "credentials.json", b, 0o644)
		}, want: []brief{
			{creds, "credentials[0].tenant", "duplicate_key"},
			{creds, "credentials[0].extra", "unknown_field"},
			{creds, "credentials[0].destination.server_name", "missing_field"},
			{creds, "credentials[1].provider_id", "wrong_type"},
		}},
		{name: "unknown kind", edit: func(t *testing.T, f *fixture) {
			f.doc.Credentials[1].Kind = "jwt"
			f.writeCreds(t)
		}, want: []brief{{creds, "credentials[1].kind", "unknown_kind"}}},
		{name: "user with creds kind, no user with user_password", edit: func(t *testing.T, f *fixture) {
			f.doc.Credentials[0].User = "someone"
			f.doc.Credentials[1].Kind = "user_password"
			f.writeCreds(t)
		}, want: []brief{{creds, "credentials[0].user", "unknown_field"}, {creds, "credentials[1].user", "missing_field"}}},
		{name: "invalid address", edit: func(t *testing.T, f *fixture) {
			replaceCreds(t, f, `"127.0.0.1:4223"`, `"[::1]:4223"`)
		}, want: []brief{{creds, "credentials[1].destination.address", "invalid_address"}}},

		// The secret files.
		{name: "secret file missing", edit: func(t *testing.T, f *fixture) {
			f.doc.Credentials[0].File = "absent.creds"
			f.writeCreds(t)
		}, want: []brief{{creds, "credentials[0].file", "unreadable"}}},
		{name: "secret file is a directory", edit: func(t *testing.T, f *fixture) {
			f.doc.Credentials[0].File = "."
			f.writeCreds(t)
		}, want: []brief{{creds, "credentials[0].file", "unreadable"}}},
		{name: "secret file shared", edit: func(t *testing.T, f *fixture) {
			writeFile(t, f.dir, "acme.creds", credsFile(t, time.Time{}), 0o640)
		}, want: []brief{{creds, "credentials[0].file", "secret_file_shared"}}},
		{name: "secret malformed", edit: func(t *testing.T, f *fixture) {
			writeFile(t, f.dir, "globex.creds", []byte("not a creds file\n"), 0o600)
		}, want: []brief{{creds, "credentials[1].file", "secret_malformed"}}},
		{name: "nkey file holding a creds file", edit: func(t *testing.T, f *fixture) {
			f.doc.Credentials[1].Kind = "nkey"
			f.writeCreds(t)
		}, want: []brief{{creds, "credentials[1].file", "secret_malformed"}}},
		{name: "secret expired", edit: func(t *testing.T, f *fixture) {
			writeFile(t, f.dir, "acme.creds", credsFile(t, expiredAt), 0o600)
		}, want: []brief{{creds, "credentials[0].file", "secret_expired"}}},

		// The client certificate files.
		{name: "client certificate expired", edit: func(t *testing.T, f *fixture) {
			writeClientCert(t, f.dir, "acme", testNow.Add(-2*time.Hour), testNow.Add(-time.Hour), &f.doc.Credentials[0])
			f.writeCreds(t)
		}, want: []brief{{creds, "credentials[0].client_cert", "client_cert_not_valid"}}},
		{name: "client key shared", edit: func(t *testing.T, f *fixture) {
			writeClientCert(t, f.dir, "acme", testNow.Add(-time.Hour), testNow.Add(time.Hour), &f.doc.Credentials[0])
			if err := os.Chmod(filepath.Join(f.dir, "acme.key"), 0o640); err != nil {
				t.Fatal(err)
			}
			f.writeCreds(t)
		}, want: []brief{{creds, "credentials[0].client_key", "secret_file_shared"}}},
		{name: "client key of another certificate", edit: func(t *testing.T, f *fixture) {
			writeClientCert(t, f.dir, "acme", testNow.Add(-time.Hour), testNow.Add(time.Hour), &f.doc.Credentials[0])
			writeClientCert(t, f.dir, "other", testNow.Add(-time.Hour), testNow.Add(time.Hour), &f.doc.Credentials[1])
			f.doc.Credentials[0].ClientKey = "other.key"
			f.doc.Credentials[1].ClientCert, f.doc.Credentials[1].ClientKey = "", ""
			f.writeCreds(t)
		}, want: []brief{{creds, "credentials[0].client_key", "client_key_mismatch"}}},
		{name: "client certificate not pem", edit: func(t *testing.T, f *fixture) {
			writeClientCert(t, f.dir, "acme", testNow.Add(-time.Hour), testNow.Add(time.Hour), &f.doc.Credentials[0])
			writeFile(t, f.dir, "acme.crt", []byte("not a certificate\n"), 0o644)
			f.writeCreds(t)
		}, want: []brief{{creds, "credentials[0].client_cert", "secret_malformed"}}},

		// Matching credentials to tenants.
		{name: "unknown tenant", edit: func(t *testing.T, f *fixture) {
			f.doc.Credentials[1].Tenant = "initech"
			f.writeCreds(t)
		}, want: []brief{{creds, "credentials[1].tenant", "credential_unknown_tenant"}, {cfg, "tenants[1]", "credential_missing"}}},
		{name: "provider and destination mismatch", edit: func(t *testing.T, f *fixture) {
			f.doc.Credentials[0].ProviderID = "nats-us"
			f.doc.Credentials[1].Destination.ServerName = "other.latent.test"
			f.writeCreds(t)
		}, want: []brief{{creds, "credentials[0].provider_id", "credential_provider_mismatch"}, {creds, "credentials[1].destination", "credential_destination_mismatch"}}},
		{name: "spki pin differs", edit: func(t *testing.T, f *fixture) {
			f.doc.Credentials[1].Destination.SPKISHA256 = strings.Repeat("ab", 32)
			f.writeCreds(t)
		}, want: []brief{{creds, "credentials[1].destination", "credential_destination_mismatch"}}},
		{name: "duplicate tenant", edit: func(t *testing.T, f *fixture) {
			f.doc.Credentials = append(f.doc.Credentials, f.doc.Credentials[0])
			f.writeCreds(t)
		}, want: []brief{{creds, "credentials[2].tenant", "credential_duplicate"}}},
		{name: "tenant without credential", edit: func(t *testing.T, f *fixture) {
			f.doc.Credentials = f.doc.Credentials[:1]
			f.writeCreds(t)
		}, want: []brief{{cfg, "tenants[1]", "credential_missing"}}},
		{name: "a broken entry is not reported twice", edit: func(t *testing.T, f *fixture) {
			f.doc.Credentials[0].File = "absent.creds"
			f.doc.Credentials[0].ProviderID = "nats-us"
			f.writeCreds(t)
		}, want: []brief{{creds, "credentials[0].file", "unreadable"}}},
	}
}

func readFileForTest(path string) ([]byte, error) { return os.ReadFile(path) }

func TestCheckViolations(t *testing.T) {
	for _, tc := range violationCases() {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.edit(t, f)
			res := Check(Input{ConfigPath: f.cfgPath, CredentialsPath: f.credsPath, AnySpelling: tc.anySpelling, Now: nowFunc})
			if diff := diffBriefs(tc.want, briefs(res.Violations)); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
			if res.Credentials != nil {
				t.Errorf("Credentials returned despite violations")
			}
			if !errors.Is(res.Err(), ErrInvalid) {
				t.Errorf("Err() = %v, want ErrInvalid", res.Err())
			}
		})
	}
}

// TestCheckViolationSentinels pins the sentinel each kind of violation
// carries.
func TestCheckViolationSentinels(t *testing.T) {
	f := newFixture(t)
	writeFile(t, f.dir, "acme.creds", credsFile(t, expiredAt), 0o600)
	writeFile(t, f.dir, "globex.creds", []byte("junk"), 0o600)
	replaceConfig(t, f, `"poll_interval_ms":100`, `"poll_interval_ms":5`)
	res := Check(Input{ConfigPath: f.cfgPath, CredentialsPath: f.credsPath, Now: nowFunc})
	tests := []struct {
		name string
		v    int
		want []error
	}{
		{"config range", 0, []error{trigger.RuleRange}},
		{"expired", 1, []error{trigger.RuleSecretExpired, credential.ErrExpired}},
		{"malformed", 2, []error{trigger.RuleSecretMalformed, credential.ErrMalformed}},
	}
	if len(res.Violations) != len(tests) {
		t.Fatalf("violations: %v", res.Violations)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := res.Violations[tc.v]
			got := []error{v.Err, v.Cause}
			for i, want := range tc.want {
				if !errors.Is(got[i], want) {
					t.Errorf("error %d = %v, want %v", i, got[i], want)
				}
			}
		})
	}
	if err := res.Err(); !errors.Is(err, trigger.RuleRange) || !errors.Is(err, trigger.RuleSecretExpired) || !errors.Is(err, trigger.RuleSecretMalformed) {
		t.Errorf("Err() = %v, want every rule's sentinel", err)
	}
}

func TestCheckAnySpelling(t *testing.T) {
	f := newFixture(t)
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, canonical(t, f.cfg), "", "\t"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, f.dir, "trigger.json", pretty.Bytes(), 0o644)
	strict := Check(Input{ConfigPath: f.cfgPath})
	if diff := diffBriefs([]brief{{SourceConfig, "", "not_canonical"}}, briefs(strict.Violations)); diff != "" {
		t.Errorf("strict (-want +got):\n%s", diff)
	}
	loose := Check(Input{ConfigPath: f.cfgPath, AnySpelling: true})
	if !loose.OK() || !bytes.Equal(loose.Canonical, canonical(t, f.cfg)) {
		t.Errorf("any spelling: violations %v, canonical equal %v", loose.Violations, bytes.Equal(loose.Canonical, canonical(t, f.cfg)))
	}
}

// TestCheckFileLimits checks each file bound at the limit and one past it.
func TestCheckFileLimits(t *testing.T) {
	pad := func(b []byte, n int) []byte { return append(b, bytes.Repeat([]byte(" "), n-len(b))...) }
	tests := []struct {
		name string
		edit func(t *testing.T, f *fixture)
		want []brief
	}{
		{"config at MaxConfigBytes", func(t *testing.T, f *fixture) {
			writeFile(t, f.dir, "trigger.json", pad(canonical(t, f.cfg), trigger.MaxConfigBytes), 0o644)
		}, nil},
		{"config past MaxConfigBytes", func(t *testing.T, f *fixture) {
			writeFile(t, f.dir, "trigger.json", pad(canonical(t, f.cfg), trigger.MaxConfigBytes+1), 0o644)
		}, []brief{{SourceConfig, "", "too_large"}}},
		{"credentials at trigger.MaxCredentialsFileBytes", func(t *testing.T, f *fixture) {
			b, _ := readFileForTest(f.credsPath)
			writeFile(t, f.dir, "credentials.json", pad(b, trigger.MaxCredentialsFileBytes), 0o644)
		}, nil},
		{"credentials past trigger.MaxCredentialsFileBytes", func(t *testing.T, f *fixture) {
			b, _ := readFileForTest(f.credsPath)
			writeFile(t, f.dir, "credentials.json", pad(b, trigger.MaxCredentialsFileBytes+1), 0o644)
		}, []brief{{SourceCredentials, "", "too_large"}}},
		{"secret at trigger.MaxSecretFileBytes", func(t *testing.T, f *fixture) {
			writeFile(t, f.dir, "acme.creds", pad(credsFile(t, time.Time{}), trigger.MaxSecretFileBytes), 0o600)
		}, nil},
		{"secret past trigger.MaxSecretFileBytes", func(t *testing.T, f *fixture) {
			writeFile(t, f.dir, "acme.creds", pad(credsFile(t, time.Time{}), trigger.MaxSecretFileBytes+1), 0o600)
		}, []brief{{SourceCredentials, "credentials[0].file", "too_large"}}},
		{"trigger.MaxTenants entries", func(t *testing.T, f *fixture) {
			for len(f.doc.Credentials) < trigger.MaxTenants {
				e := f.doc.Credentials[0]
				e.Tenant = "t" + strings.Repeat("x", len(f.doc.Credentials))
				f.doc.Credentials = append(f.doc.Credentials, e)
			}
			f.writeCreds(t)
		}, []brief{
			{SourceCredentials, "credentials[2].tenant", "credential_unknown_tenant"},
			{SourceCredentials, "credentials[3].tenant", "credential_unknown_tenant"},
			{SourceCredentials, "credentials[4].tenant", "credential_unknown_tenant"},
			{SourceCredentials, "credentials[5].tenant", "credential_unknown_tenant"},
			{SourceCredentials, "credentials[6].tenant", "credential_unknown_tenant"},
			{SourceCredentials, "credentials[7].tenant", "credential_unknown_tenant"},
		}},
		{"one entry past trigger.MaxTenants", func(t *testing.T, f *fixture) {
			for len(f.doc.Credentials) < trigger.MaxTenants+1 {
				e := f.doc.Credentials[0]
				e.Tenant = "t" + strings.Repeat("x", len(f.doc.Credentials))
				f.doc.Credentials = append(f.doc.Credentials, e)
			}
			f.writeCreds(t)
		}, []brief{
			{SourceCredentials, "credentials", "count_out_of_range"},
			{SourceCredentials, "credentials[2].tenant", "credential_unknown_tenant"},
			{SourceCredentials, "credentials[3].tenant", "credential_unknown_tenant"},
			{SourceCredentials, "credentials[4].tenant", "credential_unknown_tenant"},
			{SourceCredentials, "credentials[5].tenant", "credential_unknown_tenant"},
			{SourceCredentials, "credentials[6].tenant", "credential_unknown_tenant"},
			{SourceCredentials, "credentials[7].tenant", "credential_unknown_tenant"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.edit(t, f)
			res := Check(Input{ConfigPath: f.cfgPath, CredentialsPath: f.credsPath, AnySpelling: true, Now: nowFunc})
			defer res.Wipe()
			if diff := diffBriefs(tc.want, briefs(res.Violations)); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnums(t *testing.T) {
	for _, tc := range []struct {
		s    Source
		want string
	}{{SourceConfig, "config"}, {SourceCredentials, "credentials"}, {0, "Source(0)"}} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("Source(%d).String() = %q, want %q", tc.s, got, tc.want)
		}
	}
}
