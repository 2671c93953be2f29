package refhost

import (
	"context"
	"errors"

	"github.com/latent-systems/latent-nats/trigger"
)

// ReserveInbound implements trigger.Host. In this order: a done ctx
// returns its error; a MaxInputBytes outside 1..trigger.MaxPayloadBytes is
// ErrInvalidRequest; an unset route is ErrNoRoute; then one admission
// slot, MaxInputBytes of input allocation and the guest memory of the
// function the route leads to (Function.Memory; none when the revision
// lacks the function) are reserved, or an *UnavailableError (matching
// trigger.ErrUnavailable) names the first that is exhausted. The
// reservation pins the route's revision and generation.
// It creates no goroutine and starts nothing; r.Deadline is not used (the
// activation brings its own).
func (h *Host) ReserveInbound(ctx context.Context, r trigger.InboundRequest) (trigger.Inbound, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.MaxInputBytes < 1 || r.MaxInputBytes > maxPayloadBytes {
		return nil, ErrInvalidRequest
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	rt := h.routes[routeKey{r.Binding.Service, r.Binding.Route}]
	if rt == nil || rt.revision == "" {
		h.counts.noRoute++
		return nil, ErrNoRoute
	}
	if h.slots >= h.cfg.MaxActivations {
		h.counts.unavailable++
		return nil, &UnavailableError{Resource: ResourceAdmission}
	}
	if r.MaxInputBytes > h.cfg.MaxInputBytes-h.input {
		h.counts.unavailable++
		return nil, &UnavailableError{Resource: ResourceInput}
	}
	mem := 0
	if f := h.functions[funcKey{r.Binding.Service, rt.revision, r.Binding.Contract, r.Binding.Function}]; f != nil {
		mem = f.memory
	}
	if mem > h.cfg.MaxMemoryBytes-h.memory {
		h.counts.unavailable++
		return nil, &UnavailableError{Resource: ResourceMemory}
	}
	h.slots++
	h.input += r.MaxInputBytes
	h.memory += mem
	h.counts.reservations++
	return &inbound{h: h, binding: r.Binding, revision: rt.revision, gen: rt.generation, input: r.MaxInputBytes, memory: mem}, nil
}

// inbound is one reservation. Its state fields are guarded by h.mu.
type inbound struct {
	h        *Host
	binding  trigger.BindingRef
	revision string
	gen      uint64
	input    int
	memory   int // guest memory reserved

	activated bool
	released  bool
	running   bool // its function's goroutine has not returned
}

// RouteGeneration implements trigger.Inbound.
func (in *inbound) RouteGeneration() uint64 { return in.gen }

// Release implements trigger.Inbound: the slot, input allocation and guest
// memory return now, or when the function returns if it is still running.
// A second call does nothing but count as misuse.
func (in *inbound) Release() {
	h := in.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if in.released {
		h.counts.misuse++
		return
	}
	in.released = true
	h.counts.releases++
	if !in.running {
		h.free(in)
	}
}

// free returns in's slot, input allocation and guest memory. h.mu is
// held.
func (h *Host) free(in *inbound) {
	h.slots--
	h.input -= in.input
	h.memory -= in.memory
}

// outcome is the result of a function's goroutine.
type outcome struct {
	err      error
	panicked bool
}

// Activate implements trigger.Inbound. The final guarded start check
// comes first (a revoked principal, then a revoked publication), then the
// function is looked up in the pinned revision, then the payload is
// checked against the input allocation and decoded. Only then does the
// function start, on its own goroutine, under the earlier of ctx, the
// activation's deadline (a zero Deadline has passed) and its budget
// (when positive); Activate returns when the
// function does or when that context ends, whichever is first. A second
// call, a call after Release, or an activation for another binding or
// generation than reserved is a platform failure and runs nothing.
//
// The Result's Err carries the typed reason where the Host has one, never
// a byte of the payload: the decoder's *ArgumentError for invalid
// arguments (argument, path of declared names, rule, offset),
// ErrNotPublished for a revoked publication, and the function's
// *ApplicationError (alone, without what the function wrapped it in) for
// a declared failure; nil otherwise.
func (in *inbound) Activate(ctx context.Context, a trigger.Activation) trigger.Result {
	o, cause := in.activate(ctx, a)
	in.h.mu.Lock()
	in.h.counts.outcomes[o]++
	in.h.mu.Unlock()
	return trigger.Result{Outcome: o, Err: cause}
}

func (in *inbound) activate(ctx context.Context, a trigger.Activation) (trigger.Outcome, error) {
	h := in.h
	h.mu.Lock()
	if in.activated || in.released || a.Binding != in.binding || a.RouteGeneration != in.gen {
		h.counts.misuse++
		h.mu.Unlock()
		return trigger.OutcomePlatformFailure, nil
	}
	in.activated = true
	h.counts.activations++
	f, o, cause := h.startCheck(in, a)
	h.mu.Unlock()
	if o != 0 {
		return o, cause
	}
	if len(a.Payload) > in.input {
		return trigger.OutcomePlatformFailure, nil
	}
	args, err := f.sig.Decode(a.Payload)
	if err != nil {
		var ae *ArgumentError
		if !errors.As(err, &ae) {
			return trigger.OutcomeInvalidArguments, nil
		}
		return trigger.OutcomeInvalidArguments, ae
	}

	fctx, cancel := context.WithDeadline(ctx, a.Deadline)
	defer cancel()
	if a.Budget > 0 {
		var cancelBudget context.CancelFunc
		fctx, cancelBudget = context.WithTimeout(fctx, a.Budget)
		defer cancelBudget()
	}
	if fctx.Err() != nil {
		return ctxOutcome(fctx), nil
	}
	call := Call{
		Args:            args,
		Principal:       a.Principal,
		ActivationID:    a.ActivationID,
		Trace:           a.Trace,
		Link:            a.Link,
		Binding:         a.Binding,
		Revision:        in.revision,
		RouteGeneration: in.gen,
		StreamSeq:       a.StreamSeq,
		Delivered:       a.Delivered,
	}
	done := make(chan outcome, 1)
	h.mu.Lock()
	in.running = true
	if h.running == 0 {
		h.idle = make(chan struct{})
	}
	h.running++
	h.mu.Unlock()
	go in.run(fctx, f.fn, call, done)

	select {
	case r := <-done:
		return f.classify(fctx, r)
	case <-fctx.Done():
	}
	select {
	case r := <-done:
		return f.classify(fctx, r)
	default:
	}
	h.mu.Lock()
	h.counts.overran++
	h.mu.Unlock()
	return ctxOutcome(fctx), nil
}

// startCheck is the final guarded start check, the function lookup and
// the declared contract's check, with the typed reason of a refusal where
// there is one. h.mu is held.
func (h *Host) startCheck(in *inbound, a trigger.Activation) (*function, trigger.Outcome, error) {
	if h.revokedPr[a.Principal.Subject] {
		return nil, trigger.OutcomeAuthenticationRejected, nil
	}
	if !h.published[keyOf(in.binding)] {
		return nil, trigger.OutcomePermissionRejected, ErrNotPublished
	}
	f := h.functions[funcKey{in.binding.Service, in.revision, in.binding.Contract, in.binding.Function}]
	if f == nil || !h.compatible(in.binding.Contract, in.binding.Function, f) {
		return nil, trigger.OutcomeIncompatibleContract, nil
	}
	if f.memory > in.memory {
		// Registered after the reservation was made, with more memory
		// than it holds: refused rather than run over the reservation.
		return nil, trigger.OutcomePlatformFailure, nil
	}
	return f, 0, nil
}

// run calls fn on its own goroutine, recovers a panic, settles the
// accounting and then reports on done (buffered: never blocks).
func (in *inbound) run(ctx context.Context, fn Func, c Call, done chan<- outcome) {
	var r outcome
	defer func() {
		if p := recover(); p != nil {
			r = outcome{panicked: true}
		}
		h := in.h
		h.mu.Lock()
		in.running = false
		h.running--
		if in.released {
			h.free(in)
		}
		if h.running == 0 {
			close(h.idle)
		}
		h.mu.Unlock()
		done <- r
	}()
	r.err = fn(ctx, c)
}

// classify maps what the function returned, with the declared failure
// as the reason of OutcomeDeclaredFailure: the *ApplicationError alone,
// never the function's own text around it.
func (f *function) classify(ctx context.Context, r outcome) (trigger.Outcome, error) {
	var ae *ApplicationError
	switch {
	case r.panicked:
		return trigger.OutcomePlatformFailure, nil
	case r.err == nil:
		return trigger.OutcomeSuccess, nil
	case errors.As(r.err, &ae) && f.declares(ae.Code):
		return trigger.OutcomeDeclaredFailure, &ApplicationError{Code: ae.Code}
	case ctx.Err() != nil:
		return ctxOutcome(ctx), nil
	}
	return trigger.OutcomePlatformFailure, nil
}

// ctxOutcome maps a done context: its deadline (or the budget) is a
// timeout, a cancellation is a cancellation.
func ctxOutcome(ctx context.Context) trigger.Outcome {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return trigger.OutcomeTimeout
	}
	return trigger.OutcomeCancelled
}
