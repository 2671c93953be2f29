package parser

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// headerRE is the header grammar written independently as a regular
// expression, for differential checks.
var headerRE = regexp.MustCompile("^NATS/1\\.0( [1-9][0-9]{2}( [^\r\n]+)?)?\r\n([!-9;-~]+:[^\r\n]*\r\n)*\r\n$")

func TestParseHeader(t *testing.T) {
	type result struct {
		Status      int
		Description string
	}
	tests := []struct {
		name  string
		block string
		want  result
	}{
		{"minimal", "NATS/1.0\r\n\r\n", result{}},
		{"one field", "NATS/1.0\r\nNats-Msg-Id: 1\r\n\r\n", result{}},
		{"field without space", "NATS/1.0\r\nK:v\r\n\r\n", result{}},
		{"field empty value", "NATS/1.0\r\nK:\r\n\r\n", result{}},
		{"field with spaces in value", "NATS/1.0\r\nK: a b  c \r\n\r\n", result{}},
		{"repeated field", "NATS/1.0\r\nK: 1\r\nK: 2\r\n\r\n", result{}},
		{"status only", "NATS/1.0 503\r\n\r\n", result{Status: 503}},
		{"status and description", "NATS/1.0 404 No Messages\r\n\r\n", result{404, "No Messages"}},
		{"status 100", "NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 1\r\n\r\n", result{100, "Idle Heartbeat"}},
		{"status 999", "NATS/1.0 999\r\n\r\n", result{Status: 999}},
		{"status description with colon", "NATS/1.0 409 Exceeded MaxWaiting: 1\r\n\r\n", result{409, "Exceeded MaxWaiting: 1"}},
		{"non-ASCII value", "NATS/1.0\r\nK: \xc3\xa9\xff\r\n\r\n", result{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, desc, err := ParseHeader([]byte(tt.block))
			mustNotFail(t, err)
			if diff := cmp.Diff(tt.want, result{status, string(desc)}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if !headerRE.MatchString(tt.block) {
				t.Error("reference grammar refuses it")
			}
		})
	}
}

func TestParseHeaderShouldFail(t *testing.T) {
	tests := []struct {
		name  string
		block string
		want  error
	}{
		{"empty", "", ErrMalformed},
		{"no blank line", "NATS/1.0\r\n", ErrMalformed},
		{"status one digit", "NATS/1.0 5\r\n\r\n", ErrMalformed},
		{"status two digits", "NATS/1.0 50\r\n\r\n", ErrMalformed},
		{"status glued", "NATS/1.0418\r\n\r\n", ErrMalformed},
		{"version 2.0", "NATS/2.0 404\r\n\r\n", ErrMalformed},
		{"version 1.1", "NATS/1.1\r\n\r\n", ErrMalformed},
		{"no version", "\r\n\r\n\r\n\r\n", ErrMalformed},
		{"status four digits", "NATS/1.0 4040\r\n\r\n", ErrMalformed},
		{"status zero", "NATS/1.0 000\r\n\r\n", ErrMalformed},
		{"status tab", "NATS/1.0\t404\r\n\r\n", ErrMalformed},
		{"description glued", "NATS/1.0 404No\r\n\r\n", ErrMalformed},
		{"description empty", "NATS/1.0 404 \r\n\r\n", ErrMalformed},
		{"description CR", "NATS/1.0 404 a\rb\r\n\r\n", ErrMalformed},
		{"bare LF status line", "NATS/1.0\n\r\n", ErrMalformed},
		{"bare LF field", "NATS/1.0\r\nK: v\n\r\n", ErrMalformed},
		{"bare LF blank line", "NATS/1.0\r\nK: v\r\n\n", ErrMalformed},
		{"no colon", "NATS/1.0\r\nK v\r\n\r\n", ErrMalformed},
		{"empty name", "NATS/1.0\r\n:v\r\n\r\n", ErrMalformed},
		{"name with space", "NATS/1.0\r\nK K: v\r\n\r\n", ErrMalformed},
		{"name with tab", "NATS/1.0\r\nK\t: v\r\n\r\n", ErrMalformed},
		{"name with NUL", "NATS/1.0\r\nK\x00: v\r\n\r\n", ErrMalformed},
		{"name non-ASCII", "NATS/1.0\r\n\xc3\xa9: v\r\n\r\n", ErrMalformed},
		{"continuation", "NATS/1.0\r\nK: v\r\n\tw\r\n\r\n", ErrMalformed},
		{"CR in value", "NATS/1.0\r\nK: v\rw\r\n\r\n", ErrMalformed},
		{"bytes after blank line", "NATS/1.0\r\n\r\nx", ErrMalformed},
		{"two blank lines", "NATS/1.0\r\n\r\n\r\n", ErrMalformed},
		{"at MaxHeaderBlock+1", headerOfLen(MaxHeaderBlock + 1), ErrHeaderTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ParseHeader([]byte(tt.block))
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if headerRE.MatchString(tt.block) && tt.want == ErrMalformed {
				t.Error("reference grammar accepts it")
			}
		})
	}
}

func TestParseHeaderAtCap(t *testing.T) {
	_, _, err := ParseHeader([]byte(headerOfLen(MaxHeaderBlock)))
	mustNotFail(t, err)
}

func TestHeaderValue(t *testing.T) {
	const block = "NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 3\r\nNats-Pending-Bytes:0\r\n" +
		"K: first\r\nK: second\r\nk: lower\r\nEmpty:\r\nPadded: \t v w \t\r\nKK: x\r\n\r\n"
	type result struct {
		Value string
		Found bool
	}
	tests := []struct {
		key  string
		want result
	}{
		{"Nats-Pending-Messages", result{"3", true}},
		{"Nats-Pending-Bytes", result{"0", true}},
		{"K", result{"first", true}},
		{"k", result{"lower", true}},
		{"KK", result{"x", true}},
		{"Empty", result{"", true}},
		{"Padded", result{"v w", true}},
		{"nats-pending-messages", result{}},
		{"Nats-Pending", result{}},
		{"NATS/1.0 408 Request Timeout", result{}},
		{"", result{}},
		{"K:", result{}},
		{"Missing", result{}},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			f := Frame{Op: OpHMsg, Header: []byte(block)}
			v, ok := f.HeaderValue(tt.key)
			if diff := cmp.Diff(tt.want, result{string(v), ok}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestHeaderValueFold(t *testing.T) {
	const block = "NATS/1.0\r\nTraceparent: first\r\nX-A: a\r\ntraceparent:second\r\nTRACEPARENT: \tthird \r\n" +
		"Once: 1\r\nOnceMore: 2\r\nEmpty:\r\n\r\n"
	type result struct {
		Value string
		N     int
	}
	tests := []struct {
		key  string
		want result
	}{
		{"traceparent", result{"first", 3}},
		{"TraceParent", result{"first", 3}},
		{"x-a", result{"a", 1}},
		{"once", result{"1", 1}},
		{"ONCEMORE", result{"2", 1}},
		{"empty", result{"", 1}},
		{"trace", result{}},
		{"traceparentx", result{}},
		{"NATS/1.0", result{}},
		{"", result{}},
		{"x-a:", result{}},
		{"missing", result{}},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			v, n := HeaderValueFold([]byte(block), tt.key)
			if diff := cmp.Diff(tt.want, result{string(v), n}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestHeaderValueNoHeader(t *testing.T) {
	f := Frame{Op: OpMsg}
	if v, ok := f.HeaderValue("K"); ok || v != nil {
		t.Errorf("got %q, %v on a frame without header", v, ok)
	}
}

// FuzzHeader checks ParseHeader against the reference expression, and
// that what it accepts yields a status in range, a description inside the
// block and a value for every field name in it.
func FuzzHeader(f *testing.F) {
	for _, s := range []string{
		"NATS/1.0\r\n\r\n", "NATS/1.0 404 No Messages\r\n\r\n", "NATS/1.0 503\r\nNats-Subject: a\r\n\r\n",
		"NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 3\r\nNats-Pending-Bytes: 0\r\n\r\n",
		"NATS/1.0 5\r\n\r\n", "NATS/1.0418\r\n\r\n", "NATS/2.0 404\r\n\r\n", "NATS/1.0\r\nK:v\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, block []byte) {
		status, desc, err := ParseHeader(block)
		if got, want := err == nil, len(block) <= MaxHeaderBlock && headerRE.Match(block); got != want {
			t.Fatalf("ParseHeader accepted=%v (err %v), reference accepted=%v", got, err, want)
		}
		if err != nil {
			return
		}
		if status != 0 && (status < 100 || status > 999) {
			t.Fatalf("status %d out of range", status)
		}
		if len(desc) > 0 && !strings.Contains(string(block), " "+string(desc)+"\r\n") {
			t.Fatal("description not from the status line")
		}
		lines := strings.Split(string(block), "\r\n")
		for _, line := range lines[1 : len(lines)-2] {
			name, _, _ := strings.Cut(line, ":")
			if _, ok := HeaderValue(block, name); !ok {
				t.Fatalf("field %q not found", name)
			}
		}
	})
}
