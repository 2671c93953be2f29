package parser

import (
	"testing"

	"github.com/latent-systems/latent-nats/internal/frametest"
)

// BenchmarkNext decodes one complete Frame per op (header block parsed
// where present) from a looping reader, for every frametest shape. The
// peer benchmark in tools/peerbench runs the same shapes through nats.go.
func BenchmarkNext(b *testing.B) {
	for _, s := range frametest.Shapes() {
		b.Run(s.Name, func(b *testing.B) {
			p := New(frametest.NewLoopReader(s.Frame), DefaultLimits(1<<20))
			b.SetBytes(int64(len(s.Frame)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Next(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNextLookup adds the lookup of one header value, as a consumer of
// a JetStream status or a de-duplicated message would do.
func BenchmarkNextLookup(b *testing.B) {
	for _, c := range []struct{ shape, key string }{
		{"JS/HMSG-256B-ack-msgid", "Nats-Msg-Id"},
		{"JS/status-408", "Nats-Pending-Messages"},
	} {
		s, _ := frametest.Lookup(c.shape)
		b.Run(s.Name, func(b *testing.B) {
			p := New(frametest.NewLoopReader(s.Frame), DefaultLimits(1<<20))
			b.SetBytes(int64(len(s.Frame)))
			b.ReportAllocs()
			for b.Loop() {
				f, err := p.Next()
				if err != nil {
					b.Fatal(err)
				}
				if _, ok := f.HeaderValue(c.key); !ok {
					b.Fatal("header value missing")
				}
			}
		})
	}
}

// BenchmarkParseHeader decodes header blocks alone.
func BenchmarkParseHeader(b *testing.B) {
	for _, name := range []string{"JS/HMSG-256B-ack-msgid", "JS/status-408"} {
		s, _ := frametest.Lookup(name)
		block := []byte(s.Header)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(block)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := ParseHeader(block); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
