//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package conn

import "net"

// peek cannot look at the socket on this platform; Check drains instead.
func peek(net.Conn) peekResult { return peekUnknown }
