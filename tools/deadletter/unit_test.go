package deadletter

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestEnums lists every value of each enumeration.
func TestEnums(t *testing.T) {
	tests := []struct{ got, want string }{
		{KindTerminated.String(), "terminated"},
		{KindMaxDeliveries.String(), "max deliveries"},
		{Kind(0).String(), "Kind(0)"},
		{HolderStream.String(), "stream"},
		{HolderCopy.String(), "copy"},
		{Holder(0).String(), "Holder(0)"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("String() = %q, want %q", tc.got, tc.want)
		}
	}
}

// TestDecodeAdvisory: the two advisories of nats-server 2.14.6 as they
// are stored, and everything else on their subjects refused.
func TestDecodeAdvisory(t *testing.T) {
	const (
		term = "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.S.C"
		maxd = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.S.C"
	)
	at := time.Date(2026, 12, 5, 7, 9, 14, 964697484, time.UTC)
	termJSON := `{"type":"io.nats.jetstream.advisory.v1.terminated","id":"MiAP","timestamp":"2026-12-05T07:09:14.964697484Z",` +
		`"stream":"S","consumer":"C","consumer_seq":1,"stream_seq":3,"deliveries":2,"reason":"declared failure"}`
	maxJSON := `{"type":"io.nats.jetstream.advisory.v1.max_deliver","id":"MiAQ","timestamp":"2026-12-05T07:09:14.964697484Z",` +
		`"stream":"S","consumer":"C","stream_seq":4,"deliveries":3,"domain":"hub"}`
	good := []struct {
		name, subject, data string
		want                Entry
	}{
		{"terminated", term, termJSON, Entry{Kind: KindTerminated, Stream: "S", Consumer: "C", StreamSeq: 3, ConsumerSeq: 1,
			Deliveries: 2, Reason: "declared failure", Time: at, ID: "MiAP", CaptureSeq: 9}},
		{"max deliveries", maxd, maxJSON, Entry{Kind: KindMaxDeliveries, Stream: "S", Consumer: "C", StreamSeq: 4,
			Deliveries: 3, Time: at, Domain: "hub", ID: "MiAQ", CaptureSeq: 9}},
		{"a field a later broker adds", term, strings.Replace(termJSON, `"reason"`, `"new_state":[1],"reason"`, 1),
			Entry{Kind: KindTerminated, Stream: "S", Consumer: "C", StreamSeq: 3, ConsumerSeq: 1, Deliveries: 2,
				Reason: "declared failure", Time: at, ID: "MiAP", CaptureSeq: 9}},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := decodeAdvisory(tc.subject, []byte(tc.data), 9)
			if diff := cmp.Diff(tc.want, got); diff != "" || !ok {
				t.Errorf("decodeAdvisory ok %v (-want +got):\n%s", ok, diff)
			}
		})
	}
	bad := []struct{ name, subject, data string }{
		{"the other kind's type", maxd, termJSON},
		{"another stream", "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.T.C", termJSON},
		{"another consumer", "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.S.D", termJSON},
		{"no consumer token", "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.S", termJSON},
		{"another advisory", "$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED.S.C", termJSON},
		{"stream sequence 0", term, strings.Replace(termJSON, `"stream_seq":3`, `"stream_seq":0`, 1)},
		{"no deliveries", term, strings.Replace(termJSON, `"deliveries":2,`, ``, 1)},
		{"negative sequence", term, strings.Replace(termJSON, `"stream_seq":3`, `"stream_seq":-3`, 1)},
		{"not JSON", term, `declared failure`},
		{"truncated", term, termJSON[:len(termJSON)-1]},
		{"empty", term, ``},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if got, ok := decodeAdvisory(tc.subject, []byte(tc.data), 9); ok {
				t.Errorf("decodeAdvisory accepted %+v", got)
			}
		})
	}
}

// TestFields: the producer's fields in order, values trimmed, without any
// field the broker owns, whatever its case.
func TestFields(t *testing.T) {
	tests := []struct {
		name   string
		header string
		want   []Field
	}{
		{"none", "", nil},
		{"empty block", "NATS/1.0\r\n\r\n", nil},
		{"producer and broker fields", "NATS/1.0\r\nX-A: 1\r\nNats-Msg-Id: m\r\nX-B:\t two \r\nnats-expected-stream: S\r\n" +
			"Nats-Stream: S\r\nNats-Subject: a.b\r\nNats-Sequence: 3\r\nNats-Time-Stamp: t\r\nNats-Last-Sequence: 2\r\nX-A: 3\r\n\r\n",
			[]Field{{"X-A", "1"}, {"X-B", "two"}, {"X-A", "3"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Message{Header: []byte(tc.header)}.Fields()
			if diff := cmp.Diff(tc.want, got); diff != "" || err != nil {
				t.Errorf("Fields %v (-want +got):\n%s", err, diff)
			}
		})
	}
	for _, h := range []string{"NATS/1.0\r\nX-A: 1\r\n", "NATS/1.0\nX-A: 1\n\n", "X-A: 1\r\n\r\n", "NATS/1.0\r\nX-A 1\r\n\r\n"} {
		if _, err := (Message{Header: []byte(h)}).Fields(); !errors.Is(err, ErrMalformedReply) {
			t.Errorf("Fields(%q): %v, want ErrMalformedReply", h, err)
		}
	}
}

func TestReplayID(t *testing.T) {
	if got := ReplayID("ORDERS", 18446744073709551615); got != "latent-replay.ORDERS.18446744073709551615" {
		t.Errorf("ReplayID = %q", got)
	}
}

// TestCopySequence: a copy's original sequence comes from the broker's
// republish headers, naming its stream; anything else is malformed.
func TestCopySequence(t *testing.T) {
	h := func(s string) storedJSON { return storedJSON{Seq: 7, Header: []byte(s)} }
	if got, err := copySequence(h("NATS/1.0\r\nX-A: 1\r\nNats-Stream: S\r\nNats-Sequence: 42\r\n\r\n"), "S"); err != nil || got != 42 {
		t.Errorf("copySequence = %d, %v; want 42", got, err)
	}
	bad := []struct {
		name string
		m    storedJSON
	}{
		{"no header", storedJSON{Seq: 7}},
		{"malformed block", h("NATS/1.0\r\nNats-Stream: S\r\n")},
		{"another stream", h("NATS/1.0\r\nNats-Stream: T\r\nNats-Sequence: 42\r\n\r\n")},
		{"no stream", h("NATS/1.0\r\nNats-Sequence: 42\r\n\r\n")},
		{"no sequence", h("NATS/1.0\r\nNats-Stream: S\r\n\r\n")},
		{"sequence 0", h("NATS/1.0\r\nNats-Stream: S\r\nNats-Sequence: 0\r\n\r\n")},
		{"negative sequence", h("NATS/1.0\r\nNats-Stream: S\r\nNats-Sequence: -1\r\n\r\n")},
		{"overflowing sequence", h("NATS/1.0\r\nNats-Stream: S\r\nNats-Sequence: 18446744073709551616\r\n\r\n")},
		{"not a number", h("NATS/1.0\r\nNats-Stream: S\r\nNats-Sequence: 4x\r\n\r\n")},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := copySequence(tc.m, "S"); !errors.Is(err, ErrMalformedReply) {
				t.Errorf("copySequence = %d, %v; want ErrMalformedReply", got, err)
			}
		})
	}
}

// TestArgumentsRefused: what List, Message and Replay refuse before any
// request (the client has no connection: a request would panic).
func TestArgumentsRefused(t *testing.T) {
	c := &Client{}
	long := strings.Repeat("s", 256)
	queries := []struct {
		name string
		q    Query
	}{
		{"no stream", Query{Consumer: "C"}},
		{"no consumer", Query{Stream: "S"}},
		{"wildcard stream", Query{Stream: "S.*", Consumer: "C"}},
		{"name past its cap", Query{Stream: long, Consumer: "C"}},
		{"negative limit", Query{Stream: "S", Consumer: "C", Limit: -1}},
		{"limit past MaxLimit", Query{Stream: "S", Consumer: "C", Limit: MaxLimit + 1}},
	}
	for _, tc := range queries {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.List(t.Context(), tc.q); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("List: %v, want ErrInvalidArgument", err)
			}
		})
	}
	if _, err := c.Message(t.Context(), "S", 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Message seq 0: %v", err)
	}
	if _, err := c.Message(t.Context(), "S>", 1); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Message of a bad stream name: %v", err)
	}
	if _, err := c.Replay(t.Context(), Message{Stream: "S", Seq: 1, Subject: "a.*"}, ReplayOptions{}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Replay to a wildcard: %v", err)
	}
	if _, err := c.Replay(t.Context(), Message{Stream: "S", Seq: 1, Subject: "a.b", Header: []byte("NATS/1.0\r\nX: a b\r\n\r\n")}, ReplayOptions{}); !errors.Is(err, ErrHeaderNotReplayable) {
		t.Errorf("Replay of a value with a space: %v", err)
	}
	for _, d := range []time.Duration{MinTimeout - 1, MaxTimeout + 1} {
		if _, err := Dial(t.Context(), connConfigZero(), d); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Dial timeout %v: %v", d, err)
		}
	}
}

// TestMainUsage: usage errors exit 2 before anything is read.
func TestMainUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no subcommand", nil},
		{"unknown subcommand", []string{"drain"}},
		{"no config", []string{"list", "-credentials", "c.json"}},
		{"no credentials", []string{"list", "-config", "t.json"}},
		{"show without binding", []string{"show", "-config", "t.json", "-credentials", "c.json", "-seq", "1"}},
		{"replay without seq", []string{"replay", "-config", "t.json", "-credentials", "c.json", "-binding", "b"}},
		{"limit 0", []string{"list", "-config", "t.json", "-credentials", "c.json", "-limit", "0"}},
		{"limit past MaxLimit", []string{"list", "-config", "t.json", "-credentials", "c.json", "-limit", "1001"}},
		{"timeout past MaxTimeout", []string{"list", "-config", "t.json", "-credentials", "c.json", "-timeout", "11s"}},
		{"a flag of another subcommand", []string{"list", "-config", "t.json", "-credentials", "c.json", "-seq", "1"}},
		{"an argument", []string{"list", "-config", "t.json", "-credentials", "c.json", "extra"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := Main(t.Context(), tc.args, &stdout, &stderr); code != ExitUsage || stdout.Len() != 0 {
				t.Errorf("exit %d, want %d; stdout %q", code, ExitUsage, stdout.String())
			}
		})
	}
}

// TestCut: a reason is printed whole up to MaxPrintedReason bytes, cut
// past it.
func TestCut(t *testing.T) {
	at := strings.Repeat("r", MaxPrintedReason)
	if got := cut(at); got != at {
		t.Errorf("cut at the limit = %q", got)
	}
	if got := cut(at + "x"); got != at {
		t.Errorf("cut past the limit = %q", got)
	}
}
