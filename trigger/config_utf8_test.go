package trigger

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestConfigRefusesInvalidUTF8 pins the bug where CanonicalConfig (and so
// validate -write-canonical) rewrote invalid UTF-8 or an escaped half of a
// surrogate pair in a name or subject into U+FFFD, and ParseConfig called
// the same document merely not canonical: both refuse it with one
// RuleUTF8 violation at the value that holds it, and no message repeats
// the bytes.
func TestConfigRefusesInvalidUTF8(t *testing.T) {
	canon := string(validConfig(t).encode())
	tests := []struct {
		name     string
		old, new string
		path     string
	}{
		{"byte 0xff in a filter subject", `"filter_subject":"acme.orders.0"`, "\"filter_subject\":\"acme.orders.\xff\"", "bindings[0].filter_subject"},
		{"truncated sequence in a stream name", `"stream":"ORDERS"`, "\"stream\":\"ORD\xe2\x82\"", "bindings[0].stream"},
		{"overlong encoding in a consumer name", `"consumer":"c1"`, "\"consumer\":\"c\xc0\xaf\"", "bindings[1].consumer"},
		{"encoded surrogate in a tenant id", `"id":"globex"`, "\"id\":\"glo\xed\xa0\x80\"", "tenants[1].id"},
		{"escaped high surrogate alone in a stream name", `"stream":"ORDERS"`, `"stream":"ORD\ud83dERS"`, "bindings[0].stream"},
		{"escaped low surrogate alone in a subject", `"filter_subject":"acme.orders.0"`, `"filter_subject":"acme.orders.\udc00"`, "bindings[0].filter_subject"},
		{"high surrogate followed by a non-surrogate escape", `"function":"handle"`, `"function":"h\ud83d\u0041"`, "bindings[0].function"},
		{"invalid byte in a key", `"route":"blue"`, "\"rou\xfete\":\"blue\"", "bindings[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(canon, tt.old) {
				t.Fatalf("canonical encoding lacks %q", tt.old)
			}
			doc := []byte(strings.Replace(canon, tt.old, tt.new, 1))
			want := []Violation{{Path: tt.path, Rule: RuleUTF8}}
			_, perr := ParseConfig(doc)
			out, cerr := CanonicalConfig(doc)
			if out != nil {
				t.Errorf("CanonicalConfig wrote %d bytes", len(out))
			}
			for _, err := range []error{perr, cerr} {
				if !errors.Is(err, ErrInvalidConfig) || !errors.Is(err, RuleUTF8) {
					t.Fatalf("error = %v, want ErrInvalidConfig and RuleUTF8", err)
				}
				if diff := cmp.Diff(want, violationsOf(t, err)); diff != "" {
					t.Errorf("violations (-want +got):\n%s", diff)
				}
				for _, msg := range append(messagesOf(t, err), err.Error()) {
					if !utf8Clean(msg) || strings.Contains(msg, "\\x") || strings.Contains(msg, "ud83d") || strings.Contains(msg, "udc00") {
						t.Errorf("message repeats the input: %q", msg)
					}
				}
			}
		})
	}
}

// TestConfigKeepsValidNonASCII: a character outside the BMP written as a
// surrogate pair escape, or as its UTF-8 bytes, is valid in a stream name;
// CanonicalConfig writes it as UTF-8, which ParseConfig accepts.
func TestConfigKeepsValidNonASCII(t *testing.T) {
	canon := string(validConfig(t).encode())
	want := []byte(strings.Replace(canon, `"stream":"ORDERS"`, "\"stream\":\"ORD\U0001F600\"", 1))
	for _, spelling := range []string{`"stream":"ORD\ud83d\ude00"`, "\"stream\":\"ORD\U0001F600\""} {
		got, err := CanonicalConfig([]byte(strings.Replace(canon, `"stream":"ORDERS"`, spelling, 1)))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("CanonicalConfig(%s) = %q, %v; want %q", spelling, got, err, want)
		}
		if _, err := ParseConfig(got); err != nil {
			t.Fatalf("ParseConfig of the canonical encoding: %v", err)
		}
	}
}

// utf8Clean reports whether s is valid UTF-8 without U+FFFD.
func utf8Clean(s string) bool {
	return strings.ToValidUTF8(s, "\uFFFD") == s && !strings.ContainsRune(s, '\uFFFD')
}
