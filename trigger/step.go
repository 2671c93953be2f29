package trigger

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/pull"
)

// The deadline split of one delivery. T is the binding's operation
// timeout.
//
//   - Before the pull (client probe or dial, consumer info): at most T from
//     the host's reservation (Host.ReserveInbound returning).
//   - The pull: its own bound (pullBound: T, and never less than
//     jspull.RequestExpires plus jspull.DefaultNextMargin nor more than
//     RequestExpires plus jspull.MaxNextMargin), never cut short by the
//     delivery's deadline. The broker answers a no-wait pull with an expiry
//     within the expiry and a round trip, but a pull whose answer comes
//     later than the client's bound loses a delivery unseen: the broker
//     delivered the message to a connection the client closed, counted
//     against max_deliver, and after max_deliver such misses the broker
//     gives the event up without it ever running. So the bound follows the
//     operator's bound of a round trip, T, rather than a fixed margin.
//   - The delivery's one original deadline D is the time the pull was sent
//     plus T; the broker's ack wait (at least T + 1 s) starts no earlier.
//   - The activation ends by D minus the acknowledgement's slice (ackSlice:
//     T/ackSliceDivisor within minAckSlice-maxAckSlice) and within the
//     binding's root budget from its start, whichever is first.
//   - The acknowledgement gets the rest of D, and never less than its slice
//     (an activation that overran its deadline still leaves the ack its
//     slice, which the ack wait's one-second margin covers).
const (
	ackSliceDivisor = 4
	minAckSlice     = 25 * time.Millisecond
	maxAckSlice     = time.Second
)

// ackSlice returns the part of the operation timeout kept for the
// acknowledgement.
func ackSlice(timeout time.Duration) time.Duration {
	return min(max(timeout/ackSliceDivisor, minAckSlice), maxAckSlice)
}

// pullMargin returns the margin beyond the pull's expiry for an operation
// timeout: the pull's bound is the timeout, within the pull layer's
// margins (internal/jspull).
func pullMargin(timeout time.Duration) time.Duration {
	return min(max(timeout-jspull.RequestExpires, jspull.DefaultNextMargin), jspull.MaxNextMargin)
}

// pullBound is the longest the pull of a step waits for the broker's
// answer (see the deadline split above).
func pullBound(timeout time.Duration) time.Duration {
	return jspull.RequestExpires + pullMargin(timeout)
}

// stepBound is the longest a step can take once the host's reservation is
// held: the phase before the pull, the pull's own bound, and the
// delivery's deadline with the acknowledgement's slice.
func stepBound(timeout time.Duration) time.Duration {
	return timeout + pullBound(timeout) + timeout + ackSlice(timeout)
}

// Step makes one visit: the next binding of the rotation, at most one
// message and one activation (see the package documentation for the flow).
// It returns the step's report, whose Wait is the pacing Run applies: an
// explicit driver waits that long before the next Step. Explicit drivers
// call CloseIdle when they stop.
//
// Errors end the owner's work, not the step's: ctx's error when the owner
// stopped (ctx's end interrupts a wait on the broker at once; the step
// reclaimed everything locally and acknowledged nothing more), ErrClosed
// when Close stopped it, ErrSuperseded, ErrClosed, ErrNoHost, ErrRunning
// while Run runs or another Step is in progress, ErrReentrant from inside
// the installation's own host callbacks (see host.go). Broker and host
// failures are not errors of Step: they are in the report and the
// monitor.
func (t *Triggers) Step(ctx context.Context, host Host) (StepReport, error) {
	if host == nil {
		return StepReport{}, ErrNoHost
	}
	ctx, err := t.claim(ctx)
	if err != nil {
		return StepReport{}, err
	}
	r, err := t.step(ctx, host)
	t.mu.Lock()
	// Before the claim's end cancels ctx: the connections kept hold no
	// registration on it (see conn.Conn.Detach).
	for i := range t.tenants {
		t.tenants[i].client.detach()
	}
	t.unclaimLocked()
	t.unlock()
	return r, stopped(ctx, err)
}

// step makes one visit for the installation's driver (see claim). It
// holds mu except around host code, which it runs without (see host.go).
func (t *Triggers) step(ctx context.Context, host Host) (StepReport, error) {
	if err := ctx.Err(); err != nil {
		return StepReport{}, err
	}
	t.mu.Lock()
	if t.closed {
		t.unlock()
		return StepReport{}, ErrClosed
	}
	if !t.pools.current(t.entry, t.epoch) {
		t.unlock()
		return StepReport{}, ErrSuperseded
	}
	t.stepping = true
	now := t.now()
	t.sweep(now)
	b := t.nextBinding()
	t.steps++
	r := StepReport{Step: t.steps, Epoch: t.epoch, Binding: b.index, At: now, Ack: pull.AckNone}
	cl := &t.tenants[b.tenant].client
	dials, replaced := cl.dials, cl.replaced
	r, empty, info, err := t.visitBinding(ctx, host, b, r)
	cl.retire(t.pools, &t.tenants[b.tenant], t.now())
	if err != nil {
		r.Result = ResultShutdown
		r.Error = ClassShutdown
		if r.Delivered > 0 {
			r.Action = pull.ActionNone
			r.Ack = pull.AckNone
		}
	}
	t.pace(b, &r)
	t.logStep(b, &r)
	var read *ConsumerState
	if !info.At.IsZero() {
		read = &info
	}
	t.mon.record(&r, empty, cl.dials-dials, cl.replaced-replaced, read)
	t.unlock()
	if o, ok := host.(StepObserver); ok {
		o.ObserveStep(r)
	}
	t.mu.Lock()
	t.stepping = false
	if t.idleAfterStep {
		t.idleAfterStep = false
		t.closeClientsLocked()
	}
	t.unlock()
	return r, err
}

// pace decides the wait after a step. A step that delivered a message
// grants one immediate lap: every step up to and including that binding's
// next visit follows at once (a busy binding is served as fast as its
// round trips allow, and every other binding still gets its turn in
// between). Any other step, once no lap is left, is followed by one poll
// interval: an idle owner makes one visit per poll interval, whatever the
// number of bindings.
func (t *Triggers) pace(b *bindingState, r *StepReport) {
	switch {
	case r.Result == ResultDelivered:
		t.hot = b.revisit - 1
	case t.hot > 0:
		t.hot--
	default:
		r.Wait = t.poll
	}
}

// sweep drops connections idle past MaxIdleAge, whatever tenant the step
// visits.
func (t *Triggers) sweep(now time.Time) {
	for i := range t.tenants {
		t.tenants[i].client.sweep(t.pools, &t.tenants[i], now)
	}
}

// credential checks the tenant credential's own expiry, then the host's
// word on it. It is false when either says no, and when Close closed the
// installation during the host's call (then v.err is set).
func (v *visit) credential() bool {
	if v.ts.cred.current().CheckCurrent(v.t.now()) != nil {
		return false
	}
	v.t.unlock()
	err := v.host.CredentialCurrent(v.ts.cfg.ID)
	return v.back() && err == nil
}

// back takes the installation's lock again after a call into host code
// (which runs without it, see host.go) and reports whether the
// installation is still open. A Close made during the call closed every
// connection and returned the visit's pool request: the visit ends at
// once with ErrClosed and touches neither again.
func (v *visit) back() bool {
	v.t.mu.Lock()
	if v.t.closed {
		v.err = ErrClosed
		return false
	}
	return true
}

// visitBinding runs one step's flow on binding b, filling in r. It
// returns the report, what proved an empty result, the consumer state it
// read (At zero when it read none) and ctx's error when the owner stopped.
func (t *Triggers) visitBinding(ctx context.Context, host Host, b *bindingState, r StepReport) (StepReport, emptyBy, ConsumerState, error) {
	v := visit{t: t, ctx: ctx, host: host, b: b, ts: &t.tenants[b.tenant], r: r,
		timeout: b.cfg.OperationTimeout(), ref: t.ref(b)}
	v.run()
	t.settleBackoff(b, v.unanswered && v.err == nil, !v.info.At.IsZero(), v.r.At, t.now())
	return v.r, v.empty, v.info, v.err
}

// emptyBy is what proved a step's result empty (ResultEmpty); zero for a
// step whose result is not empty.
type emptyBy uint8

const (
	// emptyByInfo: consumer info showed nothing pending and nothing
	// awaiting an acknowledgement.
	emptyByInfo emptyBy = iota + 1
	// emptyByPull: the pull found nothing.
	emptyByPull
	// emptyByAwaiting: consumer info showed the binding's one delivery
	// still pending, before the broker can redeliver it.
	emptyByAwaiting
)

// run makes the phases in order, each after the last let it, and releases
// what they held.
func (v *visit) run() {
	defer v.end()
	if !v.b.backoff.due(v.r.At) {
		skip(&v.r, ClassBindingBackoff)
		return
	}
	if !v.checks() {
		return
	}
	if !v.reserve() {
		return
	}
	if !v.connect() {
		return
	}
	if !v.inspect() {
		return
	}
	if !v.checks() {
		return
	}
	if !v.pull() {
		return
	}
	if !v.activate() {
		return
	}
	v.ack()
}

// visit is one step's flow on one binding, one phase a method: the checks
// before any network, the reservations, the connection, consumer info, the
// checks again, the pull, the activation and the acknowledgement. Each
// phase fills the report and returns whether the next one runs; a phase
// that finds the owner stopped sets err. end releases, in reverse order,
// what the phases reserved. It lives for one step, on the stack, and holds
// the step's report by value (a pointer held beside the host would make
// the report escape to the heap).
type visit struct {
	t       *Triggers
	ctx     context.Context
	host    Host
	b       *bindingState
	ts      *tenantState
	r       StepReport
	timeout time.Duration
	ref     BindingRef

	// Held by the phases, released by end.
	in Inbound
	// by is the end of the phase before the pull.
	by time.Time

	l     link
	info  ConsumerState
	sent  time.Time
	got   pulled
	cmd   jspull.Command
	empty emptyBy
	err   error
	// ops counts the protocol operations the visit's ingress request
	// made (operation).
	ops int
	// unanswered: an exchange met its deadline or found the consumer
	// without a leader (see bindbackoff.go). The broker answered for the
	// consumer when info is set.
	unanswered bool
}

// maxRequestOperations is what one ingress request may do on the
// connection: consumer info, one pull and one acknowledgement.
const maxRequestOperations = 3

// operation admits one more protocol operation of the visit's ingress
// request, or refuses a fourth: the visit then fails (ClassInternal,
// counted as every failure is) without writing it. The phases make at
// most three; this holds the profile's promise whatever a later phase
// does.
func (v *visit) operation() bool {
	if v.ops >= maxRequestOperations {
		fail(&v.r, ClassInternal)
		return false
	}
	v.ops++
	return true
}

// end releases what the phases held: the pools' request and the host's
// reservation (Release exactly once per Inbound, even after a Close). The
// connection's cancellation registration is on the owner's context, which
// outlives the step (Step detaches it, Run closes the connection).
func (v *visit) end() {
	v.t.releaseRequestLocked()
	if v.in != nil {
		v.t.unlock()
		v.in.Release()
		v.t.mu.Lock()
	}
}

// stopped reports whether the owner stopped, recording its error.
func (v *visit) stopped() bool {
	v.err = v.ctx.Err()
	return v.err != nil
}

// failed records err, an error of a connection or an exchange: the
// owner's stop, or a failed visit of err's class.
func (v *visit) failed(err error) bool {
	if !v.stopped() {
		fail(&v.r, classify(err))
	}
	return false
}

// checks are made before any network, and again before the pull: the
// publication's eligibility and the tenant credential.
func (v *visit) checks() bool {
	v.t.unlock()
	err := v.host.PublicationEligible(v.ref)
	switch {
	case !v.back():
	case err != nil:
		skip(&v.r, ClassIneligible)
	case !v.credential():
		if v.err == nil {
			skip(&v.r, ClassCredential)
		}
	default:
		return true
	}
	return false
}

// reserve has the host pin the route and reserve admission and input,
// then reserves the ingress request in the pools.
func (v *visit) reserve() bool {
	req := InboundRequest{
		Binding:       v.ref,
		MaxInputBytes: v.b.cfg.MaxPayloadBytes,
		Deadline:      v.r.At.Add(stepBound(v.timeout)),
	}
	v.t.unlock()
	in, err := v.host.ReserveInbound(v.ctx, req)
	if err != nil && in != nil {
		// A reservation returned with an error is refused, and
		// released now: Release is called exactly once per Inbound.
		in.Release()
		in = nil
	}
	var gen uint64
	if in != nil {
		gen = in.RouteGeneration()
	}
	// end releases it, whatever follows.
	v.in = in
	switch {
	case !v.back():
		return false
	case in != nil:
	case v.stopped():
		return false
	case errors.Is(err, ErrUnavailable):
		skip(&v.r, ClassUnavailable)
		return false
	default:
		skip(&v.r, ClassHost)
		return false
	}
	v.r.RouteGeneration = gen
	if err := v.t.pools.reserveRequest(v.ts.usage, v.ts.provider, v.b.charge); err != nil {
		refused(&v.r, err)
		return false
	}
	v.t.request = v.b
	return true
}

// connect takes the tenant's client and its connection. The phase before
// the pull has T from the host's reservation, so that a slow reservation
// does not eat into the probe, dial and consumer info.
func (v *visit) connect() bool {
	v.by = v.t.now().Add(v.timeout)
	l, err := v.ts.client.acquire(v.ctx, v.by, v.t.pools, v.ts, v.t.now, v.t.rand, v.t.dial)
	if err != nil {
		switch {
		case v.stopped():
		case errors.Is(err, ErrDialBackoff):
			skip(&v.r, ClassDialBackoff)
		case errors.Is(err, ErrPoolExhausted):
			refused(&v.r, err)
		default:
			fail(&v.r, classify(err))
			var de *dialError
			if errors.As(err, &de) {
				v.r.Dial = dialFailure(de.err)
			}
		}
		return false
	}
	v.l = l
	return true
}

// inspect asks for consumer info: an empty or paused consumer ends the
// visit after this one round trip, and so does a consumer whose one
// delivery awaits a redelivery the broker cannot make yet.
//
// The profile's max_ack_pending is 1, so a consumer with a delivery
// awaiting its acknowledgement delivers nothing new, and a pull can only
// return that delivery again once the broker made it redeliverable: at
// the end of its ack wait, counted from the delivery, or of the delay of
// a NAK, counted from when the broker read the NAK (nats-server 2.14.6
// getNextMsg and processNak). Both start no earlier than the runtime sent
// the pull or the NAK, so before b.redeliverAfter a pull would be held
// for its whole expiry (100 ms of the owner's one loop, every visit,
// while a failed event waits out its NAK delay) and return nothing. A
// delivery the runtime does not know of (one it lost to a failed pull, or
// one from before this installation) is pulled for as before.
//
// Only the consumer leader's view proves a consumer empty: a replica of a
// cluster node that has not started the consumer's group yet (restarted,
// recovering) answers at once with zero counters, racing the leader
// (jspull.Pending.Leader). Such a reply is pulled past: the pull reaches
// the leader, and the visit ends as the pull does.
//
// A reply that decoded, whatever the check said of it, is the visit's
// ConsumerState.
func (v *visit) inspect() bool {
	if !v.operation() {
		return false
	}
	pend, err := v.l.inspect(v.ctx, v.by, v.b)
	now := v.t.now()
	v.ts.client.settle(v.t.pools, v.ts, err, now)
	v.unanswered = unanswered(err)
	if err == nil || errors.Is(err, jspull.ErrConsumerPaused) || errors.Is(err, jspull.ErrProfileMismatch) {
		v.info = ConsumerState{At: now, Pending: pend.NumPending, AckPending: pend.NumAckPending,
			Redelivered: pend.NumRedelivered, Waiting: pend.NumWaiting, Leader: pend.Leader}
	}
	switch {
	case err == nil && pend.Empty() && pend.Leader:
		v.r.Result = ResultEmpty
		v.empty = emptyByInfo
		return false
	case err == nil && pend.NumAckPending > 0 && now.Before(v.b.redeliverAfter):
		v.r.Result = ResultEmpty
		v.empty = emptyByAwaiting
		return false
	case err == nil:
		return true
	case v.stopped():
	case errors.Is(err, jspull.ErrConsumerPaused):
		skip(&v.r, ClassPaused)
	default:
		fail(&v.r, classify(err))
	}
	return false
}

// pull pulls at most one message, under its own bound.
func (v *visit) pull() bool {
	v.sent = v.t.now()
	if !v.operation() {
		return false
	}
	got, err := v.l.next(v.ctx, v.b)
	v.ts.client.settle(v.t.pools, v.ts, err, v.t.now())
	if err != nil {
		v.unanswered = unanswered(err)
		return v.failed(err)
	}
	v.unanswered = unansweredKind(got.kind)
	switch got.kind.Class() {
	case jspull.ClassMessage:
	case jspull.ClassEmpty:
		v.r.Result = ResultEmpty
		v.empty = emptyByPull
		return false
	default:
		fail(&v.r, classOfKind(got.kind))
		return false
	}
	v.got = got
	// Pending from now until its ack wait has passed, unless the
	// acknowledgement says otherwise.
	v.b.redeliverAfter = v.sent.Add(v.b.cfg.AckWait())
	v.r.Result = ResultDelivered
	v.r.StreamSeq = got.id.StreamSeq
	v.r.Delivered = got.id.Delivered
	v.r.Action = pull.ActionNone
	return !v.stopped()
}

// activate runs the function with the original admission, route
// generation and deadline, and decides the action. A delivery counted
// past the binding's max_deliver (the operator lowered it, and the broker
// delivered it once more) is terminated as exhausted without running the
// function.
func (v *visit) activate() bool {
	b, id := v.b, v.got.id
	if id.Delivered > uint64(b.cfg.MaxDeliver) {
		v.r.Action = pull.ActionExhausted
		v.cmd, _ = commandFor(pull.ActionExhausted, 0, 0)
		return true
	}
	deadline := v.sent.Add(v.timeout)
	a := Activation{
		Principal:       Principal{Subject: b.cfg.Principal, Tenant: b.cfg.Tenant, Binding: b.cfg.ID},
		Binding:         v.ref,
		RouteGeneration: v.r.RouteGeneration,
		Deadline:        minTime(deadline.Add(-ackSlice(v.timeout)), v.t.now().Add(b.cfg.RootBudget())),
		Budget:          b.cfg.RootBudget(),
		StreamSeq:       id.StreamSeq,
		Delivered:       id.Delivered,
		MaxDeliver:      b.cfg.MaxDeliver,
		Payload:         v.got.payload[:len(v.got.payload):len(v.got.payload)],
		Link:            traceLinkOf(v.got.header),
	}
	if err := v.t.newIDs(&a); err != nil {
		v.r.Error = ClassInternal
		return false
	}
	actx, acancel := context.WithDeadline(v.ctx, a.Deadline)
	v.t.unlock()
	res := v.in.Activate(actx, a)
	acancel()
	v.r.Outcome = res.Outcome
	v.r.Cause = res.Err
	if !v.back() || v.stopped() {
		return false
	}
	v.r.Action = ActionFor(res.Outcome, id.Delivered, b.cfg.MaxDeliver)
	var send bool
	v.cmd, send = commandFor(v.r.Action, res.Outcome, b.cfg.NakDelay())
	return send
}

// ack checks the credential again, then sends the acknowledgement with
// the rest of the delivery's deadline and at least its slice, and records
// what became of its receipt.
func (v *visit) ack() bool {
	if !v.credential() {
		if v.err == nil {
			v.r.Error = ClassCredential
		}
		return false
	}
	if !v.operation() {
		return false
	}
	now := v.t.now()
	ackBy, slice := v.sent.Add(v.timeout), ackSlice(v.timeout)
	if ackBy.Sub(now) < slice {
		ackBy = now.Add(slice)
	}
	ackCtx, ackCancel := context.WithDeadline(v.ctx, ackBy)
	rec, err := v.l.ack(ackCtx, v.b, v.cmd)
	v.l.detach()
	ackCancel()
	v.ts.client.settle(v.t.pools, v.ts, err, v.t.now())
	v.unanswered = unanswered(err)
	v.redelivery(now, err == nil, rec.Outcome == pull.AckUncertain)
	switch {
	case err == nil && rec.Outcome == pull.AckVerifiedLate:
		v.r.Ack = pull.AckVerifiedLate
	case err == nil:
		v.r.Ack = pull.AckVerified
	case rec.Outcome == pull.AckUncertain:
		v.r.Ack = pull.AckUncertain
		v.r.Error = ClassAckUncertain
	case v.stopped():
	default:
		v.r.Error = classify(err)
	}
	return true
}

// redelivery updates the earliest redelivery of the binding's delivery
// after its acknowledgement, sent at sent: a verified ACK or TERM ended it,
// a NAK the broker may have read makes it redeliverable after its delay
// (or the ack wait, if that ends first and the NAK was not verified), and
// anything else leaves it to the ack wait.
func (v *visit) redelivery(sent time.Time, verified, uncertain bool) {
	switch {
	case v.r.Action == pull.ActionNak && verified:
		v.b.redeliverAfter = sent.Add(v.cmd.Delay)
	case v.r.Action == pull.ActionNak && uncertain:
		v.b.redeliverAfter = minTime(v.b.redeliverAfter, sent.Add(v.cmd.Delay))
	case verified:
		v.b.redeliverAfter = time.Time{}
	}
}

// skip records a visit stopped before the pull.
func skip(r *StepReport, c ErrorClass) {
	r.Result = ResultSkipped
	r.Error = c
}

// refused records a visit a pool reservation stopped.
func refused(r *StepReport, err error) {
	var re *ReservationError
	if errors.As(err, &re) {
		r.Resource = re.Resource
	}
	skip(r, ClassPoolExhausted)
}

// fail records a visit whose broker exchange failed.
func fail(r *StepReport, c ErrorClass) {
	r.Result = ResultFailed
	r.Error = c
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// newIDs fills a fresh random activation ID and trace.
func (t *Triggers) newIDs(a *Activation) error {
	var buf [2 * iDLen]byte
	if _, err := io.ReadFull(t.rand, buf[:]); err != nil {
		return err
	}
	copy(a.ActivationID[:], buf[:iDLen])
	copy(a.Trace[:], buf[iDLen:])
	return nil
}

// classify maps an error of a link or a dial to its class.
func classify(err error) ErrorClass {
	var de *dialError
	var se *conn.ServerError
	switch {
	case errors.As(err, &de):
		return ClassDial
	case errors.Is(err, jspull.ErrProfileMismatch):
		return ClassProfile
	case errors.Is(err, jspull.ErrConsumerPaused):
		return ClassPaused
	case errors.Is(err, jspull.ErrUnsupportedAck):
		return ClassUnsupportedAck
	case errors.Is(err, jspull.ErrStreamNotFound),
		errors.Is(err, jspull.ErrConsumerNotFound),
		errors.Is(err, jspull.ErrNoResponders):
		return ClassConsumerMissing
	case errors.Is(err, jspull.ErrAPI):
		return ClassAPI
	case errors.As(err, &se) && se.Kind == conn.KindPermission:
		return ClassBrokerPermission
	case errors.Is(err, jspull.ErrCloseConnection),
		errors.Is(err, jspull.ErrInfoTooLarge),
		errors.Is(err, jspull.ErrMalformedInfo),
		errors.Is(err, conn.ErrForeignFrame),
		errors.Is(err, conn.ErrUnexpectedFrame),
		errors.Is(err, conn.ErrControlFlood),
		// The broker's bytes refused by the connection's parser (a line,
		// header block or payload over its cap, an unknown operation, a
		// malformed frame), classified without knowing the parser.
		errors.Is(err, conn.ErrFraming):
		return ClassProtocol
	case errors.Is(err, conn.ErrClosed),
		errors.Is(err, conn.ErrServerClosed),
		errors.Is(err, context.DeadlineExceeded):
		return ClassConnection
	}
	return ClassInternal
}

// classOfKind maps a pull reply that is neither a message nor empty to its
// class.
func classOfKind(k jspull.Kind) ErrorClass {
	switch k.Class() {
	case jspull.ClassBusy:
		return ClassBusy
	case jspull.ClassOversize:
		return ClassOversize
	case jspull.ClassMisconfigured:
		return ClassMisconfigured
	case jspull.ClassGone:
		return ClassConsumerMissing
	case jspull.ClassUnavailable:
		return ClassBrokerUnavailable
	}
	return ClassInternal
}
