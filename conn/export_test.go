package conn

import (
	"net"
	"net/netip"
)

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

// The address classes and the range table, for the table tests of the
// address policy.
type AddrClass = addrClass

const (
	ClassPublic        = classPublic
	ClassUnspecified   = classUnspecified
	ClassLoopback      = classLoopback
	ClassPrivate       = classPrivate
	ClassShared        = classShared
	ClassLinkLocal     = classLinkLocal
	ClassDocumentation = classDocumentation
	ClassBenchmark     = classBenchmark
	ClassReserved      = classReserved
	ClassMulticast     = classMulticast
	ClassBroadcast     = classBroadcast
)

// Range is rangeOf.
func Range(a netip.Addr) (netip.Prefix, AddrClass, error) { return rangeOf(a) }

// Classify is the class rangeOf gives.
func Classify(a netip.Addr) (AddrClass, error) {
	_, class, err := rangeOf(a)
	return class, err
}

// Limits no caller sets, for the tests at and past them.
const (
	MaxRequestSubjectLen = maxRequestSubjectLen
	MaxClientNameLen     = maxClientNameLen
	MaxUnanswered        = maxUnanswered
	CheckDrainWait       = checkDrainWait
)
