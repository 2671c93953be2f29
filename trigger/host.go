package trigger

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// The host is what the runtime delivers to: the publication catalog, the
// admission controller and the activation stores of the embedding. The
// runtime declares the little it needs here; trigger/refhost is a reference
// implementation.
//
// Call order within one step (see Triggers.Step):
//
//  1. PublicationEligible(binding)            no network yet
//  2. CredentialCurrent(tenant)               no network yet
//  3. ReserveInbound(ctx, request) -> Inbound pins route, admission, input
//  4. (pool reservations, dial, consumer info)
//  5. PublicationEligible(binding) again, CredentialCurrent(tenant) again
//  6. (pull one message)
//  7. Inbound.Activate(ctx, activation)       at most once
//  8. CredentialCurrent(tenant) again         before the acknowledgement
//  9. (acknowledge)
//  10. Inbound.Release()                      exactly once per Inbound
//
// A "no" at 1, 2 or 3 means nothing is sent to the broker; a "no" at 5 means
// no pull; a "no" at 8 means no acknowledgement (the delivery stays
// unacknowledged and the broker redelivers it after its ack wait). All calls
// come from the goroutine that runs Run or Step, one at a time, so a host
// needs no locking on behalf of one Triggers (but one host may serve
// several).
//
// Host code and the installation. This is the one statement of the
// contract; the methods refer to it. Host code is every method of the
// Host, its Inbound and StepObserver, and the handler of
// PoolConfig.Logger. The runtime never runs host code while it holds the
// installation's lock, so host code may call into the installation, and
// may wait for another goroutine that does, without deadlock:
//
//   - Close stops the step (its context is done; nothing more is
//     acknowledged), closes the installation and returns: it waits for
//     the runtime's own work of the step, never for host code. The step
//     returns ErrClosed once its host code returns; once Close returned,
//     it may still make the one host call it was entering, then calls the
//     host only to Release its Inbound and for ObserveStep.
//   - CloseIdle during a step returns at once; the step closes the
//     connections when it ends.
//   - Step and Run called with the context ReserveInbound or Activate was
//     given (or one derived from it) return ErrReentrant; with another
//     context, while a Run or Step drives the installation, ErrRunning.
//   - Rotate, Monitor, Snapshot, LastStep and the Pools' methods never
//     wait for a step; Pools.Close closes each installation as Close does.
//
// PoolConfig.Dialer and PoolConfig.Rand are providers, not callbacks: the
// runtime calls them holding the lock, and they must not call into the
// installation.

// ErrUnavailable is returned (or wrapped) by Host.ReserveInbound when
// admission or the input allocation cannot be had now: the runtime makes no
// pull for that binding this visit and counts the visit as unavailable.
var ErrUnavailable = errors.New("trigger: inbound capacity unavailable")

// ErrNotEligible may be returned (or wrapped) by Host.PublicationEligible;
// ErrCredentialRevoked by Host.CredentialCurrent. The runtime treats every
// non-nil error of those methods as "no"; the sentinels only let hosts and
// tests speak the same words.
var (
	ErrNotEligible       = errors.New("trigger: publication not eligible")
	ErrCredentialRevoked = errors.New("trigger: credential not current")
)

// Host is the embedding's side of the runtime.
type Host interface {
	// PublicationEligible reports whether the binding's publication
	// (service, contract, function, route) may receive events now. It is
	// called before any networking and again just before the pull. A
	// non-nil error means no.
	PublicationEligible(b BindingRef) error

	// CredentialCurrent reports whether the tenant's broker credential is
	// still current (not revoked). It is called before the pull and again
	// before the acknowledgement; the runtime checks the credential's own
	// expiry itself. A non-nil error means no.
	CredentialCurrent(tenant string) error

	// ReserveInbound resolves and pins the binding's current route and its
	// generation and reserves admission and r.MaxInputBytes of input
	// allocation, before any network. It creates no guest store or
	// execution cell. An error matching ErrUnavailable means no capacity
	// now; any other error is counted as a host error. Both mean no pull.
	ReserveInbound(ctx context.Context, r InboundRequest) (Inbound, error)
}

// StepObserver is an optional interface of a Host. A host that implements
// it is given the report of every step, delivered or not: for a delivery,
// what ran (StreamSeq, Delivered, Outcome) and what the broker recorded of
// it (Action, Ack). It is the per-message record that the Monitor's one
// LastStep slot is not: an embedding that must answer, for every message,
// "what ran, and did the broker record its outcome?" keeps these reports.
//
// ObserveStep is called on the stepping goroutine after the step's Inbound
// was released and the Monitor counted the step, so a report observed is
// already in the Snapshot. It must return promptly; it may call the
// Triggers as every host callback may (see "Host code and the
// installation" above).
type StepObserver interface {
	ObserveStep(r StepReport)
}

// Inbound is one reservation made by Host.ReserveInbound. The runtime calls
// Activate at most once and Release exactly once, after Activate returned
// or without Activate (an empty visit, a refused check, a failed pull).
type Inbound interface {
	// RouteGeneration is the generation of the route pinned at
	// reservation. Accepted input keeps it, whatever the route becomes.
	RouteGeneration() uint64

	// Activate runs the binding's function once on a delivered message
	// with the admission and route pinned at reservation. It must return
	// by a.Deadline or when ctx is done, whichever is first; ctx is done
	// early only when the owner stops (operator shutdown), and then the
	// runtime sends nothing to the broker whatever the result. The host
	// keeps its own final guarded start check: a publication revoked
	// since reservation is refused here (OutcomePermissionRejected).
	// a.Payload is valid only during the call.
	Activate(ctx context.Context, a Activation) Result

	// Release returns the admission and input allocation and drives any
	// cleanup of the activation to its end. Called exactly once.
	Release()
}

// BindingRef identifies one binding of an installed configuration. Its
// strings are the configuration's own; it carries no secret.
type BindingRef struct {
	// LogicalID and Epoch identify the installation.
	LogicalID string
	Epoch     uint64
	// Index is the binding's position in Config.Bindings.
	Index int
	// ID, Tenant and the publication the binding delivers to.
	ID        string
	Tenant    string
	Principal string
	Service   string
	Contract  string
	Function  string
	// Route is the binding's configured route, empty for the current one.
	Route string
}

// InboundRequest is what Host.ReserveInbound reserves for.
type InboundRequest struct {
	Binding BindingRef
	// MaxInputBytes is the largest payload the pull may deliver: the
	// binding's payload ceiling.
	MaxInputBytes int
	// Deadline is the latest the step holding this reservation can end:
	// the phase before the pull (the operation timeout), the pull's own
	// bound, and the delivery's deadline (the operation timeout from the
	// pull) with the acknowledgement's slice. Those phases are counted
	// from ReserveInbound's return, Deadline from its call: the step ends
	// at most the time ReserveInbound itself took past Deadline. The
	// activation's own deadline is Activation.Deadline.
	Deadline time.Time
}

// Principal is the Trigger principal an activation runs as. It is derived
// from the binding alone: event bytes and headers select nothing.
type Principal struct {
	// Subject is the binding's trusted principal subject.
	Subject string
	// Tenant and Binding name where the event came from.
	Tenant  string
	Binding string
}

// String returns "trigger:<tenant>/<binding>/<subject>".
func (p Principal) String() string {
	return "trigger:" + p.Tenant + "/" + p.Binding + "/" + p.Subject
}

// iDLen is the length of activation IDs and trace IDs, in bytes.
const iDLen = 16

// ActivationID is a fresh random root activation ID.
type ActivationID [iDLen]byte

// TraceID is a fresh random trace ID (the W3C trace-id size).
type TraceID [iDLen]byte

// String returns the lower-case hex form.
func (id ActivationID) String() string { return hex16(id) }

// String returns the lower-case hex form.
func (id TraceID) String() string { return hex16(id) }

func hex16(b [iDLen]byte) string {
	var out [2 * iDLen]byte
	return string(appendHex(out[:0], b[:]))
}

// Activation is one root activation of a delivered message.
type Activation struct {
	Principal    Principal
	ActivationID ActivationID
	// Trace is the activation's own fresh random trace ID, the root of its
	// lineage whatever the event carried.
	Trace TraceID
	// Link is the event's trace context, when its header block held
	// exactly one valid traceparent (see TraceLink): a link beside Trace,
	// never its parent, and the only thing besides Payload that comes
	// from the event. It selects nothing.
	Link    TraceLink
	Binding BindingRef
	// RouteGeneration is the generation pinned at reservation.
	RouteGeneration uint64
	// Deadline is the delivery's original deadline less the slice kept for
	// the acknowledgement; Budget is the binding's root wall-time budget
	// (the activation must also end within it).
	Deadline time.Time
	Budget   time.Duration
	// StreamSeq and Delivered identify the delivery (Delivered is 1 on the
	// first delivery, at most MaxDeliver).
	StreamSeq  uint64
	Delivered  uint64
	MaxDeliver int
	// Payload is the message body: the function's argument array in
	// application/vnd.latent.wit-values.v1+json. It aliases a read buffer
	// and is valid only during Activate; copy what must outlive the call.
	Payload []byte
}

// Result is what an activation produced, as far as the broker is concerned.
type Result struct {
	Outcome Outcome
	// Err, when set, is the host's typed reason for Outcome, for the
	// embedder to match with errors.Is and errors.As: refhost sets its
	// *ArgumentError for OutcomeInvalidArguments, say. It must hold no
	// payload bytes, secret or guest output, only the host's own words
	// (argument positions, rules, declared names), be small (the Monitor
	// keeps the last one) and comparable (a pointer or a sentinel: a
	// StepReport holding it is compared with ==). The runtime decides
	// nothing by it (Outcome alone selects the broker action), never logs
	// or exports it, and hands it on as StepReport.Cause.
	Err error
}

// Outcome is how an activation ended. Each maps to exactly one broker
// action (see ActionFor).
type Outcome uint8

// Outcomes. The zero value is not an outcome; ActionFor treats it (and
// anything outside the list) as a platform failure.
const (
	// OutcomeSuccess: the function returned normally.
	OutcomeSuccess Outcome = iota + 1
	// OutcomeDeclaredFailure: the function returned a failure its contract
	// declares (an application error).
	OutcomeDeclaredFailure
	// OutcomeInvalidArguments: the payload does not decode as the
	// function's argument array.
	OutcomeInvalidArguments
	// OutcomeIncompatibleContract: the publication's contract does not
	// match the binding's.
	OutcomeIncompatibleContract
	// OutcomeAuthenticationRejected: the Trigger principal was not
	// authenticated.
	OutcomeAuthenticationRejected
	// OutcomePermissionRejected: the principal may not call the function,
	// or the publication was revoked at the final start check.
	OutcomePermissionRejected
	// OutcomeTimeout: the activation's deadline or budget ran out.
	OutcomeTimeout
	// OutcomeCancelled: the activation was cancelled by the platform (not
	// by the owner stopping, which is shutdown).
	OutcomeCancelled
	// OutcomePlatformFailure: any other failure of the platform (trap,
	// resource exhaustion, store failure).
	OutcomePlatformFailure
)

// numOutcomes is the number of Outcome values; they are 1..numOutcomes.
const numOutcomes = int(OutcomePlatformFailure)

// String returns the outcome's name, "none" for zero (no activation), or
// "Outcome(n)" outside the list.
func (o Outcome) String() string {
	switch o {
	case 0:
		return "none"
	case OutcomeSuccess:
		return "success"
	case OutcomeDeclaredFailure:
		return "declared failure"
	case OutcomeInvalidArguments:
		return "invalid arguments"
	case OutcomeIncompatibleContract:
		return "incompatible contract"
	case OutcomeAuthenticationRejected:
		return "authentication rejected"
	case OutcomePermissionRejected:
		return "permission rejected"
	case OutcomeTimeout:
		return "timeout"
	case OutcomeCancelled:
		return "cancelled"
	case OutcomePlatformFailure:
		return "platform failure"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}
