// Package conn owns one NATS client connection: it dials one approved IPv4
// address, speaks TLS before any other byte, reads the server's INFO through
// the parser, authenticates with a tenant credential, subscribes one private
// inbox and then carries strictly sequential request/reply exchanges until it
// is closed. It refuses names and DNS, IPv4-mapped IPv6, non-public addresses
// that the configuration does not name exactly, plaintext, the addresses a
// server advertises (host, connect_urls), reconnection, and goroutines of its
// own.
//
// # Contents
//
//   - config.go: Config, its validation and the defaults of optional fields.
//   - addr.go: the address policy (AddrClass, Classify) applied before any
//     socket is opened.
//   - dial.go: Dial, the handshake as a straight line of named steps:
//     StepDial, StepTLS, StepInfo, StepAuthenticate, StepConnect.
//   - control.go: server PINGs and INFOs met while waiting, and -ERR text
//     mapped onto an ErrKind.
//   - info.go: the few INFO fields the connection reads; everything that
//     could steer it elsewhere is ignored.
//   - inbox.go: the random inbox prefix and per-request reply tokens.
//   - request.go: Request, RequestBytes, RequestDelivery and Reply.
//   - check.go: Check, a cheap staleness probe for an idle pooled
//     connection; peek_unix.go and peek_other.go: the non-blocking look at
//     the socket it starts with.
//   - conn.go: Conn, Close, accessors and the reader the parser reads.
//   - sock_linux.go, sock_other.go: the thread socket (see Waiting).
//   - errors.go: sentinels, ErrKind, ServerError, Step, HandshakeError,
//     AddressError and ClosedError.
//
// # Deadlines
//
// Dial and Request need a context with a deadline (ErrNoDeadline otherwise):
// with no goroutine of its own, the connection bounds every blocking read
// and write by setting that deadline on the socket. A context cancelled
// without a deadline is noticed between frames. A request whose deadline
// expires closes the connection, so no late reply can ever be taken for the
// answer to a later request.
//
// # Waiting
//
// On Linux, Dial takes the TCP socket its dialer returns out of the Go
// runtime's network poller: the descriptor is duplicated, the original
// closed, and every wait for input (or for room to write) is a ppoll(2) in
// a blocking system call on the calling goroutine's thread, bounded by the
// deadline. A request is one write and a wait for one reply, so the poller
// would only add its costs: parking the goroutine, epoll wake-ups, the
// scheduler's search for work. Without them a visit of the pull profile
// costs the client about a fifth less CPU and completes sooner
// (docs/BENCHMARKS.md, "Pull loop"). While it waits, the goroutine keeps
// its processor (P) in the system call, where the scheduler cannot use it
// for timers or other goroutines (it takes it back only when its monitor
// notices): so after every wait that blocked, Read yields once
// (runtime.Gosched), which gives the scheduler the turn a park would have
// given; the program's other goroutines see their timers as punctual as
// beside the poller.
//
// What it means for the program: each Dial, request or Check waiting at a
// given moment holds an OS thread blocked in the kernel (the trigger
// runtime waits on one connection at a time per running Run), and the Go
// runtime keeps the threads it made at their peak. A program that runs
// many connections at the same time must stay within its thread limits
// (runtime/debug.SetMaxThreads, 10,000 by default; a container's pids
// limit) or set Config.RuntimePoller, which keeps the poller. A dialer's
// *net.TCPConn is closed by Dial (see Config.Dialer), and a waiting
// request cannot be interrupted by closing anything from another goroutine
// (Conn is not for concurrent use anyway; its deadline bounds every wait).
// A dialer returning something other than a *net.TCPConn, Config.
// RuntimePoller and other platforms keep the runtime's poller; requests,
// deadlines and errors behave the same either way.
//
// # Memory
//
// A Conn is not safe for concurrent use; the caller serialises its calls.
// Its memory is fixed at Dial by Config.MaxPayload, P below, and the read
// caps Config.MaxControlLine and Config.MaxHeader (8 KiB each by default):
//
//   - read buffer, owned by the parser: the two read caps + P + 2 bytes,
//     16 KiB + P + 2 by default (the payload and its CRLF);
//   - write buffer: 12 KiB + P + 2 bytes (MaxOutboundLine,
//     parser.MaxHeaderBlock, the payload and its CRLF), at least
//     MaxConnectLen;
//   - crypto/tls state: a record input buffer, which grows to hold what
//     the socket's reads bring (a full record is 16 KiB of plaintext plus
//     its overhead, and more may follow it: 27 and 41 KiB were measured
//     under floods of full records, docs/RELIABILITY.md), a handshake
//     buffer, and output records taken from a shared pool while writing.
//
// With the default P of 64 KiB and 8 KiB caps that is about 215 KiB of live
// heap (219,032 bytes measured under those floods, with the allocator's
// rounding), inside the 256 KiB the trigger runtime reserves per physical
// connection. In steady state a request allocates nothing of its own: the
// reply subject is rewritten in place in a fixed buffer of the inbox,
// encoded from there and compared as bytes. crypto/tls allocates one small
// reader per record read; nothing is retained.
//
// # Errors
//
// No error carries payload bytes, broker diagnostic text or secrets: a
// server's -ERR becomes a *ServerError holding only its ErrKind, TLS and
// certificate failures are reported through fixed sentinels (ErrPlaintext,
// ErrTLS, ErrCertificate) that still unwrap to the crypto/tls or x509 error
// for programmatic inspection.
package conn
