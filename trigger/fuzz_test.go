package trigger

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseConfig checks ParseConfig's invariants on any input: accepted
// input is valid and re-encodes to the identical bytes; refused input
// yields a *ConfigError with at least one violation and a single-line
// message. The committed corpus under testdata/fuzz/FuzzParseConfig holds
// valid configurations and near misses.
func FuzzParseConfig(f *testing.F) {
	f.Add(validConfig(f).encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfig(b)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *ConfigError", err)
			}
			if len(ce.Violations) == 0 {
				t.Fatal("ConfigError without violationList")
			}
			if strings.ContainsAny(err.Error(), "\r\n\x00") {
				t.Fatalf("message spans lines: %q", err.Error())
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted config fails Validate: %v", err)
		}
		out, err := c.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON of accepted config: %v", err)
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("accepted input re-encodes differently:\n in: %q\nout: %q", b, out)
		}
	})
}

// TestFuzzCorpusAccepts pins that the committed corpus reaches the accept
// path: its valid seeds parse.
func TestFuzzCorpusAccepts(t *testing.T) {
	for _, name := range []string{"valid_two_tenants", "valid_minimal", "route_and_pin"} {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzParseConfig", name))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
			if len(lines) != 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") {
				t.Fatalf("unexpected corpus file layout")
			}
			b, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ParseConfig([]byte(b)); err != nil {
				t.Errorf("ParseConfig: %v", err)
			}
		})
	}
}
