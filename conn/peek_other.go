//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package conn

import "net"

// peeker cannot look at the socket on this platform; Check drains instead.
type peeker struct{}

func (*peeker) peek(net.Conn) peekResult { return peekUnknown }
