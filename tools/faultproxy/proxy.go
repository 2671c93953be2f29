package faultproxy

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"sync"
)

// Proxy forwards every connection accepted on its loopback address to its
// target, applying the faults set per direction. Its methods are safe for
// concurrent use.
type Proxy struct {
	target netip.AddrPort
	addr   netip.AddrPort
	ln     *net.TCPListener
	ctx    context.Context // cancelled by Close: ends dials to the target
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the proxy started

	mu      sync.Mutex
	closed  bool
	gen     uint64     // counts Sets; a setting's gen tells writers it changed
	faults  [2]setting // by Direction - 1
	links   map[*link]struct{}
	stats   Stats
	changed chan struct{} // closed and cleared when stats change; nil without waiters
}

// setting is a direction's fault and the Set that made it.
type setting struct {
	f   Fault
	gen uint64
}

// Start listens on 127.0.0.1 at a port the system picks and forwards every
// accepted connection to target, which must be an IPv4 loopback address
// and port (ErrInvalidTarget). Both directions start with Pass. The caller
// must Close the proxy.
func Start(target netip.AddrPort) (*Proxy, error) {
	if !target.Addr().Is4() || !target.Addr().IsLoopback() || target.Port() == 0 {
		return nil, ErrInvalidTarget
	}
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		target: target,
		addr:   ln.Addr().(*net.TCPAddr).AddrPort(),
		ln:     ln,
		ctx:    ctx,
		cancel: cancel,
		links:  make(map[*link]struct{}),
	}
	p.gen = 1
	p.faults = [2]setting{{Fault{Kind: Pass}, 1}, {Fault{Kind: Pass}, 1}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's listening address on 127.0.0.1.
func (p *Proxy) Addr() netip.AddrPort { return p.addr }

// Target is the address every connection is forwarded to.
func (p *Proxy) Target() netip.AddrPort { return p.target }

// Set makes f the fault of direction d, for the connections open now and
// for later ones (see the package documentation, Faults). It refuses an
// invalid direction (ErrInvalidDirection) or fault (*FaultError) and a
// closed proxy (ErrClosed).
func (p *Proxy) Set(d Direction, f Fault) error {
	if !d.valid() {
		return ErrInvalidDirection
	}
	if err := f.validate(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	p.gen++
	p.faults[d-1] = setting{f: f, gen: p.gen}
	for l := range p.links {
		signal(l.pipes[d-1].wake)
	}
	return nil
}

// Clear sets direction d back to Pass: what a stall held is delivered.
func (p *Proxy) Clear(d Direction) error { return p.Set(d, Fault{Kind: Pass}) }

// Fault returns the fault of direction d (the zero Fault for an invalid
// direction).
func (p *Proxy) Fault(d Direction) Fault {
	if !d.valid() {
		return Fault{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.faults[d-1].f
}

// Sever resets every open connection at once, both sides, as a broken link
// would; the faults stay as they are and later connections are accepted.
// It returns the number of connections reset.
func (p *Proxy) Sever() int {
	p.mu.Lock()
	links := slices.Collect(maps.Keys(p.links))
	p.mu.Unlock()
	n := 0
	for _, l := range links {
		if l.end(endRST, causeSever) {
			n++
		}
	}
	return n
}

// Close stops accepting, closes every connection (without a reset) and
// waits until every goroutine of the proxy has returned. It is idempotent
// and always returns nil.
func (p *Proxy) Close() error {
	p.mu.Lock()
	first := !p.closed
	p.closed = true
	links := slices.Collect(maps.Keys(p.links))
	p.notify()
	p.mu.Unlock()
	if first {
		p.cancel()
		_ = p.ln.Close()
	}
	for _, l := range links {
		l.end(endClose, causeClose)
		l.closeSockets()
	}
	p.wg.Wait()
	return nil
}

// accept runs until the listener is closed.
func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.AcceptTCP()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.stats.Accepted++
		p.notify()
		p.mu.Unlock()
		p.wg.Add(1)
		go p.connect(c)
	}
}

// connect dials the target for client and starts forwarding, or resets
// client when the target cannot be reached.
func (p *Proxy) connect(client *net.TCPConn) {
	defer p.wg.Done()
	d := net.Dialer{Timeout: DialTimeout}
	c, err := d.DialContext(p.ctx, "tcp4", p.target.String())
	if err != nil {
		_ = client.SetLinger(0)
		_ = client.Close()
		p.mu.Lock()
		p.stats.Refused++
		p.notify()
		p.mu.Unlock()
		return
	}
	l := newLink(p, client, c.(*net.TCPConn))
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.closeSockets()
		return
	}
	p.links[l] = struct{}{}
	p.stats.Open++
	p.notify()
	p.wg.Add(4)
	p.mu.Unlock()
	for _, q := range l.pipes {
		go q.read()
		go q.write()
	}
}

// signal wakes the receiver of ch without blocking.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
