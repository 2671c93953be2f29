package broker

import (
	"bytes"
	"io"
	"net/netip"
	"sync"
)

// Markers the server logs (nats-server v2.14.6 server.go, Start and
// AcceptLoop).
const (
	listenMarker = "Listening for client connections on "
	readyMarker  = "Server is ready"
)

// logRing keeps the last MaxLogBytes bytes written to it.
type logRing struct {
	mu   sync.Mutex
	data []byte
}

func (r *logRing) write(p []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(p) >= MaxLogBytes {
		r.data = append(r.data[:0], p[len(p)-MaxLogBytes:]...)
		return
	}
	if len(r.data)+len(p) > MaxLogBytes {
		drop := len(r.data) + len(p) - MaxLogBytes
		r.data = append(r.data[:0], r.data[drop:]...)
	}
	r.data = append(r.data, p...)
}

func (r *logRing) bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.data)
}

// logSink receives one server process's output: it appends it to the
// broker's ring, forwards whole lines, and watches for the listener address
// and readiness.
type logSink struct {
	ring    *logRing
	forward io.Writer // may be nil

	mu    sync.Mutex
	line  []byte // the current line, at most MaxLogLine bytes
	addr  netip.AddrPort
	ready chan struct{} // closed at the readiness marker
	done  bool
}

func newLogSink(ring *logRing, forward io.Writer) *logSink {
	return &logSink{ring: ring, forward: forward, ready: make(chan struct{}), line: make([]byte, 0, MaxLogLine)}
}

// Write never fails, so the child's output is always drained.
func (s *logSink) Write(p []byte) (int, error) {
	s.ring.write(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		chunk := p
		i := bytes.IndexByte(p, '\n')
		if i >= 0 {
			chunk = p[:i+1]
		}
		p = p[len(chunk):]
		room := MaxLogLine - len(s.line)
		s.line = append(s.line, chunk[:min(room, len(chunk))]...)
		if i >= 0 {
			if s.line[len(s.line)-1] != '\n' {
				s.line[len(s.line)-1] = '\n' // cut: the line is MaxLogLine bytes
			}
			s.onLine(s.line)
			s.line = s.line[:0]
		}
	}
	return n, nil
}

func (s *logSink) onLine(line []byte) {
	if s.forward != nil {
		_, _ = s.forward.Write(line)
	}
	if i := bytes.Index(line, []byte(listenMarker)); i >= 0 && !s.addr.IsValid() {
		rest := bytes.TrimSpace(line[i+len(listenMarker):])
		if ap, err := netip.ParseAddrPort(string(rest)); err == nil {
			s.addr = ap
		}
	}
	if !s.done && bytes.Contains(line, []byte(readyMarker)) {
		s.done = true
		close(s.ready)
	}
}

// listenAddr returns the client listener's address, if it was logged.
func (s *logSink) listenAddr() netip.AddrPort {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}
