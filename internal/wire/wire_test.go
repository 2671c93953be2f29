package wire

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAppendValid(t *testing.T) {
	hdr := "NATS/1.0\r\nNats-Msg-Id: 7\r\n\r\n"
	tests := []struct {
		name string
		fn   func([]byte) ([]byte, error)
		want string
	}{
		{"PUB", func(b []byte) ([]byte, error) { return AppendPubText(b, "a.b", "", []byte("hello"), 10) },
			"PUB a.b 5\r\nhello\r\n"},
		{"PUB with reply", func(b []byte) ([]byte, error) { return AppendPubText(b, "a", "_INBOX.x.1", []byte("hi"), 10) },
			"PUB a _INBOX.x.1 2\r\nhi\r\n"},
		{"PUB empty payload", func(b []byte) ([]byte, error) { return AppendPubText(b, "a", "", nil, 1) },
			"PUB a 0\r\n\r\n"},
		{"PUB payload at max", func(b []byte) ([]byte, error) { return AppendPubText(b, "a", "", []byte("xyz"), 3) },
			"PUB a 3\r\nxyz\r\n"},
		{"PUB JetStream API", func(b []byte) ([]byte, error) {
			return AppendPubText(b, "$JS.API.CONSUMER.MSG.NEXT.S.C", "_INBOX.a.1", []byte(`{"batch":1}`), 1<<20)
		}, "PUB $JS.API.CONSUMER.MSG.NEXT.S.C _INBOX.a.1 11\r\n{\"batch\":1}\r\n"},
		{"PUB wildcard characters inside tokens", func(b []byte) ([]byte, error) { return AppendPubText(b, "a*.b>", "", nil, 1) },
			"PUB a*.b> 0\r\n\r\n"},
		{"HPUB", func(b []byte) ([]byte, error) { return AppendHPubText(b, "a", "", []byte(hdr), []byte("hi"), 100) },
			"HPUB a 28 30\r\n" + hdr + "hi\r\n"},
		{"HPUB with reply", func(b []byte) ([]byte, error) {
			return AppendHPubText(b, "a", "r", []byte("NATS/1.0\r\n\r\n"), nil, 12)
		},
			"HPUB a r 12 12\r\nNATS/1.0\r\n\r\n\r\n"},
		{"SUB", func(b []byte) ([]byte, error) { return AppendSub(b, "_INBOX.x.*", "1") }, "SUB _INBOX.x.* 1\r\n"},
		{"SUB full wildcard", func(b []byte) ([]byte, error) { return AppendSub(b, "a.>", "s1") }, "SUB a.> s1\r\n"},
		{"PING", func(b []byte) ([]byte, error) { return AppendPing(b), nil }, "PING\r\n"},
		{"PONG", func(b []byte) ([]byte, error) { return AppendPong(b), nil }, "PONG\r\n"},
		{"header none", func(b []byte) ([]byte, error) { return AppendHeader(b) }, "NATS/1.0\r\n\r\n"},
		{"header pairs", func(b []byte) ([]byte, error) { return AppendHeader(b, "Nats-Msg-Id", "7", "K", "a", "K", "b") },
			"NATS/1.0\r\nNats-Msg-Id: 7\r\nK: a\r\nK: b\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.fn([]byte("prefix|"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("prefix|"+tt.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAppendShouldFail(t *testing.T) {
	long := strings.Repeat("a", MaxControlLine)
	tests := []struct {
		name string
		fn   func([]byte) ([]byte, error)
		want error
	}{
		{"PUB empty subject", func(b []byte) ([]byte, error) { return AppendPubText(b, "", "", nil, 1) }, ErrInvalidSubject},
		{"PUB empty token", func(b []byte) ([]byte, error) { return AppendPubText(b, "a..b", "", nil, 1) }, ErrInvalidSubject},
		{"PUB leading dot", func(b []byte) ([]byte, error) { return AppendPubText(b, ".a", "", nil, 1) }, ErrInvalidSubject},
		{"PUB trailing dot", func(b []byte) ([]byte, error) { return AppendPubText(b, "a.", "", nil, 1) }, ErrInvalidSubject},
		{"PUB star", func(b []byte) ([]byte, error) { return AppendPubText(b, "a.*", "", nil, 1) }, ErrInvalidSubject},
		{"PUB gt", func(b []byte) ([]byte, error) { return AppendPubText(b, "a.>", "", nil, 1) }, ErrInvalidSubject},
		{"PUB space", func(b []byte) ([]byte, error) { return AppendPubText(b, "a b", "", nil, 1) }, ErrInvalidSubject},
		{"PUB tab", func(b []byte) ([]byte, error) { return AppendPubText(b, "a\tb", "", nil, 1) }, ErrInvalidSubject},
		{"PUB CR", func(b []byte) ([]byte, error) { return AppendPubText(b, "a\rb", "", nil, 1) }, ErrInvalidSubject},
		{"PUB LF", func(b []byte) ([]byte, error) { return AppendPubText(b, "a\nb", "", nil, 1) }, ErrInvalidSubject},
		{"PUB NUL", func(b []byte) ([]byte, error) { return AppendPubText(b, "a\x00b", "", nil, 1) }, ErrInvalidSubject},
		{"PUB DEL", func(b []byte) ([]byte, error) { return AppendPubText(b, "a\x7fb", "", nil, 1) }, ErrInvalidSubject},
		{"PUB reply space", func(b []byte) ([]byte, error) { return AppendPubText(b, "a", "r r", nil, 1) }, ErrInvalidReply},
		{"PUB reply wildcard", func(b []byte) ([]byte, error) { return AppendPubText(b, "a", "r.*", nil, 1) }, ErrInvalidReply},
		{"PUB reply empty token", func(b []byte) ([]byte, error) { return AppendPubText(b, "a", "r..s", nil, 1) }, ErrInvalidReply},
		{"PUB payload over max", func(b []byte) ([]byte, error) { return AppendPubText(b, "a", "", []byte("xyzw"), 3) }, ErrPayloadTooLarge},
		{"PUB zero max", func(b []byte) ([]byte, error) { return AppendPubText(b, "a", "", nil, 0) }, ErrInvalidMaxPayload},
		{"PUB negative max", func(b []byte) ([]byte, error) { return AppendPubText(b, "a", "", nil, -1) }, ErrInvalidMaxPayload},
		{"PUB line over cap", func(b []byte) ([]byte, error) { return AppendPubText(b, long, "", nil, 1) }, ErrLineTooLong},
		{"HPUB header missing version", func(b []byte) ([]byte, error) {
			return AppendHPubText(b, "a", "", []byte("K: v\r\n\r\n"), nil, 100)
		}, ErrInvalidHeader},
		{"HPUB header with status", func(b []byte) ([]byte, error) {
			return AppendHPubText(b, "a", "", []byte("NATS/1.0 503\r\n\r\n"), nil, 100)
		}, ErrInvalidHeader},
		{"HPUB header without blank line", func(b []byte) ([]byte, error) {
			return AppendHPubText(b, "a", "", []byte("NATS/1.0\r\nK: v\r\n"), nil, 100)
		}, ErrInvalidHeader},
		{"HPUB header bare LF", func(b []byte) ([]byte, error) {
			return AppendHPubText(b, "a", "", []byte("NATS/1.0\r\nK: v\n\r\n"), nil, 100)
		}, ErrInvalidHeader},
		{"HPUB header value with CR", func(b []byte) ([]byte, error) {
			return AppendHPubText(b, "a", "", []byte("NATS/1.0\r\nK: v\rw\r\n\r\n"), nil, 100)
		}, ErrInvalidHeader},
		{"HPUB header name with space", func(b []byte) ([]byte, error) {
			return AppendHPubText(b, "a", "", []byte("NATS/1.0\r\nK K: v\r\n\r\n"), nil, 100)
		}, ErrInvalidHeader},
		{"HPUB header empty", func(b []byte) ([]byte, error) { return AppendHPubText(b, "a", "", nil, nil, 100) }, ErrInvalidHeader},
		{"HPUB header and payload over max", func(b []byte) ([]byte, error) {
			return AppendHPubText(b, "a", "", []byte("NATS/1.0\r\n\r\n"), []byte("x"), 12)
		}, ErrPayloadTooLarge},
		{"HPUB wildcard", func(b []byte) ([]byte, error) {
			return AppendHPubText(b, "*", "", []byte("NATS/1.0\r\n\r\n"), nil, 100)
		}, ErrInvalidSubject},
		{"header odd pairs", func(b []byte) ([]byte, error) { return AppendHeader(b, "K") }, ErrInvalidHeader},
		{"header empty name", func(b []byte) ([]byte, error) { return AppendHeader(b, "", "v") }, ErrInvalidHeader},
		{"header name colon", func(b []byte) ([]byte, error) { return AppendHeader(b, "K:", "v") }, ErrInvalidHeader},
		{"header name space", func(b []byte) ([]byte, error) { return AppendHeader(b, "K K", "v") }, ErrInvalidHeader},
		{"header name non-ASCII", func(b []byte) ([]byte, error) { return AppendHeader(b, "K\xc3\xa9", "v") }, ErrInvalidHeader},
		{"header empty value", func(b []byte) ([]byte, error) { return AppendHeader(b, "K", "") }, ErrInvalidHeader},
		{"header value space", func(b []byte) ([]byte, error) { return AppendHeader(b, "K", "a b") }, ErrInvalidHeader},
		{"header value tab", func(b []byte) ([]byte, error) { return AppendHeader(b, "K", "a\tb") }, ErrInvalidHeader},
		{"header value CRLF", func(b []byte) ([]byte, error) { return AppendHeader(b, "K", "a\r\nX: y") }, ErrInvalidHeader},
		{"header value NUL", func(b []byte) ([]byte, error) { return AppendHeader(b, "K", "a\x00") }, ErrInvalidHeader},
		{"SUB empty", func(b []byte) ([]byte, error) { return AppendSub(b, "", "1") }, ErrInvalidSubject},
		{"SUB gt not last", func(b []byte) ([]byte, error) { return AppendSub(b, "a.>.b", "1") }, ErrInvalidSubject},
		{"SUB space", func(b []byte) ([]byte, error) { return AppendSub(b, "a b", "1") }, ErrInvalidSubject},
		{"SUB empty sid", func(b []byte) ([]byte, error) { return AppendSub(b, "a", "") }, ErrInvalidSID},
		{"SUB sid space", func(b []byte) ([]byte, error) { return AppendSub(b, "a", "1 2") }, ErrInvalidSID},
		{"SUB sid LF", func(b []byte) ([]byte, error) { return AppendSub(b, "a", "1\n") }, ErrInvalidSID},
		{"SUB line over cap", func(b []byte) ([]byte, error) { return AppendSub(b, long, "1") }, ErrLineTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte("prefix|")
			got, err := tt.fn(dst)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			var we *Error
			if !errors.As(err, &we) {
				t.Errorf("got %T, want *Error", err)
			}
			if string(got) != "prefix|" || len(got) != len(dst) {
				t.Errorf("dst changed to %q", got)
			}
		})
	}
}

// pubLineOfLen returns a subject making "PUB <subject> 0\r\n" exactly n bytes.
func pubSubjectFor(n int) string { return strings.Repeat("s", n-len("PUB  0\r\n")) }

func TestCaps(t *testing.T) {
	tests := []struct {
		name string
		fn   func() error
		want error
	}{
		{"PUB line at cap", func() error { _, err := AppendPubText(nil, pubSubjectFor(MaxControlLine), "", nil, 1); return err }, nil},
		{"PUB line past cap", func() error { _, err := AppendPubText(nil, pubSubjectFor(MaxControlLine+1), "", nil, 1); return err }, ErrLineTooLong},
		{"HPUB line at cap", func() error {
			_, err := AppendHPubText(nil, strings.Repeat("s", MaxControlLine-len("HPUB  12 12\r\n")), "", []byte("NATS/1.0\r\n\r\n"), nil, 100)
			return err
		}, nil},
		{"HPUB line past cap", func() error {
			_, err := AppendHPubText(nil, strings.Repeat("s", MaxControlLine+1-len("HPUB  12 12\r\n")), "", []byte("NATS/1.0\r\n\r\n"), nil, 100)
			return err
		}, ErrLineTooLong},
		{"SUB line at cap", func() error {
			_, err := AppendSub(nil, strings.Repeat("s", MaxControlLine-len("SUB  1\r\n")), "1")
			return err
		}, nil},
		{"SUB line past cap", func() error {
			_, err := AppendSub(nil, strings.Repeat("s", MaxControlLine+1-len("SUB  1\r\n")), "1")
			return err
		}, ErrLineTooLong},
		{"header at cap", func() error { _, err := AppendHeader(nil, "K", headerValueFor(MaxOutboundHeader)); return err }, nil},
		{"header past cap", func() error { _, err := AppendHeader(nil, "K", headerValueFor(MaxOutboundHeader+1)); return err }, ErrHeaderTooLarge},
		{"HPUB block at cap", func() error {
			h, _ := AppendHeader(nil, "K", headerValueFor(MaxOutboundHeader))
			_, err := AppendHPubText(nil, "a", "", h, nil, 1<<20)
			return err
		}, nil},
		{"HPUB block past cap", func() error {
			h := []byte("NATS/1.0\r\nK: " + headerValueFor(MaxOutboundHeader+1) + "\r\n\r\n")
			_, err := AppendHPubText(nil, "a", "", h, nil, 1<<20)
			return err
		}, ErrHeaderTooLarge},
		{"payload at max", func() error { _, err := AppendPubText(nil, "a", "", make([]byte, 1<<20), 1<<20); return err }, nil},
		{"payload past max", func() error { _, err := AppendPubText(nil, "a", "", make([]byte, 1<<20+1), 1<<20); return err }, ErrPayloadTooLarge},
		{"HPUB total at max", func() error {
			_, err := AppendHPubText(nil, "a", "", []byte("NATS/1.0\r\n\r\n"), make([]byte, 88), 100)
			return err
		}, nil},
		{"HPUB total past max", func() error {
			_, err := AppendHPubText(nil, "a", "", []byte("NATS/1.0\r\n\r\n"), make([]byte, 89), 100)
			return err
		}, ErrPayloadTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.fn(); !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}

// headerValueFor returns a value making the one-field block exactly n bytes.
func headerValueFor(n int) string {
	return strings.Repeat("v", n-len("NATS/1.0\r\nK: \r\n\r\n"))
}

func TestValidSubject(t *testing.T) {
	tests := []struct {
		subject      string
		sub, publish error
	}{
		{"a", nil, nil},
		{"a.b.c", nil, nil},
		{"$JS.ACK.S.C.1.2.3.4.5", nil, nil},
		{"a.b@%~.c", nil, nil},
		{"\xc3\xa9t\xc3\xa9", nil, nil},
		{"*", nil, ErrInvalidSubject},
		{">", nil, ErrInvalidSubject},
		{"a.*.c", nil, ErrInvalidSubject},
		{"a.>", nil, ErrInvalidSubject},
		{"a.>.c", ErrInvalidSubject, ErrInvalidSubject},
		{"", ErrInvalidSubject, ErrInvalidSubject},
		{".", ErrInvalidSubject, ErrInvalidSubject},
		{"a b", ErrInvalidSubject, ErrInvalidSubject},
		{"a\x01", ErrInvalidSubject, ErrInvalidSubject},
	}
	for _, tt := range tests {
		t.Run(tt.subject, func(t *testing.T) {
			if _, err := AppendSub(nil, tt.subject, "1"); !errors.Is(err, tt.sub) {
				t.Errorf("AppendSub: got %v, want %v", err, tt.sub)
			}
			if err := ValidPublishSubject(tt.subject); !errors.Is(err, tt.publish) {
				t.Errorf("ValidPublishSubject: got %v, want %v", err, tt.publish)
			}
		})
	}
}

func TestErrorsCarryNoInput(t *testing.T) {
	const secret = "s3cr3t"
	errs := []error{
		func() error { _, err := AppendSub(nil, secret+" x", "1"); return err }(),
		func() error { _, err := AppendHeader(nil, "K", secret+" x"); return err }(),
		func() error { _, err := AppendPubText(nil, "a", secret+" x", nil, 1); return err }(),
		func() error { _, err := AppendSub(nil, "a", secret+" x"); return err }(),
	}
	for _, err := range errs {
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("error %v carries input", err)
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	buf := make([]byte, 0, 4096)
	payload := make([]byte, 256)
	hdr := []byte("NATS/1.0\r\nNats-Msg-Id: 7\r\n\r\n")
	// Over the 32 bytes a string conversion may keep on the stack.
	longReply := []byte("_INBOX.0123456789abcdefghijkl.123456")
	tests := []struct {
		name string
		fn   func()
	}{
		{"PUB", func() { _, _ = AppendPubText(buf[:0], "a.b", "_INBOX.x.1", payload, 1<<20) }},
		{"HPUB", func() { _, _ = AppendHPubText(buf[:0], "a.b", "_INBOX.x.1", hdr, payload, 1<<20) }},
		{"PUB reply bytes", func() { _, _ = AppendPubText(buf[:0], "a.b", longReply, payload, 1<<20) }},
		{"PUB subject and reply bytes", func() { _, _ = AppendPubText(buf[:0], longReply, longReply, payload, 1<<20) }},
		{"HPUB reply bytes", func() { _, _ = AppendHPubText(buf[:0], "a.b", longReply, hdr, payload, 1<<20) }},
		{"SUB", func() { _, _ = AppendSub(buf[:0], "_INBOX.x.*", "1") }},
		{"header", func() { _, _ = AppendHeader(buf[:0], "Nats-Msg-Id", "7") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if a := testing.AllocsPerRun(100, tt.fn); a != 0 {
				t.Errorf("%v allocs, want 0", a)
			}
		})
	}
}

// TestAppendText checks that the string and byte-slice forms of the
// subject and reply encode the same bytes and refuse the same input with
// the same sentinel.
func TestAppendText(t *testing.T) {
	hdr := []byte("NATS/1.0\r\n\r\n")
	tests := []struct {
		name, subject, reply string
		want                 error
	}{
		{"no reply", "a.b", "", nil},
		{"reply", "$JS.ACK.S.C.1.2.3.4.0", "_INBOX.x.17", nil},
		{"empty subject", "", "r", ErrInvalidSubject},
		{"wildcard subject", "a.*", "r", ErrInvalidSubject},
		{"full wildcard subject", "a.>", "r", ErrInvalidSubject},
		{"empty token", "a..b", "r", ErrInvalidSubject},
		{"reply with space", "a", "r r", ErrInvalidReply},
		{"reply wildcard", "a", "r.>", ErrInvalidReply},
		{"reply trailing dot", "a", "r.", ErrInvalidReply},
		{"line past cap", pubSubjectFor(MaxControlLine + 1), "", ErrLineTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type result struct {
				Out string
				Err bool
			}
			run := func(out []byte, err error) result {
				if !errors.Is(err, tt.want) {
					t.Errorf("error %v, want %v", err, tt.want)
				}
				return result{string(out), err != nil}
			}
			want := run(AppendPubText([]byte("x"), tt.subject, tt.reply, []byte("p"), 10))
			got := []result{
				run(AppendPubText([]byte("x"), tt.subject, []byte(tt.reply), []byte("p"), 10)),
				run(AppendPubText([]byte("x"), []byte(tt.subject), tt.reply, []byte("p"), 10)),
				run(AppendPubText([]byte("x"), []byte(tt.subject), []byte(tt.reply), []byte("p"), 10)),
			}
			if diff := cmp.Diff([]result{want, want, want}, got); diff != "" {
				t.Errorf("PUB forms (-want +got):\n%s", diff)
			}
			hwant := run(AppendHPubText([]byte("x"), tt.subject, tt.reply, hdr, []byte("p"), 100))
			hgot := []result{
				run(AppendHPubText([]byte("x"), tt.subject, []byte(tt.reply), hdr, []byte("p"), 100)),
				run(AppendHPubText([]byte("x"), []byte(tt.subject), []byte(tt.reply), hdr, []byte("p"), 100)),
			}
			if diff := cmp.Diff([]result{hwant, hwant}, hgot); diff != "" {
				t.Errorf("HPUB forms (-want +got):\n%s", diff)
			}
		})
	}
}
