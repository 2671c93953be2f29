// Package wire encodes the operations a NATS client sends (CONNECT, PUB,
// HPUB, SUB, UNSUB, PING, PONG) into a caller's buffer, and refuses, before a
// byte is written, anything the server would misread: empty subjects or
// tokens, wildcards where a literal subject is needed, whitespace or control
// bytes in a subject, reply, sid or header, header names that are not tokens,
// control lines over the server's default cap and payloads over the
// negotiated maximum.
//
// # Contents
//
//   - connect.go: [Connect] and [AppendConnect], with secret fields redacted
//     from every formatted form.
//   - pub.go: [AppendPub] and [AppendHPub], and [AppendPubText] and
//     [AppendHPubText], which take the subject and reply as strings or
//     byte slices ([Text]).
//   - header.go: [AppendHeader] and the header-block check of HPUB.
//   - sub.go: [AppendSub], [AppendQueueSub], [AppendUnsub].
//   - ping.go: [AppendPing] and [AppendPong].
//   - subject.go: [ValidSubject], [ValidPublishSubject] and token rules.
//   - limits.go: the caps, each with how CRLF counts.
//   - errors.go: sentinels and the typed [Error].
//
// Every Append function appends to dst and returns the extended slice; on
// error it returns dst unchanged (same length, nothing written). Encoders do
// no I/O and keep no state.
package wire
