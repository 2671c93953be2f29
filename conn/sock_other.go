//go:build !linux

package conn

import "net"

// threadSocketOf returns c: outside Linux the runtime's poller serves the
// socket.
func threadSocketOf(c net.Conn) (net.Conn, error) { return c, nil }
