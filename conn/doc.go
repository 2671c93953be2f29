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
//   - Configuration: Config, its validation and the defaults of optional
//     fields; the address policy (CheckAddress, AddressError) applied
//     before any socket is opened.
//   - The handshake: Dial, a straight line of named steps (StepDial,
//     StepTLS, StepInfo, StepAuthenticate, StepConnect); the few INFO fields
//     the connection reads, with the project's one strict JSON path
//     (internal/jsontree: keys matched exactly, repeated keys and invalid
//     UTF-8 refused), everything that could steer it elsewhere ignored; the credential's TLS client certificate, presented when
//     the server asks, and the server's refusal of it (clientcert.go).
//   - Exchanges (see Entry points): Request, Exchange with its Call, Await,
//     Detach and Reply, over the random inbox prefix and per-request reply
//     tokens; server PINGs and INFOs met while waiting, and -ERR text mapped
//     onto an ErrKind.
//   - Pooling: Check, a cheap staleness probe for an idle pooled connection,
//     starting with a non-blocking look at the socket.
//   - Stopping: the context's end interrupting the socket (see Deadlines);
//     Conn, Close, accessors and the reader the parser reads.
//   - The opt-in thread socket (see Thread socket).
//   - Errors: sentinels, ErrKind, ServerError, Step, HandshakeError,
//     AddressError and ClosedError.
//
// # Entry points
//
// Request is the one request call: a subject, an optional header block and
// a payload, bounded by the deadline ctx carries. Everything that is not on
// the pull loop's hot path uses it (the provisioning and dead-letter tools,
// the harness).
//
// Exchange is the same request for the pull operations (the pull layer's
// Requester):
// the bound is an argument, so a caller bounds each operation without a
// context of its own; the subject is bytes the caller keeps in a reused
// buffer (an acknowledgement subject); Call.Delivery accepts a message the
// server forwards under its own subject (a pulled message). Under one
// context it allocates nothing of conn's own: on the pull loop's shape it
// made 1 allocation per request where Request under a context per call
// made 11 (docs/BENCHMARKS.md, "Request entry points").
//
// Await reads one more answer to the request answered last (a pull that a
// replicated consumer answers with a status before its message), and
// Detach ends the cancellation registration a call leaves behind (see
// Deadlines) for a caller that ends its context after each call.
//
// # Deadlines
//
// Dial and Request need a context with a deadline (ErrNoDeadline
// otherwise); Exchange takes its deadline as an argument. With no
// goroutine of its own, the connection bounds every blocking read and
// write by setting that deadline on the socket. A request whose deadline
// expires closes the connection, so no late reply can ever be taken for
// the answer to a later request.
//
// With Config.KeepUnanswered a request that is not a delivery request,
// written in full, whose deadline passes before any byte of its answer
// arrived, gives up without closing (ErrUnanswered). Every request has a
// reply subject of its own, "<inbox>.<n>" with n never reused on the
// connection, so its late answer is told apart by its subject: up to
// 4 such subjects (maxUnanswered) are remembered, and a message to one of
// them, during a later request or a Check, is read and discarded (a
// control frame of that call). A delivery request, a deadline met inside
// a frame, a write cut short and ctx's cancellation still close the
// connection: a message JetStream delivers to a pull carries the stream's
// subject, not the reply subject, and the parser or crypto/tls cannot
// resume mid-record or mid-write.
//
// The end of the caller's context interrupts a wait at once, whatever the
// server or the link does: a context.AfterFunc sets a deadline in the
// past on the socket (net.Conn's SetDeadline works from any goroutine),
// the blocked read or write returns, and the call reports ctx's error. A
// request interrupted that way closes the connection, as a passed
// deadline does; a context already done before anything is written
// leaves it usable. The registration is kept for the next request under
// a context with the same Done channel and stopped by one with another,
// by Detach or by Close, so a request allocates nothing for it; once
// stopped, it cannot touch the socket. A context that ends while still
// registered, after its call returned, makes the context package run the
// registration once on a goroutine of its own (setting a passed deadline
// on the idle socket, which the next call replaces): callers that end a
// context right after each call and keep the connection call Detach
// first, as the trigger runtime does.
//
// # Thread socket
//
// By default the socket stays in the Go runtime's network poller, on every
// platform, and keeps net.Conn's contracts: Close and deadlines work from
// any goroutine, which crypto/tls and the cancellation above rely on.
//
// Config.ThreadSocket opts out on Linux: Dial takes the TCP socket its
// dialer returns out of the poller (the descriptor is duplicated, the
// original closed), and every wait for input (or for room to write) is a
// ppoll(2) in a blocking system call on the calling goroutine's thread,
// bounded by the deadline. A request is one write and a wait for one
// reply, so the poller's parking, epoll wake-ups and the scheduler's
// search for work cost more than they buy: a visit of the pull profile
// cost the client about a fifth less CPU that way (docs/BENCHMARKS.md,
// "Pull loop"). While it waits, the goroutine keeps its processor (P) in
// the system call, so after every wait that blocked, Read yields once
// (runtime.Gosched), giving the scheduler the turn a park would have
// given.
//
// What the opt-in gives up: a deadline set from another goroutine takes
// effect at the next wait, not the one in progress, so a context's end (and
// crypto/tls's HandshakeContext) does not interrupt a waiting Dial,
// request or Check, which ends at its own deadline; Close must not be
// called from another goroutine while a call waits. Each waiting call
// holds an OS thread blocked in the kernel, and the Go runtime keeps the
// threads it made at their peak: a program that runs many connections at
// the same time must stay within its thread limits
// (runtime/debug.SetMaxThreads, 10,000 by default; a container's pids
// limit). A dialer's *net.TCPConn is closed by Dial (see Config.Dialer). A
// dialer returning something other than a *net.TCPConn, and other
// platforms, keep the runtime's poller; requests, deadlines and errors
// behave the same either way.
//
// # Memory
//
// A Conn is not safe for concurrent use; the caller serialises its calls.
// Its memory is fixed at Dial by Config.MaxPayload, P below, and the read
// caps Config.MaxControlLine and Config.MaxHeader (8 KiB each by default):
//
//   - read buffer, owned by the parser: the two read caps + P + 2 bytes,
//     16 KiB + P + 2 by default (the payload and its CRLF);
//   - write buffer: 12 KiB + P + 2 bytes (the control line,
//     internal/wire's MaxControlLine and MaxOutboundHeader, the payload
//     and its CRLF), at least MaxConnectLen;
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
// ErrTLS, ErrCertificate, ErrClientCertificate) that still unwrap to the crypto/tls or x509 error
// for programmatic inspection, so is a socket refused or reset at StepDial
// (ErrRefused, unwrapping to the errno), and every refusal of the server's bytes by
// the parser matches ErrFraming beside the parser's own sentinel, so that
// a caller classifies framing failures without importing the parser.
package conn
