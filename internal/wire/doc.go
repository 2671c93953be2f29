// Package wire owns the encoding of the operations a NATS client sends
// (CONNECT, PUB, HPUB, SUB, PING, PONG) into a caller's buffer, and
// refuses, before a byte is written, anything the server would misread:
// empty subjects or tokens, wildcards where a literal subject is needed,
// whitespace or control bytes in a subject, reply, sid or header, header
// names that are not tokens, control lines over the server's default cap
// and payloads over the negotiated maximum.
//
// # Contents
//
//   - CONNECT: [Connect] and [AppendConnect], with secret fields redacted
//     from every formatted form.
//   - Publishing: [AppendPubText] and [AppendHPubText], which take the
//     subject and reply as strings or byte slices ([Text]); [AppendHeader]
//     and the header-block check of HPUB.
//   - Subscriptions: [AppendSub] (a connection subscribes its inbox once
//     and never unsubscribes, so there is no UNSUB and no queue group);
//     keepalive: [AppendPing] and [AppendPong].
//   - Subjects: [ValidPublishSubject] and token rules.
//   - Caps, each with how CRLF counts; sentinels and the typed [Error].
//
// Every Append function appends to dst and returns the extended slice; on
// error it returns dst unchanged (same length, nothing written). Encoders do
// no I/O and keep no state.
package wire
