// Package provision owns the JetStream streams and durable pull consumers a
// trigger configuration needs: it creates, or asserts, them with
// credentials allowed to manage them, and derives the trigger runtime's
// minimal permissions per tenant; it refuses to change or delete an
// existing stream or consumer: every difference is reported, never silently
// fixed.
//
// The trigger runtime's own credentials cannot create streams or consumers
// (jspull.DerivePermissions grants consumer info, pull and acknowledgement
// only), so an operator runs this once per configuration change, and again
// whenever a broker may have lost its state (a restored backup has accounts
// but no consumers): as the runtime checks the profile on every visit, a
// missing or changed consumer otherwise shows only as a binding that never
// delivers.
//
// # Contents
//
//   - The profile's assets: DesiredConsumer and DesiredStream, the exact
//     JSON sent to the broker; PullBinding.
//   - Client, Dial and ConnConfig (a tenant's exact destination); stream
//     info/create and consumer create, each checked.
//   - Run over a whole configuration, Options and Mode; Result, Report and
//     its text form.
//   - The capture streams: DeadLetterStream and CopyStream, their subjects
//     and CaptureOptions (package tools/deadletter reads them).
//   - Publish with a verified JetStream acknowledgement.
//   - Permissions: DerivePermissions per tenant, WritePermissions and
//     ServerConfigJSON (nats-server configuration); Scope and ScopeRole, the
//     permissions as a scoped signing key's template, and the nsc commands.
//   - Main, the provision command (cmd/provision); sentinels and APIError.
//
// # What is created
//
// For each tenant Run dials the tenant's destination (TLS first, the exact
// address, server name, roots and pin of the configuration), ensures the
// capture streams of the tenant's account (below) and, for each stream its
// bindings name:
//
//   - the stream, when absent: file storage, its bindings' filter subjects,
//     max_msg_size = the largest payload ceiling among them (the broker
//     counts headers and payload), discard new (a full stream refuses a
//     publish rather than drop an unprocessed event), work-queue retention
//     by default (acknowledged and terminated messages leave the stream, so
//     its limits bound the backlog; RetentionLimits keeps history for other
//     readers), optional max_msgs / max_bytes (else only the account's
//     JetStream limits bound it), and the replica count of
//     StreamOptions.Replicas (num_replicas, 1 by default; 3 on a
//     three-node cluster keeps the stream through the loss of a node);
//   - each binding's durable pull consumer, when absent, with exactly the
//     profile: durable = consumer name, filter_subject, ack_policy explicit,
//     the binding's ack_wait and max_deliver, deliver_policy all,
//     replay_policy instant, max_waiting = max_ack_pending = max_batch = 1,
//     max_expires = 100 ms, max_bytes = payload ceiling +
//     jspull.MaxBytesOverhead, and the stream's replica count (num_replicas;
//     a work-queue stream's consumers must have its count). It is created with action "create",
//     so a consumer that appeared meanwhile with another configuration is
//     refused rather than updated, then checked with jspull's own profile
//     check and for its replica count.
//
// The capture streams (limits retention, discard old, file storage, the
// streams' replica count, a max age and max bytes of their own, never
// changed once they exist) keep what the broker says about the
// deliveries it gave up on, so that package tools/deadletter can list,
// show and replay them (docs/DEADLETTERS.md):
//
//   - DeadLetterStream, on by default (CaptureOptions.DeadLetters): the
//     MAX_DELIVERIES and MSG_TERMINATED advisories of every consumer of
//     the account, which the broker publishes only while something
//     listens;
//   - CopyStream, opt-in (CaptureOptions.Copies): the copy every stream
//     created with the option republishes of each message it stores
//     (RePublishOf), so that the payload of a message a work-queue stream
//     removed on +TERM can still be shown and replayed. Every message is
//     then stored twice.
//
// An existing capture stream must capture its subjects and have the
// replica count asked for. The trigger runtime's permissions are the same
// with or without them: the broker fills them, no user publishes there.
//
// An existing stream must capture every filter subject of its bindings
// and have the replica count asked for (a mismatch otherwise, field
// num_replicas); a max_msg_size above a binding's ceiling is a
// warning (such a message is stored, then refused by the consumer's
// max_bytes and left for an operator). An existing consumer is checked by
// jspull's profile check on its consumer-info reply, the check the runtime
// itself applies, and every mismatch is reported with the broker's field
// name and both values; its replica count (config.num_replicas, the
// stream's when 0, from a consumer-info request of its own) must be the
// one asked for. The profile check accepts any replica count and skips
// the reply's "cluster" state, so the runtime works on R1 and R3
// consumers alike. ModeAssert creates nothing. No consumer is created on
// a stream that differs.
//
// Run connects with conn's default inbox prefix ("_INBOX"). In ModeAssert
// a connection whose inbox subscription the broker refuses is dialled once
// more with the tenant's private prefix trigger.InboxPrefix(tenant), the
// only one the trigger runtime's user may subscribe: the runtime's own
// credentials get past the handshake, and are then refused stream info
// (ErrRequestDenied), by design. A refused inbox is ErrInboxDenied; both
// errors name the row of docs/TROUBLESHOOTING.md that explains them.
//
// The JetStream API subjects are those of nats-server 2.14.6:
// $JS.API.STREAM.INFO.<stream>, $JS.API.STREAM.CREATE.<stream>,
// $JS.API.CONSUMER.INFO.<stream>.<consumer> (through jspull, and again for
// the replica count) and $JS.API.CONSUMER.CREATE.<stream>.<consumer>, the
// durable named in the subject; a stream's republish setting is its
// config's "republish" object (src, dest).
//
// # Permissions
//
// DerivePermissions returns, per tenant, exactly jspull.DerivePermissions for
// the tenant's bindings and the tenant's private inbox prefix
// trigger.InboxPrefix(tenant) ("_INBOX.<tenant>", each '.' of the tenant ID
// written '~'), the prefix the trigger runtime's connection for that tenant
// uses: publish to each binding's consumer-info and pull subjects and both
// acknowledgement-subject forms, subscribe to "_INBOX.<tenant>.>" and
// nothing wider, so neither another tenant's user nor any other user of the
// account granted only its own prefix can read the runtime's replies and
// deliveries. The prefix is derived from the tenant ID, not chosen. WritePermissions writes them as nats-server
// configuration (FormatServer) or as JSON in the form of user JWT claims for
// account tooling (FormatJSON, AccountDocument).
//
// A user JWT that carries the grants grows with the bindings, and the
// broker reads at most max_control_line bytes of the CONNECT that carries
// it. For a tenant with more bindings than fit, the same exact grants go
// into the scope of a signing key of the tenant's account (Scope, role
// ScopeRole(tenant)); the runtime's user is signed by that key and carries
// none. FormatJSON writes that scope beside each tenant's grants, and
// FormatNSC writes the nsc commands that create it and sign the user.
//
// # Publishing
//
// Client.Publish stores one message through JetStream and returns the
// broker's acknowledgement, verified: the stream and a sequence, or a typed
// error when no stream captured the subject or the stream refused it.
//
// # The command
//
//	provision -config FILE -credentials FILE [-assert] [-permissions server|json|nsc|none]
//	          [-retention workqueue|limits] [-max-msgs N] [-max-bytes N] [-replicas N] [-timeout D]
//	          [-deadletters=false] [-deadletter-max-age D] [-deadletter-max-bytes N]
//	          [-copies] [-copy-max-age D] [-copy-max-bytes N]
//	provision -config FILE -permissions-only [-permissions server|json|nsc]
//
// The credentials file has the format of package validate, naming for each
// tenant a secret allowed to manage streams and consumers. Inputs are
// validated first (as the validate command does); the report goes to
// stderr and the permissions to stdout. Exit status 0 when every stream and
// consumer was created or asserted, 1 otherwise, 2 for a usage error.
package provision
