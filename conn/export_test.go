package conn

import "net"

// ProbeWaits reports how many of Check's reads had to wait for input.
func ProbeWaits(c *Conn) uint64 { return c.rd.waits }

// ThreadSocketOf is threadSocketOf, for tests that dial through their own
// wrapper (which the production path would not take over).
func ThreadSocketOf(c net.Conn) (net.Conn, error) { return threadSocketOf(c) }

// SetCheckPause makes Check call pause at the start of every probe read and
// before answering a PING (sockReader.pause).
func SetCheckPause(c *Conn, pause func()) { c.rd.pause = pause }

// CancelRegistered reports whether c holds a cancellation registration on
// a caller's context (see canceller).
func CancelRegistered(c *Conn) bool { return c.cancel.stop != nil }
