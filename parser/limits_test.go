package parser

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/internal/wire"
)

// infoOfLen returns an INFO line of exactly n bytes, CRLF included.
func infoOfLen(n int) string {
	const frame = `INFO {"x":""} ` + "\r\n"
	return `INFO {"x":"` + strings.Repeat("a", n-len(frame)) + `"} ` + "\r\n"
}

// msgLineOfLen returns a MSG frame whose control line is exactly n bytes.
func msgLineOfLen(n int) string {
	const frame = "MSG  1 0\r\n"
	return "MSG " + strings.Repeat("s", n-len(frame)) + " 1 0\r\n\r\n"
}

// msgEmptyReplyLineOfLen returns a MSG frame with the server's empty reply
// token whose control line is exactly n bytes: the second space counts.
func msgEmptyReplyLineOfLen(n int) string {
	const frame = "MSG  1  0\r\n"
	return "MSG " + strings.Repeat("s", n-len(frame)) + " 1  0\r\n\r\n"
}

// headerOfLen returns a header block of exactly n bytes.
func headerOfLen(n int) string {
	const frame = "NATS/1.0\r\nK: \r\n\r\n"
	return "NATS/1.0\r\nK: " + strings.Repeat("v", n-len(frame)) + "\r\n\r\n"
}

func TestCaps(t *testing.T) {
	small := Limits{MaxControlLine: 64, MaxHeader: 100, MaxPayload: 10}
	tests := []struct {
		name  string
		lim   Limits
		input string
		want  error // io.EOF: accepted
	}{
		{"INFO at MaxLine", testLimits, infoOfLen(MaxLine), io.EOF},
		{"INFO at MaxLine+1", testLimits, infoOfLen(MaxLine + 1), ErrLineTooLong},
		{"MSG line at MaxLine", testLimits, msgLineOfLen(MaxLine), io.EOF},
		{"MSG line at MaxLine+1", testLimits, msgLineOfLen(MaxLine + 1), ErrLineTooLong},
		{"MSG empty reply line at MaxLine", testLimits, msgEmptyReplyLineOfLen(MaxLine), io.EOF},
		{"MSG empty reply line at MaxLine+1", testLimits, msgEmptyReplyLineOfLen(MaxLine + 1), ErrLineTooLong},
		{"line at small cap", small, infoOfLen(64), io.EOF},
		{"line at small cap+1", small, infoOfLen(65), ErrLineTooLong},
		{"line of 6 at cap 6", Limits{6, 100, 10}, "PING\r\n", io.EOF},
		{"line of 6 at cap 5", Limits{5, 100, 10}, "PING\r\n", ErrLineTooLong},
		{"CR within cap, LF past it", Limits{5, 100, 10}, "PONG\r\n", ErrLineTooLong},
		{"header at MaxHeaderBlock", testLimits, hmsg("a", "1", "", headerOfLen(MaxHeaderBlock), "x"), io.EOF},
		{"header at MaxHeaderBlock+1", testLimits, hmsg("a", "1", "", headerOfLen(MaxHeaderBlock+1), "x"), ErrHeaderTooLarge},
		{"header at small cap", small, hmsg("a", "1", "", headerOfLen(100), ""), io.EOF},
		{"header at small cap+1", small, hmsg("a", "1", "", headerOfLen(101), ""), ErrHeaderTooLarge},
		{"MSG payload at cap", small, msg("a", "1", "", strings.Repeat("p", 10)), io.EOF},
		{"MSG payload at cap+1", small, msg("a", "1", "", strings.Repeat("p", 11)), ErrPayloadTooLarge},
		{"MSG payload at 1 MiB", testLimits, msg("a", "1", "", strings.Repeat("p", 1<<20)), io.EOF},
		{"MSG payload at 1 MiB+1", testLimits, msg("a", "1", "", strings.Repeat("p", 1<<20+1)), ErrPayloadTooLarge},
		{"HMSG payload at cap", small, hmsg("a", "1", "", "NATS/1.0\r\n\r\n", strings.Repeat("p", 10)), io.EOF},
		{"HMSG payload at cap+1", small, hmsg("a", "1", "", "NATS/1.0\r\n\r\n", strings.Repeat("p", 11)), ErrPayloadTooLarge},
		{"all caps at once", small, hmsg("a", "1", "", headerOfLen(100), strings.Repeat("p", 10)) + infoOfLen(64), io.EOF},
	}
	for _, tt := range tests {
		for _, rd := range readers() {
			t.Run(tt.name+"/"+rd.name, func(t *testing.T) {
				_, err := readAll(rd.wrap(tt.input), tt.lim)
				if !errors.Is(err, tt.want) {
					t.Fatalf("got %v, want %v", err, tt.want)
				}
			})
		}
	}
}

// TestSizesCheckedBeforeReading gives only the control line: a size over a
// cap must be reported as such, not as a truncated frame.
func TestSizesCheckedBeforeReading(t *testing.T) {
	tests := []struct {
		name string
		line string
		want error
	}{
		{"MSG over cap", "MSG a 1 999999999\r\n", ErrPayloadTooLarge},
		{"HMSG header over cap", "HMSG a 1 8193 9000\r\n", ErrHeaderTooLarge},
		{"HMSG payload over cap", "HMSG a 1 12 999999999\r\n", ErrPayloadTooLarge},
		{"HMSG header over total", "HMSG a 1 9000 12\r\n", ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readAll(&onceReader{s: tt.line}, testLimits)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestInvalidLimits(t *testing.T) {
	tests := []struct {
		name string
		lim  Limits
		want error
	}{
		{"zero", Limits{}, ErrInvalidLimits},
		{"zero line", Limits{0, 1, 1}, ErrInvalidLimits},
		{"negative line", Limits{-1, 1, 1}, ErrInvalidLimits},
		{"line past MaxLine", Limits{MaxLine + 1, 1, 1}, ErrInvalidLimits},
		{"zero header", Limits{1, 0, 1}, ErrInvalidLimits},
		{"header past MaxHeaderBlock", Limits{1, MaxHeaderBlock + 1, 1}, ErrInvalidLimits},
		{"zero payload", Limits{1, 1, 0}, ErrInvalidLimits},
		{"negative payload", Limits{1, 1, -1}, ErrInvalidLimits},
		{"payload past MaxFramePayload", Limits{1, 1, MaxFramePayload + 1}, ErrInvalidLimits},
		{"all at their maximum", Limits{MaxLine, MaxHeaderBlock, MaxFramePayload}, nil},
		{"all at one", Limits{1, 1, 1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.lim.Validate(); !errors.Is(err, tt.want) {
				t.Fatalf("Validate: got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestInvalidLimitsFailNext(t *testing.T) {
	p := New(&onceReader{s: "PING\r\n"}, Limits{MaxControlLine: MaxLine + 1, MaxHeader: 1, MaxPayload: 1})
	for range 2 {
		if _, err := p.Next(); !errors.Is(err, ErrInvalidLimits) {
			t.Fatalf("got %v, want ErrInvalidLimits", err)
		}
	}
	p.Reset(&onceReader{s: "PING\r\n"})
	if _, err := p.Next(); !errors.Is(err, ErrInvalidLimits) {
		t.Fatalf("after Reset: got %v, want ErrInvalidLimits", err)
	}
	if p.buf != nil {
		t.Errorf("invalid limits allocated %d bytes", cap(p.buf))
	}
}

// TestFixedMemory feeds frames of every size up to the caps, in an order
// that forces compaction, and checks the buffer is the one allocated by New.
func TestFixedMemory(t *testing.T) {
	lim := Limits{MaxControlLine: 128, MaxHeader: 256, MaxPayload: 512}
	var in strings.Builder
	for i := range 100 {
		in.WriteString(msg("a", strconv.Itoa(i), "", strings.Repeat("p", (i*37)%513)))
		in.WriteString(hmsg("b", "1", "r", headerOfLen(17+(i*53)%240), strings.Repeat("q", (i*91)%513)))
		in.WriteString(infoOfLen(18 + (i*7)%111))
	}
	p := New(&onceReader{s: in.String()}, lim)
	buf := p.buf
	frames := 0
	for range 1000 {
		_, err := p.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		mustNotFail(t, err)
		frames++
	}
	got := struct{ Frames, Cap, Len int }{frames, cap(p.buf), len(p.buf)}
	want := struct{ Frames, Cap, Len int }{300, lim.BufferSize(), lim.BufferSize()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if &buf[0] != &p.buf[0] {
		t.Error("buffer was replaced")
	}
}

func TestBufferSize(t *testing.T) {
	tests := []struct {
		lim  Limits
		want int
	}{
		{DefaultLimits(1 << 20), MaxLine + MaxHeaderBlock + 1<<20 + 2},
		{Limits{1, 1, 1}, 5},
		{Limits{}, 0},
	}
	for _, tt := range tests {
		if got := tt.lim.BufferSize(); got != tt.want {
			t.Errorf("%+v: got %d, want %d", tt.lim, got, tt.want)
		}
	}
}

// TestSizeDigitsMatchWire: the longest size token this parser reads is
// the one the encoder writes at most (internal/wire's MaxSize), so what
// this client publishes it can read back.
func TestSizeDigitsMatchWire(t *testing.T) {
	if n := len(strconv.Itoa(wire.MaxSize)); n != maxSizeDigits {
		t.Errorf("wire.MaxSize has %d digits, parser reads %d", n, maxSizeDigits)
	}
}
