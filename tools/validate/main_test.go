package validate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// runMain runs Main and returns its exit code and outputs.
func runMain(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Main(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestMainValid(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"config only", []string{"-config", f.cfgPath}, "validate: ok: 2 tenant(s), 3 binding(s)\n"},
		{"with credentials", []string{"-config", f.cfgPath, "-credentials", f.credsPath}, "validate: ok: 2 tenant(s), 3 binding(s), 2 credential(s) matched\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runMain(tc.args...)
			if code != ExitOK || stdout != tc.want || stderr != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q and nothing", code, stdout, stderr, ExitOK, tc.want)
			}
		})
	}
}

// TestMainViolations runs every violation case through the command: exit
// status 1, one line per violation naming its source and JSON path, and a
// summary.
func TestMainViolations(t *testing.T) {
	for _, tc := range violationCases() {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.edit(t, f)
			args := []string{"-config", f.cfgPath, "-credentials", f.credsPath}
			if tc.anySpelling {
				args = append(args, "-any-spelling")
			}
			code, stdout, stderr := runMain(args...)
			if code != ExitViolations || stderr != "" {
				t.Errorf("exit %d, stderr %q; want %d and nothing", code, stderr, ExitViolations)
			}
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			if len(lines) != len(tc.want)+1 {
				t.Fatalf("got %d lines, want %d violations and a summary:\n%s", len(lines), len(tc.want), stdout)
			}
			for i, w := range tc.want {
				p := w.Path
				if p == "" {
					p = "(document)"
				}
				prefix := w.Source.String() + ": " + p + ": " + w.Rule
				if !strings.HasPrefix(lines[i], prefix+": ") && !strings.HasPrefix(lines[i], prefix+" (") {
					t.Errorf("line %d = %q, want prefix %q and a detail or explanation", i, lines[i], prefix)
				}
			}
			if want := "validate: " + strconv.Itoa(len(tc.want)) + " violation(s)"; lines[len(lines)-1] != want {
				t.Errorf("summary %q, want %q", lines[len(lines)-1], want)
			}
		})
	}
}

// TestMainNoSecretPrinted makes sure a malformed secret file's contents are
// not echoed.
func TestMainNoSecretPrinted(t *testing.T) {
	f := newFixture(t)
	const secret = "SUPERSECRETTOKENVALUE"
	writeFile(t, f.dir, "acme.creds", []byte("-----BEGIN NATS USER JWT-----\n"+secret+"\n------END NATS USER JWT------\n"), 0o600)
	code, stdout, stderr := runMain("-config", f.cfgPath, "-credentials", f.credsPath)
	if code != ExitViolations {
		t.Fatalf("exit %d, want %d", code, ExitViolations)
	}
	if strings.Contains(stdout+stderr, secret) {
		t.Errorf("output contains the secret file's contents:\n%s%s", stdout, stderr)
	}
}

func TestMainUsage(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name string
		args []string
	}{
		{"no flags", nil},
		{"no -config", []string{"-credentials", f.credsPath}},
		{"unknown flag", []string{"-config", f.cfgPath, "-colour"}},
		{"extra argument", []string{"-config", f.cfgPath, "more"}},
		{"help", []string{"-h"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runMain(tc.args...)
			if code != ExitUsage || stdout != "" || !strings.Contains(stderr, "usage: validate") {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, nothing, usage", code, stdout, stderr, ExitUsage)
			}
		})
	}
}

func TestMainWriteCanonical(t *testing.T) {
	f := newFixture(t)
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, canonical(t, f.cfg), "", "  "); err != nil {
		t.Fatal(err)
	}
	writeFile(t, f.dir, "trigger.json", append(pretty.Bytes(), '\n'), 0o644)
	out := filepath.Join(f.dir, "canonical.json")

	if code, stdout, _ := runMain("-config", f.cfgPath); code != ExitViolations {
		t.Errorf("strict check of a pretty-printed config: exit %d, want %d\n%s", code, ExitViolations, stdout)
	}
	if code, stdout, stderr := runMain("-config", f.cfgPath, "-write-canonical", out); code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, canonical(t, f.cfg)) {
		t.Errorf("written canonical encoding differs:\n%s", got)
	}
	if code, stdout, _ := runMain("-config", out); code != ExitOK {
		t.Errorf("strict check of the written file: exit %d\n%s", code, stdout)
	}
	if code, _, _ := runMain("-config", f.cfgPath, "-write-canonical", filepath.Join(f.dir, "absent", "x.json")); code != ExitViolations {
		t.Errorf("unwritable output: exit %d, want %d", code, ExitViolations)
	}
}

// TestMainWriteCanonicalRefusesInvalidUTF8 pins the bug where
// -write-canonical rewrote invalid UTF-8 in a filter subject into U+FFFD
// and wrote the result: the command now reports invalid_utf8, writes
// nothing and leaves an existing output file, and a configuration it was
// asked to rewrite in place, as they were.
func TestMainWriteCanonicalRefusesInvalidUTF8(t *testing.T) {
	bad, err := os.ReadFile(filepath.Join("testdata", "invalid_utf8.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "trigger.json")
	out := filepath.Join(dir, "canonical.json")
	previous := []byte("previous contents\n")
	writeFile(t, dir, "trigger.json", bad, 0o644)
	writeFile(t, dir, "canonical.json", previous, 0o644)
	for _, target := range []string{out, cfg} {
		code, stdout, stderr := runMain("-config", cfg, "-write-canonical", target)
		if code != ExitViolations || stderr != "" {
			t.Errorf("-write-canonical %s: exit %d, stderr %q; want %d and nothing", filepath.Base(target), code, stderr, ExitViolations)
		}
		if !strings.Contains(stdout, "config: bindings[1].filter_subject: invalid_utf8: ") || !utf8.ValidString(stdout) || strings.ContainsRune(stdout, utf8.RuneError) {
			t.Errorf("-write-canonical %s: output %q, want one invalid_utf8 line without the bytes", filepath.Base(target), stdout)
		}
	}
	for name, want := range map[string][]byte{cfg: bad, out: previous} {
		if got, err := os.ReadFile(name); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s changed: %q, %v", filepath.Base(name), got, err)
		}
	}
}
