package parser

import (
	"errors"
	"io"
	"strconv"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// chunkReader serves at most n bytes per Read.
type chunkReader struct {
	r io.Reader
	n int
}

func (c *chunkReader) Read(b []byte) (int, error) {
	if len(b) > c.n {
		b = b[:c.n]
	}
	return c.r.Read(b)
}

// outcome is what a whole parse yields, comparable across input splits.
type outcome struct {
	Frames   []copied
	Sentinel string
	Op       Op
	Offset   int64
}

func parseOutcome(r io.Reader, lim Limits) outcome {
	frames, err := readAll(r, lim)
	o := outcome{Frames: frames, Sentinel: sentinelName(err)}
	var pe *Error
	if errors.As(err, &pe) {
		o.Op, o.Offset = pe.Op, pe.Offset
	}
	return o
}

func sentinelName(err error) string {
	s := sentinelOf(err)
	if s == nil {
		return "<nil>"
	}
	return s.Error()
}

// encode writes a frame back as the server would, with canonical sizes.
func encode(f copied) string {
	switch f.Op {
	case OpInfo:
		return "INFO " + f.Info + " \r\n"
	case OpMsg:
		return msg(f.Subject, f.SID, f.Reply, f.Payload)
	case OpHMsg:
		return hmsg(f.Subject, f.SID, f.Reply, f.Header, f.Payload)
	case OpErr:
		return "-ERR '" + f.ErrText + "'\r\n"
	}
	return f.Op.String() + "\r\n"
}

// FuzzParser checks, for any input and caps:
//   - splitting the input into reads of one byte, of k bytes, or all at
//     once yields the same frames and the same final error at the same offset;
//   - no returned slice exceeds its cap;
//   - every accepted frame re-encodes (with canonical sizes, and an empty
//     reply token as no reply) to bytes that parse back to the same frames,
//     and no longer than what was consumed.
func FuzzParser(f *testing.F) {
	seeds := []string{
		"INFO {} \r\n", "PING\r\nPONG\r\n+OK\r\n", "-ERR 'Stale Connection'\r\n",
		"MSG a.b 1 5\r\nhello\r\n", "MSG a 1 r 007\r\nabcdefg\r\n",
		"HMSG a 1 28 28\r\nNATS/1.0 404 No Messages\r\n\r\n\r\n",
		"HMSG a 1 r 22 24\r\nNATS/1.0\r\nK: v\r\n\r\nhi\r\n",
		"MSG a 1 99999999999\r\n", "HMSG a 1 14 12\r\n", "PING\n", "msg a 1 0\r\n\r\n",
		"MSG a 1  5\r\nhello\r\n", "HMSG a 1  12 14\r\nNATS/1.0\r\n\r\nhi\r\n",
		"MSG a 1   5\r\nhello\r\n", "HMSG a 1  r 12 12\r\nNATS/1.0\r\n\r\n\r\n",
	}
	// The caps below map to MaxLine, MaxHeaderBlock and 64 KiB (see the
	// reduction in the target), so the seeds are parsed under full caps.
	for _, s := range seeds {
		f.Add([]byte(s), uint16(MaxLine-1), uint16(MaxHeaderBlock-1), uint32(1<<16-1), uint8(7))
	}
	f.Fuzz(func(t *testing.T, data []byte, lineCap, hdrCap uint16, payloadCap uint32, chunk uint8) {
		lim := Limits{
			MaxControlLine: 1 + int(lineCap)%MaxLine,
			MaxHeader:      1 + int(hdrCap)%MaxHeaderBlock,
			MaxPayload:     1 + int(payloadCap)%(1<<16),
		}
		in := string(data)
		whole := parseOutcome(&onceReader{s: in}, lim)
		oneByte := parseOutcome(iotest.OneByteReader(&onceReader{s: in}), lim)
		chunked := parseOutcome(&chunkReader{r: &onceReader{s: in}, n: 1 + int(chunk)}, lim)
		if diff := cmp.Diff(whole, oneByte); diff != "" {
			t.Fatalf("one byte at a time differs (-whole +split):\n%s", diff)
		}
		if diff := cmp.Diff(whole, chunked); diff != "" {
			t.Fatalf("chunks of %d differ (-whole +split):\n%s", 1+int(chunk), diff)
		}
		var again string
		for _, fr := range whole.Frames {
			if len(fr.Header) > lim.MaxHeader || len(fr.Payload) > lim.MaxPayload ||
				len(fr.Info) > lim.MaxControlLine || len(fr.ErrText) > lim.MaxControlLine ||
				len(fr.Subject)+len(fr.SID)+len(fr.Reply) > lim.MaxControlLine {
				t.Fatalf("frame over its caps: %+v", fr)
			}
			again += encode(fr)
		}
		consumed := len(in)
		if whole.Sentinel != "EOF" {
			consumed = int(whole.Offset)
		}
		if len(again) > consumed {
			t.Fatalf("canonical form of %d bytes longer than the %d consumed", len(again), consumed)
		}
		if diff := cmp.Diff(whole.Frames, parseOutcome(&onceReader{s: again}, lim).Frames); diff != "" {
			t.Fatalf("re-encoded frames differ (-first +again):\n%s", diff)
		}
	})
}

func TestEncodeHelperRoundTrip(t *testing.T) {
	in := "INFO {} \r\nPING\r\n" + msg("a", "1", "r", "x") + hmsg("a", "2", "", "NATS/1.0\r\n\r\n", "") +
		"-ERR 'x'\r\n+OK\r\nPONG\r\n"
	frames, err := readAll(&onceReader{s: in}, testLimits)
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	var out string
	for _, f := range frames {
		out += encode(f)
	}
	if out != in {
		t.Errorf("got %q, want %q", out, in)
	}
	if got := strconv.Itoa(len(frames)); got != "7" {
		t.Errorf("got %s frames, want 7", got)
	}
}
