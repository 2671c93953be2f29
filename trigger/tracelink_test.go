package trigger

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// The W3C specification's own example, sampled.
const (
	tpExample = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tpTrace   = "4bf92f3577b34da6a3ce929d0e0e4736"
	tpSpan    = "00f067aa0ba902b7"
)

var tpExampleLink = TraceLink{
	TraceID: TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
	SpanID:  SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
	Flags:   1,
}

func TestParseTraceparent(t *testing.T) {
	future := func(v byte) TraceLink {
		l := tpExampleLink
		l.Version = v
		return l
	}
	unsampled := tpExampleLink
	unsampled.Flags = 0
	allFlags := tpExampleLink
	allFlags.Flags = 0xff
	tests := []struct {
		name string
		in   string
		want TraceLink
	}{
		{"example", tpExample, tpExampleLink},
		{"not sampled", "00-" + tpTrace + "-" + tpSpan + "-00", unsampled},
		{"unknown flags kept", "00-" + tpTrace + "-" + tpSpan + "-ff", allFlags},
		{"version 01, no more fields", "01-" + tpTrace + "-" + tpSpan + "-01", future(1)},
		{"version fe with a field", "fe-" + tpTrace + "-" + tpSpan + "-01-what-comes-next", future(0xfe)},
		{"version 01, empty field", "01-" + tpTrace + "-" + tpSpan + "-01-", future(1)},
		{"version 01 at the cap", "01-" + tpTrace + "-" + tpSpan + "-01-" + strings.Repeat("x", maxTraceparentLen-traceparentLen-1), future(1)},
		{"zero byte edges", "00-00000000000000000000000000000001-0000000000000001-00",
			TraceLink{TraceID: TraceID{15: 1}, SpanID: SpanID{7: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseTraceparent([]byte(tt.in))
			if !ok {
				t.Fatalf("parseTraceparent(%q): no link", tt.in)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if s := got.String(); s != tt.in[:traceparentLen] {
				t.Errorf("String() = %q, want %q", s, tt.in[:traceparentLen])
			}
		})
	}
}

// TestParseTraceparentShouldFail lists values that are no link.
func TestParseTraceparentShouldFail(t *testing.T) {
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"one short", tpExample[:traceparentLen-1]},
		{"version 00 with a trailing dash", tpExample + "-"},
		{"version 00 with a field", tpExample + "-x"},
		{"version 00 with trailing space", tpExample + " "},
		{"leading space", " " + tpExample},
		{"version 01 past the cap", "01-" + tpTrace + "-" + tpSpan + "-01-" + strings.Repeat("x", maxTraceparentLen-traceparentLen)},
		{"version 01 without a dash after the flags", "01-" + tpTrace + "-" + tpSpan + "-01x"},
		{"version ff", "ff-" + tpTrace + "-" + tpSpan + "-01"},
		{"version ff with a field", "ff-" + tpTrace + "-" + tpSpan + "-01-x"},
		{"upper-case version", "0A-" + tpTrace + "-" + tpSpan + "-01"},
		{"upper-case trace-id", "00-" + strings.ToUpper(tpTrace) + "-" + tpSpan + "-01"},
		{"upper-case parent-id", "00-" + tpTrace + "-00F067AA0BA902B7-01"},
		{"upper-case flags", "00-" + tpTrace + "-" + tpSpan + "-0A"},
		{"all-zero trace-id", "00-00000000000000000000000000000000-" + tpSpan + "-01"},
		{"all-zero parent-id", "00-" + tpTrace + "-0000000000000000-01"},
		{"non-hex trace-id", "00-4bf92f3577b34da6a3ce929d0e0e473g-" + tpSpan + "-01"},
		{"non-hex parent-id", "00-" + tpTrace + "-00f067aa0ba902bz-01"},
		{"non-hex flags", "00-" + tpTrace + "-" + tpSpan + "-0x"},
		{"non-hex version", "0g-" + tpTrace + "-" + tpSpan + "-01"},
		{"underscore separator", "00_" + tpTrace + "-" + tpSpan + "-01"},
		{"space separator", "00-" + tpTrace + " " + tpSpan + "-01"},
		{"missing separator", "00-" + tpTrace + tpSpan + "-01-"},
		{"short trace-id", "00-" + tpTrace[:31] + "-" + tpSpan + "-01-"},
		{"long trace-id", "00-" + tpTrace + "0-" + tpSpan + "-01"},
		{"short version", "0-" + tpTrace + "-" + tpSpan + "-01-"},
		{"one-digit flags", "00-" + tpTrace + "-" + tpSpan + "-1"},
		{"three-digit flags", "00-" + tpTrace + "-" + tpSpan + "-011"},
		{"comma-joined pair", tpExample + "," + tpExample},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := parseTraceparent([]byte(tt.in)); ok || got != (TraceLink{}) {
				t.Errorf("parseTraceparent(%q) = %v, %v; want no link", tt.in, got, ok)
			}
		})
	}
}

func TestTraceLinkString(t *testing.T) {
	if got := (TraceLink{}).String(); got != "none" {
		t.Errorf("zero TraceLink: %q, want none", got)
	}
	if got := tpExampleLink.SpanID.String(); got != tpSpan {
		t.Errorf("SpanID: %q, want %q", got, tpSpan)
	}
	if !tpExampleLink.IsValid() || !tpExampleLink.Sampled() || (TraceLink{}).IsValid() {
		t.Error("IsValid or Sampled wrong")
	}
}

// TestTraceLinkOf reads the link of header blocks as the connection
// delivers them: one traceparent under any case of its name is a link;
// none, several or a malformed one is no link.
func TestTraceLinkOf(t *testing.T) {
	block := func(fields ...string) string {
		return "NATS/1.0\r\n" + strings.Join(fields, "") + "\r\n"
	}
	tests := []struct {
		name   string
		header string
		want   TraceLink
	}{
		{"no header block", "", TraceLink{}},
		{"no fields", block(), TraceLink{}},
		{"lower case", block("traceparent: " + tpExample + "\r\n"), tpExampleLink},
		{"HTTP carrier case", block("X-A: a\r\nTraceparent:" + tpExample + "\r\nX-B: b\r\n"), tpExampleLink},
		{"upper case, padded", block("TRACEPARENT: \t" + tpExample + " \t\r\n"), tpExampleLink},
		{"beside tracestate", block("traceparent: " + tpExample + "\r\ntracestate: k=v\r\n"), tpExampleLink},
		{"two, equal", block("traceparent: "+tpExample+"\r\n", "traceparent: "+tpExample+"\r\n"), TraceLink{}},
		{"two, other cases", block("traceparent: "+tpExample+"\r\n", "Traceparent: "+tpExample+"\r\n"), TraceLink{}},
		{"one valid, one malformed", block("traceparent: "+tpExample+"\r\n", "traceparent: x\r\n"), TraceLink{}},
		{"malformed", block("traceparent: " + strings.ToUpper(tpExample) + "\r\n"), TraceLink{}},
		{"empty value", block("traceparent:\r\n"), TraceLink{}},
		{"other name", block("X-Traceparent: " + tpExample + "\r\n"), TraceLink{}},
		{"prefix of the name", block("traceparen: " + tpExample + "\r\n"), TraceLink{}},
		{"status block", "NATS/1.0 503\r\ntraceparent: " + tpExample + "\r\n\r\n", tpExampleLink},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, traceLinkOf([]byte(tt.header))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestTraceLinkZeroAllocs: reading the link allocates nothing beyond the
// fixed-size value, found or not.
func TestTraceLinkZeroAllocs(t *testing.T) {
	headers := map[string][]byte{
		"link":      []byte("NATS/1.0\r\nNats-Msg-Id: 1\r\nTraceparent: " + tpExample + "\r\n\r\n"),
		"several":   []byte("NATS/1.0\r\ntraceparent: " + tpExample + "\r\ntraceparent: " + tpExample + "\r\n\r\n"),
		"malformed": []byte("NATS/1.0\r\ntraceparent: 00-x\r\n\r\n"),
		"none":      []byte("NATS/1.0\r\nX-A: a\r\n\r\n"),
	}
	for name, h := range headers {
		t.Run(name, func(t *testing.T) {
			var l TraceLink
			allocs := testing.AllocsPerRun(1000, func() { l = traceLinkOf(h) })
			if allocs != 0 {
				t.Errorf("traceLinkOf: %v allocs, want 0", allocs)
			}
			_ = l
		})
	}
}

// genTraceparent draws a valid traceparent value: any version but ff,
// non-zero ids, any flags and, for a version above 00, possibly a '-' and
// more bytes up to maxTraceparentLen.
func genTraceparent() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		ver := rapid.ByteRange(0, 0xfe).Draw(t, "version")
		trace := rapid.StringMatching(`[0-9a-f]{32}`).Filter(func(s string) bool { return strings.Trim(s, "0") != "" }).Draw(t, "trace-id")
		span := rapid.StringMatching(`[0-9a-f]{16}`).Filter(func(s string) bool { return strings.Trim(s, "0") != "" }).Draw(t, "parent-id")
		flags := rapid.Byte().Draw(t, "flags")
		var b []byte
		b = appendHex(b, []byte{ver})
		b = append(b, '-')
		b = append(b, trace...)
		b = append(b, '-')
		b = append(b, span...)
		b = append(b, '-')
		b = appendHex(b, []byte{flags})
		if ver != 0 && rapid.Bool().Draw(t, "more fields") {
			b = append(b, '-')
			b = append(b, rapid.StringMatching(`[!-~]{0,72}`).Draw(t, "rest")...)
		}
		return string(b)
	})
}

// TestTraceparentProperties: every valid traceparent is a link that
// formats back to its first traceparentLen bytes (all of it for version
// 00) and parses again to the same link; every strict prefix of a
// version 00 value is no link; and any single-byte change of a valid one
// is either no link or another valid one that formats back to the changed
// bytes.
func TestTraceparentProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genTraceparent().Draw(t, "traceparent")
		l, ok := parseTraceparent([]byte(in))
		if !ok || !l.IsValid() {
			t.Fatalf("%q: no link", in)
		}
		s := l.String()
		if s != in[:traceparentLen] {
			t.Fatalf("%q formats back as %q", in, s)
		}
		if l.Version == 0 && s != in {
			t.Fatalf("version 00 %q formats back as %q", in, s)
		}
		if again, ok := parseTraceparent([]byte(s)); !ok || again != l {
			t.Fatalf("%q parses again as %v, %v; want %v", s, again, ok, l)
		}
		if l.Version == 0 {
			for n := range len(in) {
				if _, ok := parseTraceparent([]byte(in[:n])); ok {
					t.Fatalf("prefix %q of %q is a link", in[:n], in)
				}
			}
		}
		m := []byte(in)
		i := rapid.IntRange(0, len(m)-1).Draw(t, "at")
		m[i] = rapid.Byte().Draw(t, "to")
		ml, ok := parseTraceparent(m)
		switch {
		case !ok:
			if ml != (TraceLink{}) {
				t.Fatalf("mutation %q: no link but %v", m, ml)
			}
		case ml.String() != string(m[:traceparentLen]):
			t.Fatalf("mutation %q is the link %v", m, ml)
		}
	})
}

// FuzzParseTraceparent checks what parseTraceparent accepts: it is within
// the size bounds, formats back to its first traceparentLen bytes, is
// exactly that long for version 00 or continues with a '-', and parses
// again to the same link; what it refuses is the zero TraceLink.
func FuzzParseTraceparent(f *testing.F) {
	for _, s := range []string{
		tpExample, "01-" + tpTrace + "-" + tpSpan + "-01-x", "ff-" + tpTrace + "-" + tpSpan + "-01",
		"00-00000000000000000000000000000000-" + tpSpan + "-01", strings.ToUpper(tpExample), tpExample + "-",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		l, ok := parseTraceparent(in)
		if !ok {
			if l != (TraceLink{}) {
				t.Fatalf("refused %q with %v", in, l)
			}
			return
		}
		if len(in) < traceparentLen || len(in) > maxTraceparentLen || !l.IsValid() || l.Version == 0xff {
			t.Fatalf("accepted %q as %v", in, l)
		}
		if s := l.String(); s != string(in[:traceparentLen]) {
			t.Fatalf("%q formats back as %q", in, s)
		}
		if len(in) > traceparentLen && (l.Version == 0 || in[traceparentLen] != '-') {
			t.Fatalf("accepted %q with bytes after the flags", in)
		}
		if again, ok := parseTraceparent(in[:traceparentLen]); !ok || again != l {
			t.Fatalf("%q parses again as %v, %v", in[:traceparentLen], again, ok)
		}
	})
}
