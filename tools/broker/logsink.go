package broker

import (
	"bytes"
	"io"
	"net/netip"
	"sync"
)

// Markers the server logs (nats-server v2.14.6 server.go, Start,
// AcceptLoop and StartMonitoring; route.go, startRouteAcceptLoop).
const (
	listenMarker  = "Listening for client connections on "
	readyMarker   = "Server is ready"
	monitorMarker = "Starting http monitor on "
	// routeMarker is logged by the routing goroutine, which may run after
	// readyMarker; a node waits for it (see process.waitRoutes).
	routeMarker = "Listening for route connections on "
	// fatalMarker starts the message of a line logged by Fatalf, after
	// which the server exits (logger.go); a listener's port taken by
	// another process is one (server.go AcceptLoop, route.go
	// startRouteAcceptLoop).
	fatalMarker = "[FTL] "
	// portTakenText is in the fatal line of a listener whose port another
	// socket holds (the operating system's EADDRINUSE text).
	portTakenText = "address already in use"
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

	mu      sync.Mutex
	line    []byte // the current line, at most MaxLogLine bytes
	addr    netip.AddrPort
	monitor netip.AddrPort
	route   netip.AddrPort
	ready   chan struct{} // closed at the readiness marker
	routes  chan struct{} // closed at the route listener marker
	done    bool
	fatal   string // the message of the first fatal line, if one came
	// capture, while set, receives the raw output as well, at most
	// MaxStacksBytes of it (see process.stacks).
	capture   []byte
	capturing bool
}

func newLogSink(ring *logRing, forward io.Writer) *logSink {
	return &logSink{
		ring: ring, forward: forward,
		ready: make(chan struct{}), routes: make(chan struct{}),
		line: make([]byte, 0, MaxLogLine),
	}
}

// Write never fails, so the child's output is always drained.
func (s *logSink) Write(p []byte) (int, error) {
	s.ring.write(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(p)
	if s.capturing {
		s.capture = append(s.capture, p[:min(len(p), MaxStacksBytes-len(s.capture))]...)
	}
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
	markedAddr(line, listenMarker, &s.addr)
	markedAddr(line, monitorMarker, &s.monitor)
	if markedAddr(line, routeMarker, &s.route) {
		close(s.routes)
	}
	if i := bytes.Index(line, []byte(fatalMarker)); i >= 0 && s.fatal == "" {
		s.fatal = string(bytes.TrimSpace(line[i+len(fatalMarker):]))
	}
	if !s.done && bytes.Contains(line, []byte(readyMarker)) {
		s.done = true
		close(s.ready)
	}
}

// markedAddr sets *dst to the address that follows marker in line, unless
// it is already set, and reports whether it set it.
func markedAddr(line []byte, marker string, dst *netip.AddrPort) bool {
	i := bytes.Index(line, []byte(marker))
	if i < 0 || dst.IsValid() {
		return false
	}
	ap, err := netip.ParseAddrPort(string(bytes.TrimSpace(line[i+len(marker):])))
	if err != nil {
		return false
	}
	*dst = ap
	return true
}

// startCapture starts keeping the raw output.
func (s *logSink) startCapture() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.capturing, s.capture = true, nil
}

// endCapture stops keeping the raw output and returns what was kept.
func (s *logSink) endCapture() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.capture
	s.capturing, s.capture = false, nil
	return out
}

// fatalLine returns the message of the first fatal line the server
// logged, "" when none came.
func (s *logSink) fatalLine() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fatal
}

// monitorAddr returns the HTTP monitor's address, if it was logged.
func (s *logSink) monitorAddr() netip.AddrPort {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.monitor
}

// routeAddr returns the route listener's address, if it was logged.
func (s *logSink) routeAddr() netip.AddrPort {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.route
}

// listenAddr returns the client listener's address, if it was logged.
func (s *logSink) listenAddr() netip.AddrPort {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}
