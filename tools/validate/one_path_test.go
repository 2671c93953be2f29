package validate

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/trigger"
)

// TestSameFaultSamePath: the configuration and the credentials file are
// read by one parser and one schema walk, so the same JSON fault, put at
// the document level of either, is reported at the same path with the same
// rule by trigger (ParseConfig, CheckCredentialsFile, LoadCredentials) and
// by Check, which adds only the source. A key read from the file is quoted in the path unless
// it is a plain name.
func TestSameFaultSamePath(t *testing.T) {
	type fault struct {
		Path string
		Rule string
	}
	tests := []struct {
		name   string
		insert string // put right after the document's opening brace
		append string // put after the document
		want   []fault
	}{
		{name: "unknown plain key", insert: `"color":1,`, want: []fault{{"color", "unknown_field"}}},
		{name: "unknown key with path separators and control characters", insert: `"a.b[0]\n\u0000":1,`,
			want: []fault{{`["a.b[0]\n\x00"]`, "unknown_field"}}},
		{name: "unknown key not ASCII", insert: `"Émoji 😀":1,`, want: []fault{{`["\u00c9moji \U0001f600"]`, "unknown_field"}}},
		{name: "unknown key twice", insert: `"x-y":1,"x-y":2,`, want: []fault{{`["x-y"]`, "unknown_field"}, {`["x-y"]`, "duplicate_key"}}},
		{name: "invalid utf-8 in a key", insert: "\"k\xff\":1,", want: []fault{{"", "invalid_utf8"}}},
		{name: "invalid utf-8 in a value", insert: "\"x\":[\"ok\",\"\xc0\xaf\"],", want: []fault{{"x[1]", "invalid_utf8"}}},
		{name: "unpaired surrogate escape", insert: `"x":{"y":"\ud800"},`, want: []fault{{"x.y", "invalid_utf8"}}},
		{name: "bad escape", insert: `"x":"\q",`, want: []fault{{"x", "syntax"}}},
		{name: "truncated array", insert: `"x":[1,}`, want: []fault{{"x[1]", "syntax"}}},
		{name: "trailing data", append: ` {}`, want: []fault{{"", "syntax"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			edit := func(path string) []byte {
				t.Helper()
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				i := bytes.IndexByte(b, '{') + 1
				b = append(b[:i:i], append([]byte(tc.insert), b[i:]...)...)
				b = append(b, tc.append...)
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
				return b
			}
			cfgBytes := edit(f.cfgPath)
			_, cfgErr := trigger.ParseConfig(cfgBytes)
			var ce *trigger.ConfigError
			if !errors.As(cfgErr, &ce) {
				t.Fatalf("ParseConfig: %v, want a *ConfigError", cfgErr)
			}
			var fromConfig []fault
			for _, v := range ce.Violations {
				fromConfig = append(fromConfig, fault{v.Path, v.Rule.String()})
			}
			// The configuration is invalid: Check reads the credentials
			// file alone, as CheckCredentialsFile does.
			edit(f.credsPath)
			var fromCreds []fault
			var cre *trigger.CredentialsError
			if err := trigger.CheckCredentialsFile(f.credsPath, testNow); !errors.As(err, &cre) {
				t.Fatalf("CheckCredentialsFile: %v, want a *CredentialsError", err)
			}
			for _, v := range cre.Violations {
				fromCreds = append(fromCreds, fault{v.Path, v.Rule.String()})
			}
			res := Check(Input{ConfigPath: f.cfgPath, CredentialsPath: f.credsPath, Now: nowFunc})
			var wantCheck []brief
			for _, src := range []Source{SourceConfig, SourceCredentials} {
				for _, w := range tc.want {
					wantCheck = append(wantCheck, brief{src, w.Path, w.Rule})
				}
			}
			if diff := cmp.Diff(tc.want, fromConfig); diff != "" {
				t.Errorf("trigger.ParseConfig (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, fromCreds); diff != "" {
				t.Errorf("trigger.CheckCredentialsFile (-want +got):\n%s", diff)
			}
			if diff := diffBriefs(wantCheck, briefs(res.Violations)); diff != "" {
				t.Errorf("Check (-want +got):\n%s", diff)
			}

			// With a valid configuration, Check reports what
			// LoadCredentials reports.
			writeFile(t, f.dir, "trigger.json", canonical(t, f.cfg), 0o644)
			creds, err := trigger.LoadCredentials(f.credsPath, f.cfg, testNow)
			if creds != nil || !errors.As(err, &cre) {
				t.Fatalf("LoadCredentials: %v, want a *CredentialsError and no credentials", err)
			}
			fromCreds, wantCheck = nil, nil
			for _, v := range cre.Violations {
				fromCreds = append(fromCreds, fault{v.Path, v.Rule.String()})
				wantCheck = append(wantCheck, brief{SourceCredentials, v.Path, v.Rule.String()})
			}
			if diff := cmp.Diff(tc.want, fromCreds); diff != "" {
				t.Errorf("trigger.LoadCredentials (-want +got):\n%s", diff)
			}
			res = Check(Input{ConfigPath: f.cfgPath, CredentialsPath: f.credsPath, Now: nowFunc})
			if diff := diffBriefs(wantCheck, briefs(res.Violations)); diff != "" {
				t.Errorf("Check with a valid configuration (-want +got):\n%s", diff)
			}
		})
	}
}
