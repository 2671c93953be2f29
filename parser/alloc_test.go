package parser

import (
	"testing"

	"github.com/latent-systems/latent-nats/internal/frametest"
)

// TestZeroAllocs asserts that Next allocates nothing per frame in steady
// state, for every benchmark shape, for the ops without a body and for the
// empty reply token, and that HeaderValue and HeaderValueFold allocate
// nothing.
func TestZeroAllocs(t *testing.T) {
	frames := map[string][]byte{
		"PING": []byte("PING\r\n"),
		"PONG": []byte("PONG\r\n"),
		"+OK":  []byte("+OK\r\n"),
		"-ERR": []byte("-ERR 'Stale Connection'\r\n"),
		"INFO": []byte("INFO " + infoJSON + " \r\n"),
		// The server's empty reply token, as system services answer.
		"MSG empty reply":  []byte("MSG _INBOX.x.1 1  5\r\nhello\r\n"),
		"HMSG empty reply": []byte("HMSG _INBOX.x.1 1  12 14\r\nNATS/1.0\r\n\r\nhi\r\n"),
	}
	for _, s := range frametest.Shapes() {
		frames[s.Name] = s.Frame
	}
	for name, frame := range frames {
		t.Run(name, func(t *testing.T) {
			p := New(frametest.NewLoopReader(frame), testLimits)
			var err error
			allocs := testing.AllocsPerRun(1000, func() {
				if _, e := p.Next(); e != nil {
					err = e
				}
			})
			mustNotFail(t, err)
			if allocs != 0 {
				t.Errorf("Next: %v allocs per frame, want 0", allocs)
			}
		})
	}
	t.Run("HeaderValue", func(t *testing.T) {
		s, _ := frametest.Lookup("JS/status-408")
		p := New(frametest.NewLoopReader(s.Frame), testLimits)
		f, err := p.Next()
		mustNotFail(t, err)
		allocs := testing.AllocsPerRun(1000, func() {
			_, _ = f.HeaderValue("Nats-Pending-Bytes")
		})
		if allocs != 0 {
			t.Errorf("HeaderValue: %v allocs, want 0", allocs)
		}
		allocs = testing.AllocsPerRun(1000, func() {
			_, _ = HeaderValueFold(f.Header, "nats-pending-bytes")
		})
		if allocs != 0 {
			t.Errorf("HeaderValueFold: %v allocs, want 0", allocs)
		}
	})
}
