package trigger

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/pull"
)

// The deadline split of one delivery. T is the binding's operation
// timeout.
//
//   - Before the pull (client probe or dial, consumer info): at most T from
//     the host's reservation (Host.ReserveInbound returning).
//   - The pull: its own bound (pullBound: T, and never less than
//     pull.RequestExpires plus pull.DefaultNextMargin nor more than
//     RequestExpires plus pull.MaxNextMargin), never cut short by the
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
//     T/AckSliceDivisor within MinAckSlice-MaxAckSlice) and within the
//     binding's root budget from its start, whichever is first.
//   - The acknowledgement gets the rest of D, and never less than its slice
//     (an activation that overran its deadline still leaves the ack its
//     slice, which the ack wait's one-second margin covers).
const (
	AckSliceDivisor = 4
	MinAckSlice     = 25 * time.Millisecond
	MaxAckSlice     = time.Second
)

// ackSlice returns the part of the operation timeout kept for the
// acknowledgement.
func ackSlice(timeout time.Duration) time.Duration {
	return min(max(timeout/AckSliceDivisor, MinAckSlice), MaxAckSlice)
}

// pullMargin returns the margin beyond the pull's expiry for an operation
// timeout: the pull's bound is the timeout, within the pull package's
// margins.
func pullMargin(timeout time.Duration) time.Duration {
	return min(max(timeout-pull.RequestExpires, pull.DefaultNextMargin), pull.MaxNextMargin)
}

// pullBound is the longest the pull of a step waits for the broker's
// answer (see the deadline split above).
func pullBound(timeout time.Duration) time.Duration {
	return pull.RequestExpires + pullMargin(timeout)
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
// when Close stopped it,
// ErrSuperseded, ErrClosed, ErrRunning while Run runs, ErrNoHost. Broker
// and host failures are not errors of Step: they are in the report and the
// monitor.
func (t *Triggers) Step(ctx context.Context, host Host) (StepReport, error) {
	if host == nil {
		return StepReport{}, ErrNoHost
	}
	if t.running.Load() {
		return StepReport{}, ErrRunning
	}
	ctx, unstop := t.withStop(ctx)
	defer unstop()
	r, err := t.step(ctx, host)
	// Before unstop ends ctx: the connections kept hold no registration on
	// it (see conn.Conn.Detach).
	t.mu.Lock()
	for i := range t.tenants {
		t.tenants[i].client.detach()
	}
	t.mu.Unlock()
	return r, stopped(ctx, err)
}

func (t *Triggers) step(ctx context.Context, host Host) (StepReport, error) {
	if err := ctx.Err(); err != nil {
		return StepReport{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return StepReport{}, ErrClosed
	}
	if !t.pools.current(t.entry, t.epoch) {
		return StepReport{}, ErrSuperseded
	}
	now := t.now()
	t.sweep(now)
	b := t.nextBinding()
	t.steps++
	r := StepReport{Step: t.steps, Epoch: t.epoch, Binding: b.index, At: now, Ack: AckNone}
	cl := &t.tenants[b.tenant].client
	dials, replaced := cl.dials, cl.replaced
	emptyPull, err := t.visit(ctx, host, b, &r)
	cl.retire(t.pools, &t.tenants[b.tenant], t.now())
	if err != nil {
		r.Result = ResultShutdown
		r.Error = ClassShutdown
		if r.Delivered > 0 {
			r.Action = ActionNone
			r.Ack = AckNone
		}
	}
	t.pace(b, &r)
	t.logStep(b, &r)
	t.mon.record(&r, emptyPull, cl.dials-dials, cl.replaced-replaced)
	if o, ok := host.(StepObserver); ok {
		o.ObserveStep(r)
	}
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

// credentialCurrent checks the tenant credential's own expiry and the
// host's word on it.
func (t *Triggers) credentialCurrent(host Host, ts *tenantState) bool {
	return ts.cred.Secret.CheckCurrent(t.now()) == nil && host.CredentialCurrent(ts.cfg.ID) == nil
}

// visit runs one step's flow on binding b, filling r. It returns whether an
// empty result came from the pull (rather than consumer info), and ctx's
// error when the owner stopped.
func (t *Triggers) visit(ctx context.Context, host Host, b *bindingState, r *StepReport) (bool, error) {
	ts := &t.tenants[b.tenant]
	timeout := b.cfg.OperationTimeout()
	start := r.At
	ref := t.ref(b)

	// Checks before any network.
	if host.PublicationEligible(ref) != nil {
		return false, skip(r, ClassIneligible)
	}
	if !t.credentialCurrent(host, ts) {
		return false, skip(r, ClassCredential)
	}

	// The host pins the route and reserves admission and input.
	in, err := host.ReserveInbound(ctx, InboundRequest{
		Binding:       ref,
		MaxInputBytes: b.cfg.MaxPayloadBytes,
		Deadline:      start.Add(stepBound(timeout)),
	})
	if err != nil || in == nil {
		if in != nil {
			// A reservation returned with an error is refused, and
			// released now: Release is called exactly once per Inbound.
			in.Release()
		}
		switch {
		case ctx.Err() != nil:
			return false, ctx.Err()
		case errors.Is(err, ErrUnavailable):
			return false, skip(r, ClassUnavailable)
		}
		return false, skip(r, ClassHost)
	}
	defer in.Release()
	r.RouteGeneration = in.RouteGeneration()

	// The pools: the ingress request, then the client and its connection.
	if err := t.pools.reserveRequest(ts.usage, ts.provider, b.charge); err != nil {
		return false, refused(r, err)
	}
	defer t.pools.releaseRequest(ts.usage, ts.provider, b.charge)

	// The phase before the pull has T from the host's reservation, so
	// that a slow reservation does not eat into the probe, dial and
	// consumer info.
	pre, cancel := context.WithDeadline(ctx, t.now().Add(timeout))
	defer func() {
		// The connection forgets pre before it ends (see conn.Conn.Detach).
		ts.client.detach()
		cancel()
	}()
	l, err := ts.client.acquire(ctx, pre, t.pools, ts, t.now, t.rand, t.dial)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return false, ctx.Err()
		case errors.Is(err, ErrDialBackoff):
			return false, skip(r, ClassDialBackoff)
		case errors.Is(err, ErrPoolExhausted):
			return false, refused(r, err)
		}
		return false, fail(r, classify(err))
	}

	// Consumer info: an empty or paused consumer ends the visit after
	// this one round trip.
	pend, err := l.inspect(pre, b)
	ts.client.settle(t.pools, ts, err, t.now())
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return false, ctx.Err()
		case errors.Is(err, pull.ErrConsumerPaused):
			return false, skip(r, ClassPaused)
		}
		return false, fail(r, classify(err))
	}
	if pend.Empty() {
		r.Result = ResultEmpty
		return false, nil
	}

	// Checks again before the pull.
	if host.PublicationEligible(ref) != nil {
		return false, skip(r, ClassIneligible)
	}
	if !t.credentialCurrent(host, ts) {
		return false, skip(r, ClassCredential)
	}

	// The pull, under its own bound.
	sent := t.now()
	got, err := l.next(ctx, b)
	ts.client.settle(t.pools, ts, err, t.now())
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return false, fail(r, classify(err))
	}
	switch got.kind.Class() {
	case pull.ClassMessage:
	case pull.ClassEmpty:
		r.Result = ResultEmpty
		return true, nil
	default:
		return false, fail(r, classOfKind(got.kind))
	}
	r.Result = ResultDelivered
	r.StreamSeq = got.id.StreamSeq
	r.Delivered = got.id.Delivered
	r.Action = ActionNone
	if err := ctx.Err(); err != nil {
		return false, err
	}

	// The activation, with the original admission, route generation and
	// deadline.
	deadline := sent.Add(timeout)
	slice := ackSlice(timeout)
	now := t.now()
	a := Activation{
		Principal:       Principal{Subject: b.cfg.Principal, Tenant: b.cfg.Tenant, Binding: b.cfg.ID},
		Binding:         ref,
		RouteGeneration: r.RouteGeneration,
		Deadline:        minTime(deadline.Add(-slice), now.Add(b.cfg.RootBudget())),
		Budget:          b.cfg.RootBudget(),
		StreamSeq:       got.id.StreamSeq,
		Delivered:       got.id.Delivered,
		MaxDeliver:      b.cfg.MaxDeliver,
		Payload:         got.payload[:len(got.payload):len(got.payload)],
	}
	if err := t.newIDs(&a); err != nil {
		r.Error = ClassInternal
		return false, nil
	}
	actx, acancel := context.WithDeadline(ctx, a.Deadline)
	res := in.Activate(actx, a)
	acancel()
	r.Outcome = res.Outcome
	if err := ctx.Err(); err != nil {
		return false, err
	}
	act := ActionFor(res.Outcome, got.id.Delivered, b.cfg.MaxDeliver)
	r.Action = act
	cmd, send := commandFor(act, res.Outcome, b.cfg.NakDelay())
	if !send {
		return false, nil
	}

	// Credential again, then the acknowledgement with at least its slice.
	if !t.credentialCurrent(host, ts) {
		r.Error = ClassCredential
		return false, nil
	}
	ackBy := deadline
	if now := t.now(); ackBy.Sub(now) < slice {
		ackBy = now.Add(slice)
	}
	ackCtx, ackCancel := context.WithDeadline(ctx, ackBy)
	rec, err := l.ack(ackCtx, b, cmd)
	l.detach()
	ackCancel()
	ts.client.settle(t.pools, ts, err, t.now())
	switch {
	case err == nil && rec.Outcome == pull.OutcomeVerifiedLate:
		r.Ack = AckVerifiedLate
	case err == nil:
		r.Ack = AckVerified
	case rec.Outcome == pull.OutcomeUncertain:
		r.Ack = AckUncertain
		r.Error = ClassAckUncertain
	case ctx.Err() != nil:
		return false, ctx.Err()
	default:
		r.Error = classify(err)
	}
	return false, nil
}

// skip records a visit stopped before the pull; it returns nil.
func skip(r *StepReport, c ErrorClass) error {
	r.Result = ResultSkipped
	r.Error = c
	return nil
}

// refused records a visit a pool reservation stopped; it returns nil.
func refused(r *StepReport, err error) error {
	var re *ReservationError
	if errors.As(err, &re) {
		r.Resource = re.Resource
	}
	return skip(r, ClassPoolExhausted)
}

// fail records a visit whose broker exchange failed; it returns nil.
func fail(r *StepReport, c ErrorClass) error {
	r.Result = ResultFailed
	r.Error = c
	return nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// newIDs fills a fresh random activation ID and trace.
func (t *Triggers) newIDs(a *Activation) error {
	var buf [2 * IDLen]byte
	if _, err := io.ReadFull(t.rand, buf[:]); err != nil {
		return err
	}
	copy(a.ActivationID[:], buf[:IDLen])
	copy(a.Trace[:], buf[IDLen:])
	return nil
}

// classify maps an error of a link or a dial to its class.
func classify(err error) ErrorClass {
	var de *dialError
	var se *conn.ServerError
	switch {
	case errors.As(err, &de):
		return ClassDial
	case errors.Is(err, pull.ErrProfileMismatch):
		return ClassProfile
	case errors.Is(err, pull.ErrConsumerPaused):
		return ClassPaused
	case errors.Is(err, pull.ErrStreamNotFound),
		errors.Is(err, pull.ErrConsumerNotFound),
		errors.Is(err, pull.ErrNoResponders):
		return ClassConsumerMissing
	case errors.Is(err, pull.ErrAPI):
		return ClassAPI
	case errors.As(err, &se) && se.Kind == conn.KindPermission:
		return ClassBrokerPermission
	case errors.Is(err, pull.ErrCloseConnection),
		errors.Is(err, pull.ErrInfoTooLarge),
		errors.Is(err, pull.ErrMalformedInfo),
		errors.Is(err, conn.ErrForeignFrame),
		errors.Is(err, conn.ErrUnexpectedFrame),
		errors.Is(err, conn.ErrControlFlood),
		framingFailure(err):
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
func classOfKind(k pull.Kind) ErrorClass {
	switch k.Class() {
	case pull.ClassBusy:
		return ClassBusy
	case pull.ClassOversize:
		return ClassOversize
	case pull.ClassMisconfigured:
		return ClassMisconfigured
	case pull.ClassGone:
		return ClassConsumerMissing
	case pull.ClassUnavailable:
		return ClassBrokerUnavailable
	}
	return ClassInternal
}
