package trigger

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/testpki"
)

// certNow is when the client certificate tests load: inside the window of
// writeClientCert's certificates.
var certNow = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// writeClientCert writes a client certificate of a fresh CA, valid from
// from to to, as dir/<name>.crt (0644) and its key as dir/<name>.key
// (0600).
func writeClientCert(t *testing.T, dir, name string, from, to time.Time) {
	t.Helper()
	ca, err := testpki.NewCA("trigger test CA", from.Add(-time.Hour), to.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.IssueClient(name, from, to)
	if err != nil {
		t.Fatal(err)
	}
	writeSecret(t, dir, name+".crt", certPEM, 0o644)
	writeSecret(t, dir, name+".key", keyPEM, 0o600)
}

// withCert names dir/<name>.crt and .key in entry e.
func withCert(e credEntry, name string) {
	e["client_cert"], e["client_key"] = name+".crt", name+".key"
}

// TestLoadClientCertificates: a certificate beside a token, and a
// certificate alone (kind "certificate"), are loaded into their secrets.
func TestLoadClientCertificates(t *testing.T) {
	dir := t.TempDir()
	c := validConfig(t)
	entries := credEntries(t, dir, c)
	writeClientCert(t, dir, "acme", certNow.Add(-time.Hour), certNow.Add(time.Hour))
	writeClientCert(t, dir, "globex", certNow.Add(-time.Hour), certNow.Add(time.Hour))
	withCert(entries[0], "acme")
	withCert(entries[1], "globex")
	entries[1]["kind"] = "certificate"
	delete(entries[1], "file")
	path := writeCredentialsFile(t, dir, entries)

	got, err := LoadCredentials(path, c, certNow)
	if err != nil {
		t.Fatalf("LoadCredentials: %v", err)
	}
	type brief struct {
		Tenant string
		Kind   credential.Kind
		Cert   bool
	}
	var briefs []brief
	for _, cr := range got {
		briefs = append(briefs, brief{cr.Tenant, cr.Secret.Kind(), cr.Secret.HasClientCertificate()})
		cr.Secret.Wipe()
	}
	want := []brief{{"acme", credential.KindToken, true}, {"globex", credential.KindCertificate, true}}
	if diff := cmp.Diff(want, briefs); diff != "" {
		t.Errorf("credentials (-want +got):\n%s", diff)
	}
	if err := CheckCredentialsFile(path, certNow); err != nil {
		t.Errorf("CheckCredentialsFile: %v", err)
	}
}

// TestLoadClientCertificatesRefuses lists what the client certificate
// keys refuse, each with its path, rule and cause, at the bounds of the
// two files and one past them.
func TestLoadClientCertificatesRefuses(t *testing.T) {
	pad := func(t *testing.T, dir, file string, n int) {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		writeSecret(t, dir, file, append(bytes.Repeat([]byte("\n"), n-len(b)), b...), 0o600)
	}
	tests := []struct {
		name  string
		edit  func(t *testing.T, dir string, e credEntry)
		want  []Violation
		cause error
	}{
		{"chain at its bound", func(t *testing.T, dir string, e credEntry) {
			pad(t, dir, "acme.crt", credential.MaxCertChainBytes)
		}, nil, nil},
		{"chain past its bound", func(t *testing.T, dir string, e credEntry) {
			pad(t, dir, "acme.crt", credential.MaxCertChainBytes+1)
		}, []Violation{{"credentials[0].client_cert", RuleTooLarge}}, RuleTooLarge},
		{"key at its bound", func(t *testing.T, dir string, e credEntry) {
			pad(t, dir, "acme.key", credential.MaxClientKeyBytes)
		}, nil, nil},
		{"key past its bound", func(t *testing.T, dir string, e credEntry) {
			pad(t, dir, "acme.key", credential.MaxClientKeyBytes+1)
		}, []Violation{{"credentials[0].client_key", RuleTooLarge}}, RuleTooLarge},
		{"key readable by others", func(t *testing.T, dir string, e credEntry) {
			if err := os.Chmod(filepath.Join(dir, "acme.key"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []Violation{{"credentials[0].client_key", RuleSecretShared}}, RuleSecretShared},
		{"key of another certificate", func(t *testing.T, dir string, e credEntry) {
			writeClientCert(t, dir, "other", certNow.Add(-time.Hour), certNow.Add(time.Hour))
			e["client_key"] = "other.key"
		}, []Violation{{"credentials[0].client_key", RuleClientCertKey}}, credential.ErrCertificateKeyMismatch},
		{"key not pem", func(t *testing.T, dir string, e credEntry) {
			writeSecret(t, dir, "acme.key", []byte("not a key"), 0o600)
		}, []Violation{{"credentials[0].client_cert", RuleSecretMalformed}}, credential.ErrMalformed},
		{"certificate absent", func(t *testing.T, dir string, e credEntry) {
			e["client_cert"] = "absent.crt"
		}, []Violation{{"credentials[0].client_cert", RuleUnreadable}}, os.ErrNotExist},
		{"expired", func(t *testing.T, dir string, e credEntry) {
			writeClientCert(t, dir, "acme", certNow.Add(-2*time.Hour), certNow.Add(-time.Hour))
		}, []Violation{{"credentials[0].client_cert", RuleClientCertValidity}}, credential.ErrCertificateExpired},
		{"not yet valid", func(t *testing.T, dir string, e credEntry) {
			writeClientCert(t, dir, "acme", certNow.Add(time.Hour), certNow.Add(2*time.Hour))
		}, []Violation{{"credentials[0].client_cert", RuleClientCertValidity}}, credential.ErrCertificateNotYetValid},
		{"certificate without key", func(t *testing.T, dir string, e credEntry) {
			delete(e, "client_key")
		}, []Violation{{"credentials[0].client_key", RuleMissingField}}, RuleMissingField},
		{"key without certificate", func(t *testing.T, dir string, e credEntry) {
			delete(e, "client_cert")
		}, []Violation{{"credentials[0].client_cert", RuleMissingField}}, RuleMissingField},
		{"certificate kind with a file", func(t *testing.T, dir string, e credEntry) {
			e["kind"] = "certificate"
		}, []Violation{{"credentials[0].file", RuleUnknownField}}, RuleUnknownField},
		{"certificate kind without a certificate", func(t *testing.T, dir string, e credEntry) {
			e["kind"] = "certificate"
			delete(e, "file")
			delete(e, "client_cert")
			delete(e, "client_key")
		}, []Violation{{"credentials[0].client_cert", RuleMissingField}, {"credentials[0].client_key", RuleMissingField}}, RuleMissingField},
		{"token kind without a file", func(t *testing.T, dir string, e credEntry) {
			delete(e, "file")
		}, []Violation{{"credentials[0].file", RuleMissingField}}, RuleMissingField},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := validConfig(t)
			es := credEntries(t, dir, c)
			writeClientCert(t, dir, "acme", certNow.Add(-time.Hour), certNow.Add(time.Hour))
			withCert(es[0], "acme")
			tc.edit(t, dir, es[0])
			path := writeCredentialsFile(t, dir, es)
			got, err := LoadCredentials(path, c, certNow)
			for _, cr := range got {
				cr.Secret.Wipe()
			}
			if diff := diffViolations(tc.want, violationsOrCredentialsOf(err)); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
			if (tc.cause == nil) != (err == nil) || (tc.cause != nil && !errors.Is(err, tc.cause)) {
				t.Errorf("error %v does not match %v", err, tc.cause)
			}
		})
	}
}
