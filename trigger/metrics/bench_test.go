package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/metrics"
)

// BenchmarkAppend renders snapshots of 1, 16 and MaxBindings bindings with
// six-digit counts into a reused buffer.
func BenchmarkAppend(b *testing.B) {
	for _, n := range []int{1, 16, trigger.MaxBindings} {
		b.Run("bindings="+strconv.Itoa(n), func(b *testing.B) {
			s := knownSnapshot()
			s.Bindings = make([]trigger.Counts, n)
			for i := range s.Bindings {
				s.Bindings[i] = knownSnapshot().Bindings[i%2]
			}
			last := knownLast()
			buf := metrics.Append(nil, s, last, true)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				buf = metrics.Append(buf[:0], s, last, true)
			}
		})
	}
}

// BenchmarkHandler serves GETs of a real three-binding Monitor.
func BenchmarkHandler(b *testing.B) {
	_, mon := install(b, trigger.DefaultPoolLimits())
	h := metrics.Handler(mon)
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	w := &headerWriter{h: http.Header{}}
	h.ServeHTTP(w, req)
	b.SetBytes(int64(w.n))
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, req)
	}
}
