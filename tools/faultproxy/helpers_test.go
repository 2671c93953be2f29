package faultproxy_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/tools/faultproxy"
)

// testTimeout bounds every wait, read and dial of these tests.
const testTimeout = 5 * time.Second

// maxPeers is how many accepted connections a peer holds for its test.
const maxPeers = 16

// errTooMuch reports more input than a read allowed.
var errTooMuch = errors.New("faultproxy test: more input than expected")

// peer is a TCP server on 127.0.0.1 that hands every accepted connection
// to the test, which then acts as the target's side of the link.
type peer struct {
	ln    *net.TCPListener
	conns chan *net.TCPConn
	wg    sync.WaitGroup
}

func startPeer(t *testing.T) *peer {
	t.Helper()
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	pe := &peer{ln: ln, conns: make(chan *net.TCPConn, maxPeers)}
	pe.wg.Add(1)
	go func() {
		defer pe.wg.Done()
		for {
			c, err := ln.AcceptTCP()
			if err != nil {
				return
			}
			select {
			case pe.conns <- c:
			default:
				_ = c.Close()
			}
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		pe.wg.Wait()
		close(pe.conns)
		for c := range pe.conns {
			_ = c.Close()
		}
	})
	return pe
}

func (pe *peer) addr() netip.AddrPort { return pe.ln.Addr().(*net.TCPAddr).AddrPort() }

// next returns the next accepted connection, closed at the test's end.
func (pe *peer) next(t *testing.T) *net.TCPConn {
	t.Helper()
	timer := time.NewTimer(testTimeout)
	defer timer.Stop()
	select {
	case c := <-pe.conns:
		t.Cleanup(func() { _ = c.Close() })
		if err := c.SetDeadline(time.Now().Add(testTimeout)); err != nil {
			t.Fatal(err)
		}
		return c
	case <-timer.C:
		t.Fatalf("no connection reached the peer within %v", testTimeout)
		return nil
	}
}

// startProxy starts a proxy to target, closed at the test's end.
func startProxy(t *testing.T, target netip.AddrPort) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.Start(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// link is one connection through the proxy: the client's socket and the
// peer's.
type link struct {
	client, server *net.TCPConn
}

// dialLink opens a connection through p to pe.
func dialLink(t *testing.T, p *faultproxy.Proxy, pe *peer) link {
	t.Helper()
	c, err := net.DialTimeout("tcp4", p.Addr().String(), testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	client := c.(*net.TCPConn)
	t.Cleanup(func() { _ = client.Close() })
	if err := client.SetDeadline(time.Now().Add(testTimeout)); err != nil {
		t.Fatal(err)
	}
	return link{client: client, server: pe.next(t)}
}

// ends returns the sender and the receiver of direction d.
func (l link) ends(d faultproxy.Direction) (sender, receiver *net.TCPConn) {
	if d == faultproxy.Up {
		return l.client, l.server
	}
	return l.server, l.client
}

// payload returns n bytes of a pattern that differs with seed.
func payload(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}

func write(t *testing.T, c net.Conn, b []byte) {
	t.Helper()
	if _, err := c.Write(b); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func readN(t *testing.T, c net.Conn, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatalf("reading %d bytes: %v", n, err)
	}
	return b
}

// readToEnd reads until an error, at most limit bytes, and returns what it
// read and the error that ended it.
func readToEnd(c net.Conn, limit int) ([]byte, error) {
	var got []byte
	buf := make([]byte, 4096)
	for len(got) <= limit {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			return got, err
		}
	}
	return got, errTooMuch
}

// waitCtx is a context for one wait of a test: cancelled at its end,
// bounded by testTimeout.
func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// waitStats waits until cond holds for p's counts.
func waitStats(t *testing.T, p *faultproxy.Proxy, what string, cond func(faultproxy.Stats) bool) faultproxy.Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	s, err := p.Wait(ctx, cond)
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
	return s
}

func set(t *testing.T, p *faultproxy.Proxy, d faultproxy.Direction, f faultproxy.Fault) {
	t.Helper()
	if err := p.Set(d, f); err != nil {
		t.Fatalf("Set(%v, %+v): %v", d, f, err)
	}
}

// waitGoroutines waits until at most n goroutines run, polling once a
// millisecond for up to testTimeout, and returns the last count. Close has
// waited for every goroutine of the proxy, so only the return of those
// that have signalled their end is left to wait for.
func waitGoroutines(n int) int {
	deadline := time.Now().Add(testTimeout)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	got := runtime.NumGoroutine()
	for i := 0; i < int(testTimeout/time.Millisecond) && got > n && time.Now().Before(deadline); i++ {
		<-tick.C
		got = runtime.NumGoroutine()
	}
	return got
}
