package faultproxy

import (
	"context"
	"net"
	"net/netip"
)

// Dialer returns a dial function for conn.Config.Dialer (its type is
// assignable to conn.Dialer). It accepts network "tcp4" or "tcp" and
// exactly the proxy's target as a literal "a.b.c.d:port" (a *TargetError
// otherwise), connects to the proxy instead, and returns a socket whose
// RemoteAddr is the target: conn checks the peer against the approved
// address, and the proxy forwards transparently, as a router would. The
// socket embeds the *net.TCPConn, so SyscallConn reaches the real socket
// (conn peeks at it). Not being a *net.TCPConn itself, it stays in the Go
// runtime's poller: conn does not take it over.
func (p *Proxy) Dialer() func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		ap, err := netip.ParseAddrPort(address)
		if (network != "tcp4" && network != "tcp") || err != nil || ap != p.target {
			return nil, &TargetError{Network: network, Address: address}
		}
		p.mu.Lock()
		closed := p.closed
		p.mu.Unlock()
		if closed {
			return nil, ErrClosed
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp4", p.addr.String())
		if err != nil {
			return nil, err
		}
		return &proxied{TCPConn: c.(*net.TCPConn), remote: net.TCPAddrFromAddrPort(ap)}, nil
	}
}

// proxied is a socket to the proxy that names the target as its peer.
type proxied struct {
	*net.TCPConn
	remote *net.TCPAddr
}

// RemoteAddr returns the target, the address that was dialled.
func (c *proxied) RemoteAddr() net.Addr { return c.remote }
