package faultproxy_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/tools/faultproxy"
)

func TestStrings(t *testing.T) {
	kinds := []struct {
		k    faultproxy.Kind
		want string
	}{
		{0, "unknown"},
		{faultproxy.Pass, "pass"},
		{faultproxy.Blackhole, "blackhole"},
		{faultproxy.Stall, "stall"},
		{faultproxy.Latency, "latency"},
		{faultproxy.CutFIN, "cut-fin"},
		{faultproxy.CutRST, "cut-rst"},
		{faultproxy.CutRST + 1, "unknown"},
	}
	for _, tc := range kinds {
		t.Run(tc.want, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.k.String()); diff != "" {
				t.Errorf("Kind(%d).String() (-want +got):\n%s", tc.k, diff)
			}
		})
	}
	dirs := []struct {
		d    faultproxy.Direction
		want string
	}{
		{0, "unknown"},
		{faultproxy.Up, "up"},
		{faultproxy.Down, "down"},
		{faultproxy.Down + 1, "unknown"},
	}
	for _, tc := range dirs {
		t.Run(tc.want, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.d.String()); diff != "" {
				t.Errorf("Direction(%d).String() (-want +got):\n%s", tc.d, diff)
			}
		})
	}
}

// TestStartTarget: only an IPv4 loopback address with a port is a target.
func TestStartTarget(t *testing.T) {
	for _, target := range []netip.AddrPort{
		{},
		netip.MustParseAddrPort("127.0.0.1:0"),
		netip.MustParseAddrPort("10.0.0.1:4222"),
		netip.MustParseAddrPort("[::1]:4222"),
		netip.MustParseAddrPort("[::ffff:127.0.0.1]:4222"),
	} {
		t.Run(target.String(), func(t *testing.T) {
			p, err := faultproxy.Start(target)
			if !errors.Is(err, faultproxy.ErrInvalidTarget) {
				t.Errorf("Start(%v) = %v; want ErrInvalidTarget", target, err)
			}
			if p != nil {
				_ = p.Close()
			}
		})
	}
}

// TestSetRefuses: Set validates the direction and every field of the
// fault, at its limits, and refuses a closed proxy.
func TestSetRefuses(t *testing.T) {
	pe := startPeer(t)
	p := startProxy(t, pe.addr())
	cases := []struct {
		name  string
		f     faultproxy.Fault
		field string // "" when valid
	}{
		{"zero kind", faultproxy.Fault{}, "kind"},
		{"unknown kind", faultproxy.Fault{Kind: faultproxy.CutRST + 1}, "kind"},
		{"pass", faultproxy.Fault{Kind: faultproxy.Pass}, ""},
		{"pass with after", faultproxy.Fault{Kind: faultproxy.Pass, After: 1}, "after"},
		{"blackhole with delay", faultproxy.Fault{Kind: faultproxy.Blackhole, Delay: time.Second}, "delay"},
		{"stall", faultproxy.Fault{Kind: faultproxy.Stall}, ""},
		{"latency at the limit", faultproxy.Fault{Kind: faultproxy.Latency, Delay: faultproxy.MaxLatency}, ""},
		{"latency past the limit", faultproxy.Fault{Kind: faultproxy.Latency, Delay: faultproxy.MaxLatency + 1}, "delay"},
		{"latency of 1ns", faultproxy.Fault{Kind: faultproxy.Latency, Delay: 1}, ""},
		{"latency of zero", faultproxy.Fault{Kind: faultproxy.Latency}, "delay"},
		{"latency negative", faultproxy.Fault{Kind: faultproxy.Latency, Delay: -time.Second}, "delay"},
		{"latency with after", faultproxy.Fault{Kind: faultproxy.Latency, Delay: time.Second, After: 1}, "after"},
		{"cut-fin at once", faultproxy.Fault{Kind: faultproxy.CutFIN}, ""},
		{"cut-fin negative", faultproxy.Fault{Kind: faultproxy.CutFIN, After: -1}, "after"},
		{"cut-rst with delay", faultproxy.Fault{Kind: faultproxy.CutRST, After: 5, Delay: time.Second}, "delay"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := p.Set(faultproxy.Down, tc.f)
			var fe *faultproxy.FaultError
			field := ""
			if errors.As(err, &fe) {
				field = fe.Field
			}
			if diff := cmp.Diff(tc.field, field); diff != "" {
				t.Errorf("Set(%+v) = %v; field (-want +got):\n%s", tc.f, err, diff)
			}
			if (tc.field != "") != errors.Is(err, faultproxy.ErrInvalidFault) {
				t.Errorf("Set(%+v) = %v; ErrInvalidFault expected: %v", tc.f, err, tc.field != "")
			}
			if diff := cmp.Diff(faultproxy.Fault{Kind: faultproxy.Pass}, p.Fault(faultproxy.Up)); diff != "" {
				t.Errorf("up fault changed (-want +got):\n%s", diff)
			}
		})
	}
	for _, d := range []faultproxy.Direction{0, faultproxy.Down + 1} {
		t.Run("direction "+d.String(), func(t *testing.T) {
			if err := p.Set(d, faultproxy.Fault{Kind: faultproxy.Pass}); !errors.Is(err, faultproxy.ErrInvalidDirection) {
				t.Errorf("Set(%d) = %v; want ErrInvalidDirection", d, err)
			}
		})
	}
	t.Run("closed", func(t *testing.T) {
		_ = p.Close()
		if err := p.Clear(faultproxy.Up); !errors.Is(err, faultproxy.ErrClosed) {
			t.Errorf("Clear after Close = %v; want ErrClosed", err)
		}
	})
}

// TestSever: every open connection is reset on both sides at once; the
// faults stay and a later connection works under them.
func TestSever(t *testing.T) {
	pe := startPeer(t)
	p := startProxy(t, pe.addr())
	latency := faultproxy.Fault{Kind: faultproxy.Latency, Delay: testDelay}
	set(t, p, faultproxy.Down, latency)
	links := []link{dialLink(t, p, pe), dialLink(t, p, pe)}
	waitStats(t, p, "both connections forwarding", func(s faultproxy.Stats) bool { return s.Open == 2 })
	if n := p.Sever(); n != 2 {
		t.Fatalf("Sever() = %d, want 2", n)
	}
	for i, l := range links {
		for _, c := range []*net.TCPConn{l.client, l.server} {
			if _, err := readToEnd(c, 0); !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("link %d: read ended with %v, want ECONNRESET", i, err)
			}
		}
	}
	if diff := cmp.Diff(latency, p.Fault(faultproxy.Down)); diff != "" {
		t.Errorf("down fault after Sever (-want +got):\n%s", diff)
	}
	l := dialLink(t, p, pe)
	start := time.Now()
	write(t, l.server, []byte("after"))
	if got := readN(t, l.client, 5); string(got) != "after" {
		t.Fatalf("after Sever: read %q", got)
	}
	if elapsed := time.Since(start); elapsed < testDelay {
		t.Errorf("after Sever the reply took %v, less than the latency still set (%v)", elapsed, testDelay)
	}
	s := waitStats(t, p, "counts", func(s faultproxy.Stats) bool { return s.Accepted == 3 })
	if s.Severed != 2 || s.Open != 1 {
		t.Errorf("Severed = %d, Open = %d; want 2, 1", s.Severed, s.Open)
	}
}

// TestRefused: when the target does not answer, the accepted connection is
// reset (the client reads the reset, or fails to connect when it overtook
// the connect) and counted.
func TestRefused(t *testing.T) {
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().(*net.TCPAddr).AddrPort()
	_ = ln.Close()
	p := startProxy(t, gone)
	if err := clientEnd(t, p); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("client: %v, want ECONNRESET", err)
	}
	s := waitStats(t, p, "the refusal", func(s faultproxy.Stats) bool { return s.Refused == 1 })
	if diff := cmp.Diff(faultproxy.Stats{Accepted: 1, Refused: 1}, s); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

// TestWait: the waits return once their count is reached, and otherwise
// end with the context, without a deadline, or with the proxy.
func TestWait(t *testing.T) {
	pe := startPeer(t)
	p := startProxy(t, pe.addr())
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	accepted := make(chan error, 1)
	go func() {
		_, err := p.WaitAccepted(ctx, 2)
		accepted <- err
	}()
	l := dialLink(t, p, pe)
	dialLink(t, p, pe)
	if err := <-accepted; err != nil {
		t.Fatalf("WaitAccepted(2): %v", err)
	}
	write(t, l.client, payload(300, 20))
	s, err := p.WaitForwarded(ctx, faultproxy.Up, 300)
	if err != nil || s.Up.Forwarded < 300 {
		t.Fatalf("WaitForwarded(up, 300) = %d, %v", s.Up.Forwarded, err)
	}

	short, cancelShort := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancelShort()
	_, err = p.WaitAccepted(short, 3)
	var we *faultproxy.WaitError
	if !errors.As(err, &we) || !errors.Is(err, context.DeadlineExceeded) || we.Stats.Accepted != 2 {
		t.Errorf("WaitAccepted(3) past its deadline = %v; want a *WaitError with DeadlineExceeded and 2 accepted", err)
	}
	if _, err := p.WaitAccepted(t.Context(), 1); !errors.Is(err, faultproxy.ErrNoDeadline) {
		t.Errorf("WaitAccepted without a deadline = %v; want ErrNoDeadline", err)
	}
	if _, err := p.WaitForwarded(ctx, 0, 1); !errors.Is(err, faultproxy.ErrInvalidDirection) {
		t.Errorf("WaitForwarded(0) = %v; want ErrInvalidDirection", err)
	}
	_ = p.Close()
	if _, err := p.WaitAccepted(ctx, 3); !errors.Is(err, faultproxy.ErrClosed) {
		t.Errorf("WaitAccepted after Close = %v; want ErrClosed", err)
	}
	if _, err := p.WaitAccepted(ctx, 2); err != nil {
		t.Errorf("WaitAccepted of a reached count after Close = %v; want nil", err)
	}
}
