package trigger

import (
	"iter"
	"strconv"
	"sync"
	"time"

	"github.com/latent-systems/latent-nats/pull"
)

// StepResult says how a step ended.
type StepResult uint8

// Step results.
const (
	// ResultSkipped: a check or reservation said no before the pull
	// (ineligible publication, credential not current, admission or pool
	// unavailable, dial backoff); see StepReport.Error for which.
	ResultSkipped StepResult = iota + 1
	// ResultEmpty: consumer info proved that a pull would deliver nothing
	// (the consumer empty, or its one delivery awaiting a redelivery the
	// broker cannot make yet; see Counts.Awaiting), or the pull found
	// nothing.
	ResultEmpty
	// ResultDelivered: a message was pulled; see Outcome, Action and Ack.
	ResultDelivered
	// ResultFailed: the broker exchange failed before a delivery; see
	// Error.
	ResultFailed
	// ResultShutdown: the owner stopped during the step; everything was
	// reclaimed locally and nothing was acknowledged.
	ResultShutdown
)

// String returns the result's name, or "StepResult(n)" outside the list.
func (r StepResult) String() string {
	switch r {
	case ResultSkipped:
		return "skipped"
	case ResultEmpty:
		return "empty"
	case ResultDelivered:
		return "delivered"
	case ResultFailed:
		return "failed"
	case ResultShutdown:
		return "shutdown"
	}
	return "StepResult(" + strconv.Itoa(int(r)) + ")"
}

// ErrorClass groups what went wrong in a step. The zero value means none.
type ErrorClass uint8

// Error classes.
const (
	// ClassIneligible: the host said the publication is not eligible.
	ClassIneligible ErrorClass = iota + 1
	// ClassCredential: the tenant credential expired, was wiped or the
	// host said it is not current.
	ClassCredential
	// ClassUnavailable: the host's admission or input allocation was
	// unavailable (ErrUnavailable).
	ClassUnavailable
	// ClassHost: the host's reservation failed otherwise.
	ClassHost
	// ClassPoolExhausted: a shared pool limit refused a reservation.
	ClassPoolExhausted
	// ClassDialBackoff: the tenant client waits out its dial backoff.
	ClassDialBackoff
	// ClassBindingBackoff: the binding waits out its backoff after visits
	// its consumer did not answer or answered without a leader.
	ClassBindingBackoff
	// ClassDial: dialling or the handshake failed.
	ClassDial
	// ClassConnection: the connection failed or timed out during an
	// exchange, or the server closed it.
	ClassConnection
	// ClassBrokerPermission: the broker refused a publish (permissions).
	ClassBrokerPermission
	// ClassProfile: the consumer does not match the profile.
	ClassProfile
	// ClassPaused: the consumer matches the profile but is paused (its
	// pause_until lies ahead); the visit is skipped without a pull.
	ClassPaused
	// ClassConsumerMissing: the stream or consumer does not exist, or
	// nothing answers on its subjects.
	ClassConsumerMissing
	// ClassAPI: another JetStream API error.
	ClassAPI
	// ClassProtocol: a malformed, oversized or foreign reply; the
	// connection was closed.
	ClassProtocol
	// ClassBusy: the consumer's capacity is taken (waiting requests).
	ClassBusy
	// ClassOversize: the next message exceeds the payload ceiling; the
	// broker refused to deliver it and an operator must correct it.
	ClassOversize
	// ClassMisconfigured: the consumer refused the profile's pull request.
	ClassMisconfigured
	// ClassBrokerUnavailable: leader change or server shutdown.
	ClassBrokerUnavailable
	// ClassUnsupportedAck: the broker delivered a message whose ack
	// subject has a form the profile does not support (a JetStream domain:
	// see internal/jspull's ErrUnsupportedAck). The function did not run,
	// nothing was sent and the connection is kept; the broker redelivers
	// the message after its ack wait and gives it up after max_deliver.
	ClassUnsupportedAck
	// ClassAckUncertain: an acknowledgement without a verified receipt.
	ClassAckUncertain
	// ClassShutdown: the owner stopped during the step.
	ClassShutdown
	// ClassInternal: anything else.
	ClassInternal
)

// numErrorClasses is the number of ErrorClass values; they are
// 1..numErrorClasses.
const numErrorClasses = int(ClassInternal)

// String returns the class's name, "none" for zero, or "ErrorClass(n)"
// outside the list.
func (c ErrorClass) String() string {
	switch c {
	case 0:
		return "none"
	case ClassIneligible:
		return "ineligible"
	case ClassCredential:
		return "credential"
	case ClassUnavailable:
		return "unavailable"
	case ClassHost:
		return "host"
	case ClassPoolExhausted:
		return "pool exhausted"
	case ClassDialBackoff:
		return "dial backoff"
	case ClassBindingBackoff:
		return "binding backoff"
	case ClassDial:
		return "dial"
	case ClassConnection:
		return "connection"
	case ClassBrokerPermission:
		return "broker permission"
	case ClassProfile:
		return "profile"
	case ClassPaused:
		return "paused"
	case ClassConsumerMissing:
		return "consumer missing"
	case ClassAPI:
		return "api"
	case ClassProtocol:
		return "protocol"
	case ClassBusy:
		return "busy"
	case ClassOversize:
		return "oversize"
	case ClassMisconfigured:
		return "misconfigured"
	case ClassBrokerUnavailable:
		return "broker unavailable"
	case ClassUnsupportedAck:
		return "unsupported ack subject"
	case ClassAckUncertain:
		return "ack uncertain"
	case ClassShutdown:
		return "shutdown"
	case ClassInternal:
		return "internal"
	}
	return "ErrorClass(" + strconv.Itoa(int(c)) + ")"
}

// DialFailure says why a dial failed: StepReport.Dial, beside ClassDial.
type DialFailure uint8

// Dial failures, by conn's typed errors.
const (
	// DialRefused: the broker's address refused or reset the TCP
	// connection (conn.ErrRefused): nothing listens there (a broker that
	// is down), or a firewall rejects it.
	DialRefused DialFailure = iota + 1
	// DialTLS: the TLS handshake failed: a certificate the destination's
	// roots, server name or pin do not accept (conn.ErrCertificate), a
	// client certificate the broker refused (none presented where one is
	// required, an unknown authority, an expired one:
	// conn.ErrClientCertificate), a server that does not speak TLS first
	// (conn.ErrPlaintext), or another handshake failure (conn.ErrTLS).
	DialTLS
	// DialAuthorization: the broker refused the credential at CONNECT
	// (conn.KindAuthorization, KindAuthenticationExpired,
	// KindAuthenticationRevoked).
	DialAuthorization
	// DialOther: any other failure of the dial or the handshake: a
	// timeout, an unreachable network, the server's INFO or another -ERR.
	DialOther
)

// numDialFailures is the number of DialFailure values; they are
// 1..numDialFailures.
const numDialFailures = int(DialOther)

// String returns the failure's name, "none" for zero, or
// "DialFailure(n)" outside the list.
func (f DialFailure) String() string {
	switch f {
	case 0:
		return "none"
	case DialRefused:
		return "refused"
	case DialTLS:
		return "tls"
	case DialAuthorization:
		return "authorization"
	case DialOther:
		return "other"
	}
	return "DialFailure(" + strconv.Itoa(int(f)) + ")"
}

// StepReport is the fixed-size report of one step. It holds no payload,
// broker text or secret; Cause, the one field that refers to anything
// else, is the host's own error value, bound by the same contract
// (Result.Err).
type StepReport struct {
	// Step is the installation's step number, from 1.
	Step uint64
	// Epoch is the configuration epoch.
	Epoch uint64
	// Binding is the index of the binding visited in Config.Bindings.
	Binding int
	// At is when the step started.
	At     time.Time
	Result StepResult
	// StreamSeq and Delivered identify the delivery (ResultDelivered).
	StreamSeq uint64
	Delivered uint64
	// RouteGeneration is the generation pinned by the host's reservation,
	// 0 when none was made.
	RouteGeneration uint64
	// Outcome is the activation's outcome, 0 when none ran.
	Outcome Outcome
	// Cause is the host's typed reason for Outcome (Result.Err), nil when
	// it gave none: match it with errors.Is and errors.As. It is the same
	// value in Step's report, the StepObserver's and LastStep (which holds
	// it until the next report replaces it: a host keeps it small); no
	// metric or log carries it.
	Cause error
	// Action is what was decided for the broker, the right-hand column
	// of the profile's outcome table (ActionFor), 0 when nothing was
	// delivered. pull.ActionNone means the owner stopped (operator
	// shutdown): nothing is sent, and the broker redelivers after its ack
	// wait. A credential check that refuses the acknowledgement keeps the
	// planned action here and reports pull.AckNone in Ack.
	Action pull.Action
	// Ack is what is known of the acknowledgement: pull.AckNone when no
	// command was sent (no delivery, shutdown, a refused check, or the
	// connection refused the command before writing it), pull.AckVerified
	// when the broker's receipt arrived within the ack wait,
	// pull.AckVerifiedLate after it (the broker may have redelivered
	// meanwhile), pull.AckUncertain when the command may have been written
	// but no receipt was seen (never replayed; the broker may redeliver).
	Ack pull.AckState
	// Error is the class of what went wrong, 0 when nothing did.
	Error ErrorClass
	// Resource is the pool limit that refused a reservation
	// (ClassPoolExhausted only).
	Resource Resource
	// Dial is why the dial failed: refused, TLS, authorization or other
	// (ClassDial only).
	Dial DialFailure
	// Wait is the pacing after this step: 0 when the next step follows at
	// once, else the poll interval (see Triggers.Run).
	Wait time.Duration
}

// Counts are the aggregate counts of one binding, or of all (Totals).
type Counts struct {
	// Visits counts steps that selected the binding.
	Visits uint64
	// Skipped counts visits a check or reservation stopped before the
	// pull (the reason is counted by Error).
	Skipped uint64
	// Empty counts visits that consumer info proved empty (one round
	// trip); EmptyPulls those whose pull found nothing; Awaiting those
	// that sent no pull because consumer info showed the binding's one
	// delivery pending before the broker can redeliver it (its NAK delay
	// or ack wait, as the runtime gave it, has not passed).
	Empty      uint64
	EmptyPulls uint64
	Awaiting   uint64
	// Delivered counts messages pulled.
	Delivered uint64
	// Acked, Termed, Nacked and Exhausted count commands sent, by action,
	// verified or not; Uncertain those without a verified receipt and
	// Late those verified after the ack wait.
	Acked     uint64
	Termed    uint64
	Nacked    uint64
	Exhausted uint64
	Uncertain uint64
	Late      uint64
	// Unacknowledged counts deliveries for which nothing was sent.
	Unacknowledged uint64
	// Failed counts visits whose broker exchange failed before a delivery.
	Failed uint64

	// outcomes, classes, refusals and dials count activation outcomes,
	// error classes, refused pool reservations and failed dials by why,
	// indexed by the value (index 0 unused). They are read with Outcome,
	// Error, Refusal and DialFailure, so that a value added to an enum
	// changes no caller.
	outcomes [numOutcomes + 1]uint64
	classes  [numErrorClasses + 1]uint64
	refusals [numResources + 1]uint64
	dials    [numDialFailures + 1]uint64
}

// Outcome returns how many activations ended with o, 0 for a value outside
// the list.
func (c Counts) Outcome(o Outcome) uint64 {
	if o < 1 || int(o) > numOutcomes {
		return 0
	}
	return c.outcomes[o]
}

// Error returns how many steps reported error class e
// (StepReport.Error), 0 for a value outside the list.
func (c Counts) Error(e ErrorClass) uint64 {
	if e < 1 || int(e) > numErrorClasses {
		return 0
	}
	return c.classes[e]
}

// Refusal returns how many pool reservations resource r refused, 0 for a
// value outside the list.
func (c Counts) Refusal(r Resource) uint64 {
	if r < 1 || int(r) > numResources {
		return 0
	}
	return c.refusals[r]
}

// DialFailure returns how many failed dials (StepReport.Error ClassDial)
// failed for reason f, 0 for a value outside the list.
func (c Counts) DialFailure(f DialFailure) uint64 {
	if f < 1 || int(f) > numDialFailures {
		return 0
	}
	return c.dials[f]
}

// Outcomes yields every Outcome value in order with its count, so that a
// reader (an exporter) walks them all without knowing how many there are.
// Errors, Refusals and DialFailures do the same for ErrorClass, Resource
// and DialFailure.
func (c *Counts) Outcomes() iter.Seq2[Outcome, uint64] { return each[Outcome](c.outcomes[:]) }

// Errors yields every ErrorClass value with its count; see Outcomes.
func (c *Counts) Errors() iter.Seq2[ErrorClass, uint64] { return each[ErrorClass](c.classes[:]) }

// Refusals yields every Resource value with its count; see Outcomes.
func (c *Counts) Refusals() iter.Seq2[Resource, uint64] { return each[Resource](c.refusals[:]) }

// DialFailures yields every DialFailure value with its count; see
// Outcomes.
func (c *Counts) DialFailures() iter.Seq2[DialFailure, uint64] { return each[DialFailure](c.dials[:]) }

// each yields the values 1..len(counts)-1 of an enum with counts[value].
func each[E ~uint8](counts []uint64) iter.Seq2[E, uint64] {
	return func(yield func(E, uint64) bool) {
		for i := 1; i < len(counts); i++ {
			if !yield(E(i), counts[i]) {
				return
			}
		}
	}
}

// SetOutcome sets the count of outcome o. With SetError and SetRefusal it
// lets counts be built outside a Monitor, as the other fields of Counts
// can be (an exporter's test fixture, say). A value outside its list is
// ignored.
func (c *Counts) SetOutcome(o Outcome, n uint64) {
	if o >= 1 && int(o) <= numOutcomes {
		c.outcomes[o] = n
	}
}

// SetError sets the count of error class e; see SetOutcome.
func (c *Counts) SetError(e ErrorClass, n uint64) {
	if e >= 1 && int(e) <= numErrorClasses {
		c.classes[e] = n
	}
}

// SetRefusal sets the count of resource r; see SetOutcome.
func (c *Counts) SetRefusal(r Resource, n uint64) {
	if r >= 1 && int(r) <= numResources {
		c.refusals[r] = n
	}
}

// SetDialFailure sets the count of dial failure f; see SetOutcome.
func (c *Counts) SetDialFailure(f DialFailure, n uint64) {
	if f >= 1 && int(f) <= numDialFailures {
		c.dials[f] = n
	}
}

func (c *Counts) add(o *Counts) {
	c.Visits += o.Visits
	c.Skipped += o.Skipped
	c.Empty += o.Empty
	c.EmptyPulls += o.EmptyPulls
	c.Awaiting += o.Awaiting
	c.Delivered += o.Delivered
	c.Acked += o.Acked
	c.Termed += o.Termed
	c.Nacked += o.Nacked
	c.Exhausted += o.Exhausted
	c.Uncertain += o.Uncertain
	c.Late += o.Late
	c.Unacknowledged += o.Unacknowledged
	c.Failed += o.Failed
	for i := range c.outcomes {
		c.outcomes[i] += o.outcomes[i]
	}
	for i := range c.classes {
		c.classes[i] += o.classes[i]
	}
	for i := range c.refusals {
		c.refusals[i] += o.refusals[i]
	}
	for i := range c.dials {
		c.dials[i] += o.dials[i]
	}
}

// ConsumerState is a binding's consumer as its last consumer info showed
// it: the broker's own figures, from the one consumer-info request a visit
// makes anyway (step 4 of the package documentation), and none other. A
// visit that got a reply it could decode replaces it (an empty visit, one
// that pulled, one the consumer's pause or a profile mismatch ended); a
// visit stopped before consumer info, or whose request failed, leaves the
// last one in place, older by that visit. The zero value, At zero, means
// no visit has read one yet.
type ConsumerState struct {
	// At is when the runtime read the reply, on the installation's clock
	// (not the broker's "ts", whose clock may differ): the state's age is
	// now minus At.
	At time.Time
	// Pending is num_pending: stream messages matching the consumer's
	// filter never delivered to it. The visit's pull, if it made one,
	// came after: a delivery it pulled is still counted here.
	Pending uint64
	// AckPending is num_ack_pending: deliveries awaiting an
	// acknowledgement, a NAKed one waiting out its delay included (at
	// most 1, the profile's max_ack_pending).
	AckPending int
	// Redelivered is num_redelivered: messages delivered more than once
	// whose count the broker still keeps (it keeps it for one that ran
	// out of deliveries until the message leaves the stream).
	Redelivered int
	// Waiting is num_waiting: pull requests waiting at the consumer
	// (another puller's, as the runtime's own pull is sent after).
	Waiting int
	// Leader reports that the reply is the consumer leader's view
	// (the pull layer's Pending.Leader): its cluster state names a leader, or the
	// broker is a server outside a cluster. False: a replica answered
	// while a new consumer elected its first leader.
	Leader bool
}

// Snapshot is a copy of a Monitor's counts.
type Snapshot struct {
	LogicalID string
	Epoch     uint64
	// Steps counts every step.
	Steps uint64
	// Dials counts connections dialled (successfully or not) and Replaced
	// idle connections found unusable (closed by the broker, lame duck,
	// idle past MaxIdleAge) when a step needed them.
	Dials    uint64
	Replaced uint64
	// Rotations counts the credentials Triggers.Rotate accepted.
	Rotations uint64
	// Totals sums Bindings.
	Totals Counts
	// Bindings holds one Counts per binding, in configuration order.
	Bindings []Counts
	// Consumers holds the last ConsumerState of each binding, in
	// configuration order.
	Consumers []ConsumerState
}

// Monitor observes one installation: bounded aggregate counts and the last
// terminal or error report. It is safe for concurrent use; readers never
// block a step for longer than a copy.
type Monitor struct {
	logicalID string
	epoch     uint64

	mu        sync.Mutex
	steps     uint64
	dials     uint64
	replaced  uint64
	rotations uint64
	bindings  []Counts
	consumers []ConsumerState
	last      StepReport
	hasLast   bool
	skip      StepReport
	hasSkip   bool
}

func newMonitor(logicalID string, epoch uint64, bindings int) *Monitor {
	return &Monitor{logicalID: logicalID, epoch: epoch, bindings: make([]Counts, bindings),
		consumers: make([]ConsumerState, bindings)}
}

// Snapshot returns the counts now.
func (m *Monitor) Snapshot() Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := Snapshot{
		LogicalID: m.logicalID,
		Epoch:     m.epoch,
		Steps:     m.steps,
		Dials:     m.dials,
		Replaced:  m.replaced,
		Rotations: m.rotations,
		Bindings:  append([]Counts(nil), m.bindings...),
		Consumers: append([]ConsumerState(nil), m.consumers...),
	}
	for i := range s.Bindings {
		s.Totals.add(&s.Bindings[i])
	}
	return s
}

// rotated counts one credential rotation.
func (m *Monitor) rotated() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rotations++
}

// LastStep returns the report of the last step that delivered a message
// (whatever became of it, shutdown included) or failed, and false before
// there was one. Empty visits, skips and a stop between deliveries do not
// replace it. It is one slot, not a log: a sequence of failures needs
// external observation.
func (m *Monitor) LastStep() (StepReport, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last, m.hasLast
}

// LastSkip returns the report of the last step that a check or a
// reservation stopped before the pull (ResultSkipped: ineligible,
// credential, host, pool exhausted, dial backoff, paused; its Error says
// which), and false before there was one. It is the second fixed-size
// slot beside LastStep, which skips never replace: a tenant whose
// credential was revoked, or whose dials back off, shows here and not
// only in the counts.
func (m *Monitor) LastSkip() (StepReport, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.skip, m.hasSkip
}

// record counts one finished step and keeps its report when it delivered
// or failed, and the consumer state it read, if any. empty says what
// proved an empty result; dials and replaced are the step's connection
// events.
func (m *Monitor) record(r *StepReport, empty emptyBy, dials, replaced uint64, info *ConsumerState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.steps++
	m.dials += dials
	m.replaced += replaced
	if info != nil {
		m.consumers[r.Binding] = *info
	}
	c := &m.bindings[r.Binding]
	c.Visits++
	if r.Error != 0 && int(r.Error) <= numErrorClasses {
		c.classes[r.Error]++
	}
	if r.Resource != 0 && int(r.Resource) <= numResources {
		c.refusals[r.Resource]++
	}
	if r.Outcome != 0 && int(r.Outcome) <= numOutcomes {
		c.outcomes[r.Outcome]++
	}
	if r.Dial != 0 && int(r.Dial) <= numDialFailures {
		c.dials[r.Dial]++
	}
	switch r.Result {
	case ResultSkipped:
		c.Skipped++
		m.skip = *r
		m.hasSkip = true
	case ResultEmpty:
		switch empty {
		case emptyByInfo:
			c.Empty++
		case emptyByPull:
			c.EmptyPulls++
		case emptyByAwaiting:
			c.Awaiting++
		}
	case ResultFailed:
		c.Failed++
	}
	if r.Delivered > 0 {
		c.Delivered++
		if r.Ack == pull.AckNone {
			c.Unacknowledged++
		}
	}
	if r.Ack != pull.AckNone && r.Ack != 0 {
		switch r.Action {
		case pull.ActionAck:
			c.Acked++
		case pull.ActionTerm:
			c.Termed++
		case pull.ActionNak:
			c.Nacked++
		case pull.ActionExhausted:
			c.Exhausted++
		}
	}
	switch r.Ack {
	case pull.AckUncertain:
		c.Uncertain++
	case pull.AckVerifiedLate:
		c.Late++
	}
	switch {
	case r.Result == ResultDelivered, r.Result == ResultFailed,
		r.Result == ResultShutdown && r.Delivered > 0:
		m.last = *r
		m.hasLast = true
	}
}
