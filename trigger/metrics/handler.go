package metrics

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/latent-systems/latent-nats/trigger"
)

// Handler returns an http.Handler that serves one scrape of m per GET or
// HEAD request, with Content-Type ContentType and a Content-Length, and
// answers 405 Method Not Allowed (with an Allow header) to every other
// method. It ignores the path and query: mount it where the embedder wants
// it (for example mux.Handle("GET /metrics", metrics.Handler(mon))). It is
// safe for concurrent use and reuses its output buffers across requests.
// Like Write, it reads the snapshot and then the last step, so the last
// step can be one the counts do not include yet.
//
// Handler panics for a nil m, as http.Handle does for a nil handler: it is
// a wiring mistake, not a request-time condition.
func Handler(m *trigger.Monitor) http.Handler {
	if m == nil {
		panic(ErrNoMonitor)
	}
	return &handler{m: m}
}

// handler serves a Monitor's exposition.
type handler struct {
	m *trigger.Monitor
	// bufs holds *[]byte output buffers for reuse.
	bufs sync.Pool
}

// allowedMethods is the Allow header of a 405 answer.
const allowedMethods = http.MethodGet + ", " + http.MethodHead

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", allowedMethods)
		http.Error(w, "metrics: method not allowed", http.StatusMethodNotAllowed)
		return
	}
	s := h.m.Snapshot()
	last, ok := h.m.LastStep()
	bp, _ := h.bufs.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, 0, sizeHint(len(s.Bindings)))
		bp = &b
	}
	b := Append((*bp)[:0], s, last, ok)
	hdr := w.Header()
	hdr.Set("Content-Type", ContentType)
	hdr.Set("Content-Length", strconv.Itoa(len(b)))
	hdr.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		// A write error means the client went away; there is no one left
		// to tell.
		_, _ = w.Write(b)
	}
	*bp = b
	h.bufs.Put(bp)
}
