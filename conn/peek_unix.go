//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package conn

import (
	"errors"
	"net"
	"syscall"
)

// peek looks at the socket without consuming or waiting: MSG_PEEK with
// MSG_DONTWAIT on the raw descriptor.
func peek(c net.Conn) peekResult {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return peekUnknown
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return peekClosed
	}
	res := peekUnknown
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case errors.Is(rerr, syscall.EAGAIN), errors.Is(rerr, syscall.EWOULDBLOCK):
			res = peekQuiet
		case errors.Is(rerr, syscall.EINTR):
			res = peekUnknown
		case rerr != nil:
			res = peekClosed
		case n == 0:
			res = peekClosed
		default:
			res = peekPending
		}
		return true
	})
	switch {
	case err == nil:
		return res
	case isTimeout(err):
		return peekUnknown
	default:
		return peekClosed
	}
}
