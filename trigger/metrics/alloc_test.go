package metrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/metrics"
)

// Allocation bounds of one scrape.
const (
	// appendAllocs: Append into a buffer with the capacity allocates
	// nothing.
	appendAllocs = 0
	// writeAllocs: Monitor.Snapshot's copies of the counts and of the
	// consumer states, and Write's buffer.
	writeAllocs = 3
	// handlerAllocs: the snapshot's two copies, three header values and
	// the Content-Length text, plus one for a buffer sync.Pool dropped.
	handlerAllocs = 7
)

// TestAppendAllocs: a scrape of MaxBindings bindings with every count at
// its largest into a reused buffer allocates nothing.
func TestAppendAllocs(t *testing.T) {
	s := maxSnapshot(trigger.MaxBindings)
	last := knownLast()
	buf := metrics.Append(nil, s, last, true)
	got := testing.AllocsPerRun(20, func() {
		buf = metrics.Append(buf[:0], s, last, true)
	})
	if got > appendAllocs {
		t.Errorf("Append allocates %v per scrape, want at most %d", got, appendAllocs)
	}
}

// TestWriteAllocs bounds Write on a real Monitor.
func TestWriteAllocs(t *testing.T) {
	trig, mon := install(t, trigger.DefaultPoolLimits())
	runKinds(t, trig)
	got := testing.AllocsPerRun(20, func() {
		if err := metrics.Write(io.Discard, mon); err != nil {
			t.Fatal(err)
		}
	})
	if got > writeAllocs {
		t.Errorf("Write allocates %v per scrape, want at most %d", got, writeAllocs)
	}
}

// headerWriter is a minimal http.ResponseWriter that keeps its header map
// across requests, so only the handler's own allocations count.
type headerWriter struct {
	h    http.Header
	code int
	n    int
}

func (w *headerWriter) Header() http.Header  { return w.h }
func (w *headerWriter) WriteHeader(code int) { w.code = code }
func (w *headerWriter) Write(b []byte) (int, error) {
	w.n += len(b)
	return len(b), nil
}

// TestHandlerAllocs bounds a GET on a real Monitor, buffers reused.
func TestHandlerAllocs(t *testing.T) {
	trig, mon := install(t, trigger.DefaultPoolLimits())
	runKinds(t, trig)
	h := metrics.Handler(mon)
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	w := &headerWriter{h: http.Header{}}
	h.ServeHTTP(w, req)
	if w.code != http.StatusOK || w.n == 0 {
		t.Fatalf("GET: %d, %d bytes", w.code, w.n)
	}
	got := testing.AllocsPerRun(50, func() {
		h.ServeHTTP(w, req)
	})
	if got > handlerAllocs {
		t.Errorf("Handler allocates %v per GET, want at most %d", got, handlerAllocs)
	}
	t.Logf("%v allocations per GET", got)
}
