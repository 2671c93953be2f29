package faultproxy_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/tools/faultproxy"
)

// TestDialer: the socket reaches the target through the proxy, names the
// approved address as its peer and passes the real socket through
// SyscallConn; any other address is refused before a socket is opened.
func TestDialer(t *testing.T) {
	pe := startPeer(t)
	p := startProxy(t, pe.addr())
	var dial conn.Dialer = p.Dialer()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()

	c, err := dial(ctx, "tcp4", pe.addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ta, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok {
		t.Fatalf("RemoteAddr is %T, want *net.TCPAddr", c.RemoteAddr())
	}
	if diff := cmp.Diff(pe.addr().String(), ta.AddrPort().String()); diff != "" {
		t.Errorf("RemoteAddr (-want +got):\n%s", diff)
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		t.Fatalf("%T is not a syscall.Conn", c)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var peerPort int
	var serr error
	if err := rc.Control(func(fd uintptr) {
		var sa syscall.Sockaddr
		if sa, serr = syscall.Getpeername(int(fd)); serr == nil {
			peerPort = sa.(*syscall.SockaddrInet4).Port
		}
	}); err != nil || serr != nil {
		t.Fatalf("Control: %v, getpeername: %v", err, serr)
	}
	if peerPort != int(p.Addr().Port()) {
		t.Errorf("the socket's real peer port is %d, want the proxy's %d", peerPort, p.Addr().Port())
	}
	server := pe.next(t)
	write(t, c, []byte("through"))
	if got := readN(t, server, 7); string(got) != "through" {
		t.Errorf("target read %q", got)
	}

	for _, tc := range []struct{ network, address string }{
		{"udp4", pe.addr().String()},
		{"tcp6", pe.addr().String()},
		{"tcp4", fmt.Sprintf("localhost:%d", pe.addr().Port())},
		{"tcp4", fmt.Sprintf("[::ffff:127.0.0.1]:%d", pe.addr().Port())},
		{"tcp4", p.Addr().String()},
	} {
		t.Run(tc.network+" "+tc.address, func(t *testing.T) {
			c, err := dial(ctx, tc.network, tc.address)
			var te *faultproxy.TargetError
			if !errors.As(err, &te) || !errors.Is(err, faultproxy.ErrNotTarget) {
				t.Errorf("dial = %v; want a *TargetError", err)
			}
			if c != nil {
				_ = c.Close()
			}
		})
	}
	t.Run("closed", func(t *testing.T) {
		_ = p.Close()
		if _, err := dial(ctx, "tcp4", pe.addr().String()); !errors.Is(err, faultproxy.ErrClosed) {
			t.Errorf("dial after Close = %v; want ErrClosed", err)
		}
	})
}
