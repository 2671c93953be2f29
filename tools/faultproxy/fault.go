package faultproxy

import "time"

// Limits of this package.
const (
	// MaxQueuedBytes caps the bytes queued per direction of one connection
	// (held by a stall or waiting out a latency). At the cap the proxy stops
	// reading that direction until the queue drains; nothing is dropped.
	MaxQueuedBytes = 1 << 20
	// ChunkSize is the most one read takes from a socket: 32 KiB.
	ChunkSize = 32 << 10
	// MaxLatency caps Fault.Delay: one minute.
	MaxLatency = time.Minute
	// DialTimeout bounds the dial to the target made for each accepted
	// connection: 5 s. A failed dial resets the accepted connection.
	DialTimeout = 5 * time.Second
	// FINLinger bounds how long a connection cut with CutFIN keeps reading
	// and dropping input after its FINs were sent: 2 s.
	FINLinger = 2 * time.Second
)

// Direction names one direction of every proxied connection.
type Direction uint8

// Direction values.
const (
	// Up is client to target.
	Up Direction = iota + 1
	// Down is target to client.
	Down
)

// String returns "up", "down" or "unknown".
func (d Direction) String() string {
	switch d {
	case Up:
		return "up"
	case Down:
		return "down"
	default:
		return "unknown"
	}
}

func (d Direction) valid() bool { return d == Up || d == Down }

// Kind is what a fault does to the bytes of its direction (see the package
// documentation, Faults).
type Kind uint8

// Kind values.
const (
	// Pass forwards bytes as they come.
	Pass Kind = iota + 1
	// Blackhole reads bytes and drops them; the sockets stay open.
	Blackhole
	// Stall holds bytes until the fault changes, then releases them in
	// order.
	Stall
	// Latency forwards each chunk Fault.Delay after it was read, in order.
	Latency
	// CutFIN forwards Fault.After more bytes, then closes both sides of the
	// connection with FIN.
	CutFIN
	// CutRST forwards Fault.After more bytes, then resets both sides of the
	// connection.
	CutRST
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case Pass:
		return "pass"
	case Blackhole:
		return "blackhole"
	case Stall:
		return "stall"
	case Latency:
		return "latency"
	case CutFIN:
		return "cut-fin"
	case CutRST:
		return "cut-rst"
	default:
		return "unknown"
	}
}

// cut reports whether k ends connections.
func (k Kind) cut() bool { return k == CutFIN || k == CutRST }

// Fault is the fault of one direction.
type Fault struct {
	// Kind is required.
	Kind Kind
	// After is, for CutFIN and CutRST, the bytes still forwarded before the
	// cut, 0 or more (0 cuts at once); it must be 0 for other kinds.
	After int64
	// Delay is, for Latency, the delay of each chunk, above 0 and at most
	// MaxLatency; it must be 0 for other kinds.
	Delay time.Duration
}

// validate refuses a fault with a field its kind does not allow.
func (f Fault) validate() error {
	switch {
	case f.Kind < Pass || f.Kind > CutRST:
		return &FaultError{Kind: f.Kind, Field: "kind"}
	case f.Kind.cut() && f.After < 0, !f.Kind.cut() && f.After != 0:
		return &FaultError{Kind: f.Kind, Field: "after"}
	case f.Kind == Latency && (f.Delay <= 0 || f.Delay > MaxLatency), f.Kind != Latency && f.Delay != 0:
		return &FaultError{Kind: f.Kind, Field: "delay"}
	}
	return nil
}
