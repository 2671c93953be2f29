package acksubject_test

import (
	"testing"

	"github.com/latent-systems/latent-nats/acksubject"
)

// benchSubjects are the inputs of the benchmarks, one per form and size.
func benchSubjects() []struct{ name, subject string } {
	return []struct{ name, subject string }{
		{"classic", liveClassic},
		{"v2", liveV2NoDomain},
		{"v2-longest", maxInfo(acksubject.FormV2).String()},
	}
}

func BenchmarkParse(b *testing.B) {
	for _, bm := range benchSubjects() {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bm.subject)))
			for b.Loop() {
				if _, err := acksubject.Parse(bm.subject); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkString(b *testing.B) {
	for _, bm := range benchSubjects() {
		info, err := acksubject.Parse(bm.subject)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bm.subject)))
			for b.Loop() {
				_ = info.String()
			}
		})
	}
}

func BenchmarkAppend(b *testing.B) {
	for _, bm := range benchSubjects() {
		info, err := acksubject.Parse(bm.subject)
		if err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, 0, acksubject.MaxLen)
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bm.subject)))
			for b.Loop() {
				if _, err := info.Append(buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAccountHash(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = acksubject.AccountHash(globalAccount)
	}
}
