package conn

import "net"

// ProbeWaits reports how many of Check's reads had to wait for input.
func ProbeWaits(c *Conn) uint64 { return c.rd.waits }

// ThreadSocketOf is threadSocketOf, for tests that dial through their own
// wrapper (which the production path would not take over).
func ThreadSocketOf(c net.Conn) (net.Conn, error) { return threadSocketOf(c) }
