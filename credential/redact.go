package credential

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
)

// redactedText is the only rendering of secret material.
const redactedText = "[redacted]"

// text is the redacted rendering of a Secret.
func (s Secret) text() string {
	m := s.material()
	if m == nil {
		return "credential.Secret(none)"
	}
	m.mu.Lock()
	wiped := m.wiped
	kind := s.kind.String()
	if m.cert != nil && s.kind != KindCertificate {
		kind += "+certificate"
	}
	m.mu.Unlock()
	if wiped {
		return "credential.Secret(" + kind + ", wiped)"
	}
	return "credential.Secret(" + kind + ", " + redactedText + ")"
}

// String returns a redacted description: the kind ("+certificate" when a
// client certificate is attached) and "[redacted]".
func (s Secret) String() string { return s.text() }

// GoString returns the same redacted description as String.
func (s Secret) GoString() string { return s.text() }

// Format writes the redacted description for every verb and flag.
func (s Secret) Format(f fmt.State, verb rune) { writeRedacted(f, verb, s.text()) }

// LogValue makes slog log the redacted description.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.text()) }

// MarshalJSON refuses: secrets are never encoded.
func (s Secret) MarshalJSON() ([]byte, error) { return nil, ErrNotMarshalable }

// MarshalText refuses: secrets are never encoded.
func (s Secret) MarshalText() ([]byte, error) { return nil, ErrNotMarshalable }

// text is the redacted rendering of an Auth: the names of the set fields.
func (a Auth) text() string {
	var b strings.Builder
	b.WriteString("credential.Auth{")
	n := 0
	for _, f := range [...]struct {
		name string
		set  bool
	}{
		{"JWT", a.JWT != ""}, {"NKey", a.NKey != ""}, {"Sig", a.Sig != ""},
		{"User", a.User != ""}, {"Pass", a.Pass != ""}, {"Token", a.Token != ""},
	} {
		if !f.set {
			continue
		}
		if n > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f.name)
		b.WriteByte(':')
		b.WriteString(redactedText)
		n++
	}
	b.WriteByte('}')
	return b.String()
}

// String returns a redacted description naming the fields that are set.
func (a Auth) String() string { return a.text() }

// GoString returns the same redacted description as String.
func (a Auth) GoString() string { return a.text() }

// Format writes the redacted description for every verb and flag.
func (a Auth) Format(f fmt.State, verb rune) { writeRedacted(f, verb, a.text()) }

// LogValue makes slog log the redacted description.
func (a Auth) LogValue() slog.Value { return slog.StringValue(a.text()) }

// MarshalJSON refuses: an Auth is written field by field into CONNECT.
func (a Auth) MarshalJSON() ([]byte, error) { return nil, ErrNotMarshalable }

// MarshalText refuses: an Auth is written field by field into CONNECT.
func (a Auth) MarshalText() ([]byte, error) { return nil, ErrNotMarshalable }

// writeRedacted writes text for any verb; %q quotes it.
func writeRedacted(f fmt.State, verb rune, text string) {
	if verb == 'q' {
		text = strconv.Quote(text)
	}
	_, _ = f.Write([]byte(text))
}
