// Package trigger owns the bounded trigger runtime of the
// nats-jetstream-pull-v1 profile: its configuration and every bound of it,
// the tenant credentials bound to that configuration, installation with
// checked epochs, the shared pools and their accounting, the run loop and
// Step, the host interface, the mapping of outcomes to broker actions and
// the monitor. It knows no wire detail (conn and the pull layer,
// internal/jspull, speak to the broker)
// and refuses any configuration outside the profile's bounds rather than
// adjusting it.
//
// # Configuration
//
// A configuration is persisted only as the bytes MarshalJSON writes, and
// ParseConfig accepts only those bytes: a configuration that parses
// re-encodes to the same bytes. CanonicalConfig turns any other JSON
// spelling of a valid configuration into them. Every violation is reported
// at once, each with its JSON path, in one *ConfigError.
//
// Global and per-binding settings: the poll interval paces the owner's one
// timer and the control-line and header caps shape the connections a
// tenant's bindings share, so they are global. The payload ceiling,
// operation timeout, root budget, max_deliver, ack wait and NAK delay
// belong to one durable consumer or one activation, so they are per
// binding.
//
// Credentials never appear in the configuration JSON. Each tenant has one
// Credential bound to its ID, provider ID and exact Destination; it
// redacts itself everywhere and refuses to be marshalled. LoadCredentials
// reads them from a credentials file and the secret files it names,
// matched to a configuration (CheckCredentialsFile checks the file alone).
// Triggers.Rotate replaces a tenant's credential without a reinstall: new
// dials and every credential check use the new secret at once, a pooled
// connection authenticated with the old one is closed at its next checkout,
// and the old secret, then the installation's, is wiped once nothing uses
// it (docs/CREDENTIALS.md, Rotation).
//
// # Installation and pools
//
// Install(pools, Installation{LogicalID, Epoch, ExpectedEpoch, Config,
// Credentials}) validates the configuration and credentials, records the
// checked epoch transition of LogicalID in the pools' registry (the
// current epoch must equal ExpectedEpoch and Epoch must exceed it; an
// older installation of the same ID is superseded) and
// charges the installation: a base, a share per binding and a multiple of
// the retained root-certificate bytes (docs/CONFIGURATION.md, "Accounting
// charges", has the figures).
// It retains metadata only: no connection, goroutine, timer or
// subscription, and nothing per dormant binding.
//
// Pools are shared by every installation made with them. They bound all
// accounted bytes, the installation charges, the installations, the
// ingress requests in flight, the tenant clients and the physical
// connections, with per-tenant and per-provider ceilings on requests and
// connections, an idle age and a dial backoff (PoolLimits; none accepts 0
// as unlimited). Each step past the host's reservation charges one ingress
// request (a base plus a multiple of the binding's payload ceiling) until
// it ends; each physical TLS connection charges a fixed amount from before
// its dial until it is closed. A reservation
// that cannot be had means no network for that step (ClassPoolExhausted,
// with the Resource). These are accounting bounds, not measurements of
// process memory.
//
// A tenant client is created at the tenant's first visit that gets past
// the host's checks and holds at most one connection, shared by the
// tenant's bindings. The connection's private inbox lies under the
// tenant's own prefix, InboxPrefix(tenant): the tenant's broker user needs
// subscribe permission on that prefix and ".>" only. A pooled connection is probed before the step writes
// anything; one the broker closed while idle, one in lame-duck mode, one
// idle past MaxIdleAge or one authenticated with a secret Triggers.Rotate
// replaced is closed and replaced once, within the step. A
// connection that enters lame-duck mode during a step carries the rest of
// that step (the acknowledgement of a message that ran included) and is
// closed when the step ends. A failed dial, a dial the phase's deadline cut
// short included, starts the tenant's backoff (DialBackoff, doubling up to
// MaxDialBackoff, each wait jittered down to as little as half of that so
// that runtimes which lost one broker together do not redial in lockstep),
// during which its visits are skipped (ClassDialBackoff); only the owner
// stopping exempts a failure.
//
// A request whose deadline passes unanswered (consumer info or an
// acknowledgement: conn.Config.KeepUnanswered) keeps the tenant's
// connection for its other bindings; its late answer is discarded by its
// reply subject. A pull that misses its bound still closes it (see
// package conn, Deadlines). The binding whose consumer did not answer, or
// answered that it has no leader, is backed off on the same schedule as a
// dial, and never for less than twice the loop time its visit took: its
// visits are skipped without network (ClassBindingBackoff) until then,
// and a visit its consumer answers resets it.
//
// # One step
//
// Triggers.Step makes one visit, the next of the rotation (tenants in
// turn, and within a tenant its bindings in turn), with at most one message
// and one activation:
//
//  1. Host.PublicationEligible and Host.CredentialCurrent (and the
//     credential's own expiry): no network yet.
//  2. Host.ReserveInbound pins the route and its generation and reserves
//     admission and the binding's payload ceiling of input; unavailable
//     means no pull.
//  3. The pools: the ingress request, then the tenant client and its
//     connection; a refusal means no network. A pooled connection is
//     probed (one the broker closed, idle too long or authenticated with a
//     rotated-out secret is replaced once);
//     otherwise one is dialled: TCP to the literal address, handshake-first
//     TLS to the exact destination, INFO, then CONNECT, the inbox SUB and a
//     PING.
//  4. Consumer info ($JS.API.CONSUMER.INFO.<stream>.<consumer>), checked
//     against the profile by the pull layer (internal/jspull); a consumer
//     it proves empty (nothing pending, nothing awaiting redelivery) ends
//     the visit after this one round trip, and so does one whose only
//     pending delivery is the binding's own, before the earliest time the
//     broker can redeliver it (its NAK delay or ack wait, counted from
//     when the runtime sent the NAK or the pull; Counts.Awaiting).
//  5. Eligibility and the credential again, then a no-wait pull of one
//     message with a 100 ms expiry ({"batch":1,"no_wait":true,
//     "expires":100ms,"max_bytes":ceiling+9216}: room for a full header
//     block besides the payload). Empty
//     or expired ends the visit; busy, oversize and misconfigured are
//     counted and end it.
//  6. Inbound.Activate, with a derived Trigger Principal, a fresh
//     ActivationID and TraceID, the payload, the original deadline and the
//     pinned route generation; event bytes and headers select nothing.
//     The event's one valid traceparent header, if any, is handed on as
//     Activation.Link: a link beside the fresh trace, never its parent.
//  7. ActionFor maps the Outcome to the broker action (+ACK, +TERM, -NAK
//     with its delay, or +TERM "exhausted"); the credential is checked
//     again; the acknowledgement waits for the broker's receipt (none seen:
//     uncertain).
//  8. The monitor records the step (its counts, the consumer's figures
//     from step 4 and the one fixed-size last-step report);
//     Inbound.Release, then the pools' reservations are released.
//
// Steps 4, 5 and 7 are the ingress request's three protocol operations,
// and it admits no fourth: one would fail the visit (ClassInternal)
// without being written. Conformance counts them on the broker
// (TestTriggerOperationsPerVisit): one request per empty visit, three per
// delivering visit.
//
// Broker and host failures end the step, not the owner's work: they are in
// the StepReport (Result, Error, Resource) and in the monitor's counts.
//
// # Pacing
//
// Run is the owner's loop on the caller's goroutine, with one time.Timer.
// A step that delivered a message is followed at once by the next step,
// and so is every step up to and including that binding's next visit (one
// lap of the rotation); any other step is followed by one poll interval.
// An idle owner therefore makes one visit per poll interval whatever the
// number of bindings, and a busy one moves as fast as its round trips
// allow. StepReport.Wait is that pacing, for explicit Step drivers.
//
// # Parallel work
//
// An installation makes one step at a time, so it runs one activation at
// a time across all its bindings: a function that takes 2.5 s holds every
// other binding of its installation for 2.5 s. One binding never has more
// than one (its consumer's max_ack_pending is 1). Bindings run in parallel
// only in different installations: Split divides a configuration into n
// parts, each installed on the same Pools under its own logical ID and
// driven by its own Run (n goroutines, n timers), so that up to n
// activations run at once, all bounded by the host's admission (the
// reference host's MaxActivations). Each part is an installation of its
// own: its epoch, its charge (n installation bases in all), its
// tenant clients and connections (a tenant whose bindings are in k parts
// holds up to k connections, within the per-tenant ceilings), its
// rotation, pacing and monitor. Install refuses nothing across
// installations of different logical IDs: two that hold the same binding
// make it no faster and waste each other's visits to it; Split never
// does that. docs/OPERATIONS.md (Parallel work) says what a split costs
// and changes.
//
// # The deadline split
//
// With T the binding's operation timeout: the phase before the pull (probe
// or dial, consumer info) has at most T from the host's reservation; the
// pull has its own bound, T within its 100 ms expiry plus 150 ms to 1 s, so
// that a pull the broker holds ends with the broker's answer and a slow
// link does not lose deliveries unseen; the delivery's one
// original deadline D is the time the pull was sent plus T; the activation
// ends by D minus the acknowledgement's slice (T/4 within 25 ms to 1 s)
// and within the root budget; the acknowledgement
// gets the rest of D and never less than its slice. A slow activation can
// therefore not leave the acknowledgement without time.
//
// # Outcomes
//
// ActionFor is the profile's table: success is +ACK; a declared
// application failure, invalid arguments, an incompatible contract and an
// authentication or permission rejection are +TERM; timeout, cancellation
// and platform failure are a -NAK delayed by the binding's NAK delay while
// deliveries remain, and +TERM reported as exhausted at the last one. When
// the owner stops during a step (pull.ActionNone), or the credential check
// before the acknowledgement says no, nothing is sent (pull.AckNone): everything
// is reclaimed locally and the broker redelivers after its ack wait. An
// acknowledgement is
// pull.AckVerified when the broker's receipt arrived within the ack wait,
// pull.AckVerifiedLate after it, and pull.AckUncertain when the command may have
// been written but no receipt was seen; it is never replayed.
//
// # Monitor
//
// Monitor.Snapshot returns bounded aggregate counts per binding and in
// total, and per binding the ConsumerState its last consumer info showed
// (the broker's num_pending, num_ack_pending, num_redelivered and
// num_waiting, whether the consumer's leader gave them, and when), kept
// in a fixed-size slot at no request beyond step 4's; docs/METRICS.md says
// what it means between visits. Monitor.LastStep returns one fixed-size StepReport of the last
// step that delivered a message or failed (configuration epoch, binding
// index, stream sequence, delivery count, pinned route generation, outcome,
// action, acknowledgement state and error class); empty visits and skips
// do not replace it. It holds no payload, broker text or secret, and it is
// one slot, not a log. A host that implements StepObserver is given every
// step's report as the step ends: the per-message record of what ran and
// what the broker recorded, with the host's typed reason for the outcome
// (Result.Err, as StepReport.Cause). Package trigger/metrics exposes the counts and
// the last report in the Prometheus text format.
//
// # Logs
//
// PoolConfig.Logger (nil: silent) receives state changes, never traffic:
// each record has a fixed message and fixed attribute keys, and a state
// that persists logs once when it begins and once when it ends (a broker
// down for an hour writes a loss and one backoff line, then the recovery).
// Every record carries logical_id and epoch; connection, credential and
// pool records add tenant; binding records add binding, stream and
// consumer, and stream_seq and delivered for a delivery. No record holds a
// payload, a subject of an event, broker text or a secret. The Logs table
// of docs/OPERATIONS.md lists every message with its level and attributes.
//
// # Stopping
//
// Cancel Run's context and wait for Run to return: the step in progress is
// interrupted wherever it waits on the broker (dial, TLS, INFO, consumer
// info, the pull, the acknowledgement's receipt: the connection's socket is
// woken at once and the connection closed), the host's activation sees the
// context done, nothing more is acknowledged, and every tenant connection
// and client is closed; Run returns within milliseconds plus the host's
// activation. Explicit Step drivers call CloseIdle when they stop.
// Triggers.Close stops a Run or Step in progress the same way and releases
// the installation's charge; Pools.Close closes every installation and is
// the final reclamation. With PoolConfig.ThreadSocket a wait on the broker
// is not interrupted and ends at its own deadline. The host's own
// work (a function that outlives its activation) is the host's to wait
// for.
package trigger
