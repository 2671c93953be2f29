// Package faultproxy owns a loopback TCP proxy that injects link faults
// between a client and one target for tests (drops, stalls, delays, cuts
// with FIN or RST, a broken link); it refuses any address other than
// 127.0.0.0/8 on either side, inspects no content, and is never imported by
// the core packages.
//
// Contents:
//
//   - Faults: Direction (Up, Down), Kind, Fault and their limits.
//   - The proxy: Start, the listener, Set, Clear, Sever and Close; each
//     proxied connection has per direction a reader, a bounded queue and a
//     writer that applies the fault in force.
//   - Stats and the waits that place a fault by phase.
//   - A dialer for conn.Config.Dialer that keeps the approved address as
//     the socket's peer.
//   - Errors: sentinels, FaultError, TargetError and WaitError.
//
// # Faults
//
// Each direction has one Fault at a time, Pass until set. A Set applies at
// once to the connections open now and to every later one. The bytes of a
// direction go through a queue of at most MaxQueuedBytes per connection;
// the fault in force when a chunk reaches the head of the queue decides
// what happens to it:
//
//   - Pass forwards it.
//   - Blackhole reads and drops it (counted in DirStats.Dropped); both
//     sockets stay open.
//   - Stall holds it until the fault changes; then what was held goes on,
//     in order, under the new fault (all of it is delivered when the new
//     fault is Pass). At MaxQueuedBytes held the proxy stops reading that
//     direction, so the sender's kernel buffers fill and its writes block:
//     nothing is dropped.
//   - Latency forwards it no earlier than Fault.Delay after it was read,
//     in order; chunks read while earlier ones wait are queued behind them.
//   - CutFIN and CutRST forward Fault.After more bytes of that connection,
//     counted from the Set for a connection already open and from its
//     start for a later one, and then end the connection on both sides:
//     with FIN (shutdown, then close) or with RST (SO_LINGER 0, then
//     close). After 0 cuts at once. Bytes still queued are dropped.
//
// A sender's end of input (FIN) travels through the queue like a chunk:
// held by a stall, delayed by latency, dropped by a blackhole (the
// connection then stays open until Close). When both directions have
// forwarded their end, the connection is closed. Once a direction's end
// has gone through, no byte passes it any more: of the faults set later
// only a cut with After 0 still ends that connection. A reset by either peer,
// or a failed write to one, resets the other at once. Sever resets every
// open connection without changing the faults.
//
// With CutRST, bytes the kernel has not yet delivered when the reset goes
// out are lost with it, as on a real link; on loopback delivery happens
// inside the write, unless the receiver's window is full. With CutFIN the
// proxy keeps reading (and dropping) both sockets for up to FINLinger after
// the FINs, so that input arriving late does not turn the close into a
// reset.
//
// # Placing a fault by phase
//
// The proxy does not look inside the bytes (they are TLS records). A test
// places a fault by counts and order: Stats counts per direction the bytes
// read, forwarded, dropped and queued, and the connections accepted;
// WaitAccepted, WaitForwarded and Wait block, bounded by the context's
// deadline, until a count is reached. A cut set before the dial with After
// smaller than the TLS ClientHello lands inside the handshake; a fault set
// after Dial returned lands after it.
//
// # Ownership
//
// Start starts one accepting goroutine and, per connection, one goroutine
// for the dial to the target and four for forwarding. Close stops them all
// and waits for them; nothing outlives it.
package faultproxy
