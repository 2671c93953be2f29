//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package conn

import (
	"errors"
	"net"
	"syscall"
)

// peeker looks at a socket without consuming or waiting: MSG_PEEK with
// MSG_DONTWAIT on the raw descriptor. The raw connection and the callback
// are made at the first peek and kept with the connection, so that a
// probe allocates neither. One goroutine peeks at a time (Check's).
type peeker struct {
	rc  syscall.RawConn
	fn  func(fd uintptr) bool // p.look
	res peekResult
	b   [1]byte
}

// peek returns what the socket c holds.
func (p *peeker) peek(c net.Conn) peekResult {
	if p.rc == nil {
		sc, ok := c.(syscall.Conn)
		if !ok {
			return peekUnknown
		}
		rc, err := sc.SyscallConn()
		if err != nil {
			return peekClosed
		}
		p.rc, p.fn = rc, p.look
	}
	p.res = peekUnknown
	err := p.rc.Read(p.fn)
	switch {
	case err == nil:
		return p.res
	case isTimeout(err):
		return peekUnknown
	default:
		return peekClosed
	}
}

// look peeks at descriptor fd once; it never asks to be called again.
func (p *peeker) look(fd uintptr) bool {
	n, _, rerr := syscall.Recvfrom(int(fd), p.b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	switch {
	case errors.Is(rerr, syscall.EAGAIN), errors.Is(rerr, syscall.EWOULDBLOCK):
		p.res = peekQuiet
	case errors.Is(rerr, syscall.EINTR):
		p.res = peekUnknown
	case rerr != nil:
		p.res = peekClosed
	case n == 0:
		p.res = peekClosed
	default:
		p.res = peekPending
	}
	return true
}
