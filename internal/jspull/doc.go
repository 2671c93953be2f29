// Package jspull owns the three broker operations of one visit to a durable
// JetStream pull consumer under the nats-jetstream-pull-v1 profile: inspect
// the consumer and check it against the profile, pull at most one message
// with a no-wait request, and acknowledge it with a verified receipt; plus
// the permissions a binding needs. It refuses to create, change or delete
// streams or consumers, to drain or queue anything locally, and to retry an
// acknowledgement.
//
// It is the runtime's pull layer, internal to the module: package trigger
// drives it; the tools use its profile check, permission derivation and
// name rules (tools/provision, tools/deadletter, tools/demo), and the
// harness (conformance/, tools/peerbench) tests and measures it. Its
// errors read "pull: ...", the layer's name in logs and reports, as they
// did when the layer was a public package.
// What it did with a delivery is named in the public package pull
// ([pull.Action], [pull.AckState]), which trigger's StepReport carries.
//
// # Contents
//
//   - Bindings: [Binding], its limits, [ValidName] (the broker's asset-name
//     rule, which acksubject owns, narrowed to configuration text) and
//     [ValidFilterSubject] (wire's subject rule, literal and bounded).
//   - The operations: [Consumer], [Requester], [Consumer.Inspect],
//     [Consumer.Next] and [Consumer.Ack]; [Scratch], the working memory
//     Consumers that are used one at a time can share.
//   - Consumer info: its strict, allocation-free decoding, capped at
//     [MaxInfoSize], over the lexer of internal/jsonlex (invalid UTF-8 and
//     unpaired surrogate escapes refused); [Pending], its counters and
//     whether the consumer's leader gave them, and [Pending.Empty]; the
//     profile check and [Mismatch].
//   - The pull: its request body, the classification of its reply,
//     [Delivery]; [Kind] and [Class], one Kind per status the broker sends.
//   - Acknowledgement: [Command] (its String is the payload sent),
//     [pull.AckState] and [Receipt].
//   - Permissions: [DerivePermissions].
//   - Errors: sentinels and the typed errors [BindingError], [InfoError],
//     [APIError], [ProfileError], [ReplyError], [ReceiptError].
//
// # The profile
//
// Inspect requests $JS.API.CONSUMER.INFO.<stream>.<consumer> and requires,
// exactly: the configured stream; a named durable equal to the configured
// consumer; one filter subject equal to the configured one; ack_policy
// explicit, replay_policy instant, deliver_policy all; max_waiting =
// max_ack_pending = max_batch = 1; max_expires = 100 ms; max_bytes = payload
// ceiling + [MaxBytesOverhead]; ack_wait and max_deliver as configured. A
// push consumer (deliver_subject), headers_only, flow_control, several
// filters, a backoff array and a priority policy other than none are
// refused. One [*ProfileError] lists every mismatch at once. A missing
// stream or consumer (JetStream errors 10059, 10014) are [ErrStreamNotFound]
// and [ErrConsumerNotFound].
//
// The reply is decoded with a strict grammar: one JSON object, each field
// at most once, keys matched exactly, and the counters present. A field
// nats-server 2.14.6 does not send (a later release's) is state outside
// "config": validated (syntax, depth, no repeated key, at most 32 per
// object) and skipped. Inside "config" it is a setting that may change
// delivery: accepted when empty or zero (null, false, 0, "", [], {}),
// otherwise a [Mismatch] naming it. A consumer that matches the profile but
// is paused ("paused": true, until its config's pause_until) is
// [ErrConsumerPaused]: nothing is pulled, since the broker would hold the
// pull for its whole expiry.
//
// # Pulling
//
// Next publishes {"batch":1,"no_wait":true,"expires":100000000,
// "max_bytes":<ceiling+MaxBytesOverhead>} to
// $JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>.
// Its reply is a message or one of the statuses listed by [Kind]. A message
// must come from the binding's filter subject, carry an ack subject that
// the acksubject package parses and that names this stream and consumer,
// and fit the payload ceiling; any other frame is a [*ReplyError] matching
// [ErrCloseConnection]: the caller closes the connection, nothing is
// drained. The whole operation is bounded by the request's expiry plus
// [NextMargin], since the broker holds a no-wait request with an expiry
// while nothing is deliverable.
//
// After delivering a message the broker also sends "409 Batch Completed" to
// the same reply subject (the request's max_bytes had room left). That frame
// belongs to a request that is already answered; discarding it is the
// connection's business (it arrives on an earlier reply subject). A
// consumer replicated in a cluster sends the status first and the message
// once its delivered state has a quorum: through a Requester that also has
// conn.Conn's Await method (see [Requester]), Next reads the message after
// the status within the pull's bound. 2.14.6 may send the status twice for
// one pull (seen as a cluster's cut routes healed; most likely the leader
// about to step down and the one elected meanwhile): Next skips the
// repeated status, a few times at most, and takes the message that
// follows.
//
// A [Delivery] is valid until the next [Consumer.Next] on its Consumer, or
// on any Consumer sharing its [Scratch] ([Options].Scratch): its ack subject
// is kept in a buffer of the Scratch that the next pull rewrites, so that a
// visit (inspect, pull, acknowledge) allocates nothing in this package.
// Consumers visited one at a time share one Scratch rather than hold about
// 800 bytes of buffers each. [Consumer.Ack] refuses a Delivery made stale
// that way; [Delivery.Clone] keeps one across pulls. The parsed fields of a
// Delivery alias no buffer and stay correct in every copy.
//
// A visit that consumer info proves empty ([Pending.Empty]) need not pull
// at all: with nothing pending the broker would hold the pull for its whole
// 100 ms expiry.
//
// # Acknowledging
//
// Ack publishes +ACK, +TERM [reason] or -NAK {"delay":ns} to the delivery's
// ack subject with a reply subject. The broker's empty reply makes the
// outcome [pull.AckVerified], or [pull.AckVerifiedLate] when it arrives after
// the delivery's ack-wait deadline (estimated conservatively from when the
// pull was sent, on the injected clock). Anything else — a deadline, a lost
// connection, a write that may have failed part way, any other reply — is
// [pull.AckUncertain] with a [*ReceiptError]; it is never retried.
//
// # Permissions
//
// [DerivePermissions] returns the exact allow lists: publish the info, pull
// and both ack-subject forms of each binding; subscribe the private inbox
// prefix. Nothing else.
package jspull
