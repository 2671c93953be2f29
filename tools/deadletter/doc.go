// Package deadletter owns the deliveries the broker gave up on for a
// trigger configuration's bindings: it finds, shows and replays them with
// the account administrator's credentials; it refuses to widen the trigger
// runtime's own permissions, to drain a stream (every read is one bounded
// request, every loop bounded in count and time) and to change the messages
// it reads.
//
// # Contents
//
//   - Client, Dial: one connection to a tenant's account (conn, with
//     provision.ConnConfig's exact destination).
//   - List, Query, Page, Entry and Kind: the give-ups of one consumer, read
//     from the account's dead-letter capture stream.
//   - Message, Holder: a given-up message from its stream, else from the
//     copy capture.
//   - Replay, ReplayOptions, Replayed, ReplayID, Fields: the message
//     published again to its subject.
//   - Main, the deadletter command (cmd/deadletter); sentinels and
//     APIError.
//
// # What the broker records
//
// The trigger runtime ends a delivery it will not retry with +TERM and a
// fixed reason (trigger.ActionFor): "declared failure", "invalid
// arguments" (a payload the host refused), "incompatible contract",
// "authentication rejected", "permission rejected", and "exhausted" for a
// retryable failure at the delivery counted max_deliver. nats-server
// 2.14.6 treats +TERM as an acknowledgement that suppresses redelivery
// (consumer.go, processTerm) and publishes a MSG_TERMINATED advisory on
// $JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.<stream>.<consumer> with the
// stream and consumer, consumer_seq, stream_seq, deliveries, the reason,
// a timestamp and the domain when there is one. When a delivery counted
// max_deliver is never settled (the runtime died, its acknowledgement was
// lost, its header block was over the runtime's cap), the broker gives it
// up itself at the ack wait and publishes MAX_DELIVERIES on
// $JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.<stream>.<consumer>, without
// consumer_seq or reason. The broker publishes an advisory only while
// something listens (consumer.go, sendAdvisory), so package provision
// creates, in each tenant's account, a stream that keeps both for every
// consumer (provision.DeadLetterStream, limits retention, discard old,
// its own max age and bytes): nothing depends on a subscriber being
// connected.
//
// # What a stream still holds
//
// A +TERM on a work-queue stream removes the message, as an
// acknowledgement does (stream.go, ackMsg), and so does one on an
// interest stream whose one consumer terminated it; a limits stream keeps
// it until its limits remove it. A message the broker gave up itself
// (MAX_DELIVERIES) stays in its stream whatever the retention. Where the
// stream removed the message, only a copy made when it was stored can
// show it: a stream created with provision's CaptureOptions.Copies
// republishes every message it stores to a subject the copy capture
// (provision.CopyStream) keeps, carrying the original's stream, subject
// and sequence in headers, without a second consumer on the work-queue
// stream. docs/DEADLETTERS.md has the table per retention and the
// trade-off.
//
// # Replay
//
// Replay publishes the payload again to its subject, through JetStream,
// with the producer's header fields but none of the broker's ("Nats-" in
// any case), and a Nats-Msg-Id of its own (ReplayID): the stream stores a
// new message with a new sequence, which the binding's consumer delivers
// with a delivery count of 1; a second replay of the same message within
// the stream's duplicate window is a duplicate, not stored again. The
// original record stays where it was.
package deadletter
