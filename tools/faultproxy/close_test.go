package faultproxy_test

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/latent-systems/latent-nats/tools/faultproxy"
)

// TestCloseLeavesNoGoroutine: Close ends every connection whatever state it
// is in (draining after a FIN cut, stalled with bytes held, waiting out a
// latency, blocked writing to a receiver that does not read) and returns
// only when every goroutine it started has; a second Close is a no-op.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	pe := startPeer(t)
	before := runtime.NumGoroutine()
	p, err := faultproxy.Start(pe.addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })

	// A connection cut with FIN whose peers never close: draining.
	dialLink(t, p, pe)
	set(t, p, faultproxy.Up, faultproxy.Fault{Kind: faultproxy.CutFIN})
	waitStats(t, p, "the cut", func(s faultproxy.Stats) bool { return s.Cut == 1 })
	set(t, p, faultproxy.Up, faultproxy.Fault{Kind: faultproxy.Pass})

	// A writer blocked on a client that does not read: under Pass the
	// queue fills only while the writer cannot write.
	blocked := dialLink(t, p, pe)
	// More than the kernel buffers between proxy and client (the proxy's
	// send buffer grows to the maximum of tcp_wmem, 4 MiB by default; the
	// client's receive buffer does not grow while it does not read) plus
	// MaxQueuedBytes.
	flood := bytes.Repeat([]byte{0x5a}, 8<<20)
	flooded := make(chan error, 1)
	go func() {
		_, err := blocked.server.Write(flood)
		flooded <- err
	}()
	if _, err := p.Wait(waitCtx(t), func(s faultproxy.Stats) bool {
		return s.Down.Queued >= faultproxy.MaxQueuedBytes
	}); err != nil {
		buf := make([]byte, 256<<10)
		buf = buf[:runtime.Stack(buf, true)]
		select {
		case werr := <-flooded:
			t.Fatalf("waiting for a full down queue: %v; the flooding write returned %v\n%s", err, werr, buf)
		default:
			t.Fatalf("waiting for a full down queue: %v; the flooding write still runs\n%s", err, buf)
		}
	}

	// Bytes waiting out a latency, and bytes held by a stall.
	set(t, p, faultproxy.Down, faultproxy.Fault{Kind: faultproxy.Latency, Delay: faultproxy.MaxLatency})
	set(t, p, faultproxy.Up, faultproxy.Fault{Kind: faultproxy.Stall})
	waiting := dialLink(t, p, pe)
	write(t, waiting.server, payload(10, 22))
	write(t, waiting.client, payload(10, 23))
	waitStats(t, p, "bytes queued", func(s faultproxy.Stats) bool {
		return s.Up.Queued == 10 && s.Down.Queued >= faultproxy.MaxQueuedBytes+10
	})

	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if s := p.Stats(); s.Open != 0 {
		t.Errorf("Open = %d after Close", s.Open)
	}
	<-flooded // done into the kernel's buffers, or failed at the closed socket
	if got := waitGoroutines(before); got > before {
		buf := make([]byte, 64<<10)
		t.Fatalf("%d goroutines after Close, %d before:\n%s", got, before, buf[:runtime.Stack(buf, true)])
	}
}
