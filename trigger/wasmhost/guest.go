package wasmhost

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// Report is what one activation of a guest did. It holds no argument
// bytes; Result and Output are the guest's own and valid only during
// Config.OnActivation.
type Report struct {
	Service, Revision, Contract, Function string
	// RouteGeneration is the generation pinned when the input was
	// accepted.
	RouteGeneration uint64
	// Binding, StreamSeq and Delivered identify the delivery.
	Binding   trigger.BindingRef
	StreamSeq uint64
	Delivered uint64
	// Instance is the sequence number of the fresh instance the
	// activation ran in, from 1, unique in the Runtime; 0 when none was
	// made (the context was done before).
	Instance uint64
	// Err is nil for a success, a *refhost.ApplicationError for a
	// declared failure, a *GuestError for a platform failure (its Cause
	// CauseInterrupted when the context was done).
	Err error
	// Result is the lifted result (a refhost Go value), nil for none or
	// on error.
	Result any
	// Instantiate is the time taken to make the instance (and run
	// _initialize); Call the time from lowering through lifting.
	Instantiate time.Duration
	Call        time.Duration
	// MemoryPages is the instance's memory size when it ended.
	MemoryPages uint32
	// Output holds the first 4 KiB of stdout and stderr when
	// granted; OutputDropped counts the bytes beyond (or all of them,
	// when not granted).
	Output        []byte
	OutputDropped int64
}

// funcOf returns the refhost.Func of one declared export: each call makes
// a fresh instance of the compiled module, runs the export once, lifts its
// result and closes the instance.
func (c *compiled) funcOf(d *exportDecl) refhost.Func {
	return func(ctx context.Context, call refhost.Call) error {
		a := activation{c: c, d: d}
		err := a.run(ctx, call.Args)
		c.r.finish(&a, err)
		if f := c.r.cfg.OnActivation; f != nil {
			rep := Report{
				Service: c.service, Revision: c.revision, Contract: c.contract, Function: d.name,
				RouteGeneration: call.RouteGeneration,
				Binding:         call.Binding, StreamSeq: call.StreamSeq, Delivered: call.Delivered,
				Instance: a.instance, Err: err, Result: a.result,
				Instantiate: a.instantiate, Call: a.call,
				MemoryPages: a.pages, Output: a.out.buf, OutputDropped: a.out.dropped + a.out.discard.n,
			}
			f(&rep)
		}
		return err
	}
}

// activation is one run of an export in a fresh instance.
type activation struct {
	c        *compiled
	d        *exportDecl
	alloc    ceiling
	out      sink
	mod      api.Module
	mem      api.Memory
	realloc  api.Function
	instance uint64
	result   any
	pages    uint32 // the memory's size when the instance closed

	instantiate, call time.Duration
}

// run instantiates, lowers, calls, lifts and closes. Its error is what the
// reference host classifies: nil, a declared *refhost.ApplicationError, or
// a *GuestError.
func (a *activation) run(ctx context.Context, args []any) error {
	c := a.c
	if err := ctx.Err(); err != nil {
		return &GuestError{Cause: CauseInterrupted, Err: err}
	}
	if !c.r.opening() {
		return &GuestError{Cause: CauseInstantiate, Err: ErrClosed}
	}
	defer c.r.closing()
	a.alloc.limit = uint64(c.pages) * PageSize
	a.alloc.pool = c.memory
	start := time.Now()
	err := a.instantiateModule(ctx)
	if a.mod != nil {
		defer a.closeInstance(ctx)
	}
	if err != nil {
		return err
	}
	a.instantiate = time.Since(start)
	start = time.Now()
	err = a.invoke(ctx, args)
	a.call = time.Since(start)
	if cerr := ctx.Err(); cerr != nil {
		// Whatever the guest returned, it returned after its deadline or
		// the owner's stop: a host call cut short by the context (a
		// sleep) can let it finish before the engine's next check.
		return &GuestError{Cause: CauseInterrupted, Err: cerr}
	}
	return err
}

// closeInstance closes the instance once every call into it has returned
// on this goroutine, then gives its memory buffer to the next instance.
func (a *activation) closeInstance(ctx context.Context) {
	a.pages = a.alloc.pages()
	_ = a.mod.Close(context.WithoutCancel(ctx))
	a.alloc.recycle()
}

// instantiateModule makes the fresh instance under the ceiling's
// allocator and runs _initialize when the module is a reactor.
func (a *activation) instantiateModule(ctx context.Context) error {
	c := a.c
	cfg := c.config
	if c.grants&GrantWASI != 0 {
		var w io.Writer = &a.out.discard
		if c.grants&GrantOutput != 0 {
			w = &a.out
		}
		cfg = cfg.WithStdout(w).WithStderr(w).
			WithSysWalltime().WithSysNanotime().
			WithNanosleep(sleeper(ctx)).
			WithRandSource(rand.Reader)
	}
	ictx := experimental.WithMemoryAllocator(ctx, &a.alloc)
	mod, err := c.r.rt.InstantiateModule(ictx, c.mod, cfg)
	if err != nil {
		return a.fail(ctx, CauseInstantiate, err, nil)
	}
	a.instance = c.r.instanceNumber()
	a.mod = mod
	a.mem = mod.Memory()
	a.realloc = mod.ExportedFunction(exportRealloc)
	if c.init {
		if _, err := mod.ExportedFunction(exportInit).Call(ctx); err != nil {
			return a.fail(ctx, CauseInstantiate, err, nil)
		}
	}
	return nil
}

// invoke lowers args, calls the export and lifts its result.
func (a *activation) invoke(ctx context.Context, args []any) error {
	d := a.d
	g := guestMemory{a: a, ctx: ctx}
	flat, err := lowerArgs(&g, d.params, args)
	if err != nil {
		if g.err != nil { // cabi_realloc itself failed: classify the engine's error
			return a.fail(ctx, CauseLower, g.err, err)
		}
		return &GuestError{Cause: CauseLower, Err: err}
	}
	fn := a.mod.ExportedFunction(d.name)
	results, err := fn.Call(ctx, flat...)
	if err != nil {
		return a.fail(ctx, CauseTrap, err, nil)
	}
	if d.result == nil {
		return nil
	}
	v, err := liftResult(g.memory(), d.result, results)
	if err != nil {
		return &GuestError{Cause: CauseLift, Err: err}
	}
	a.result = v
	if rv, ok := v.(refhost.ResultValue); ok && d.result.Kind == refhost.KindResult && rv.Err {
		return &refhost.ApplicationError{Code: failureCode(d.result, rv.Value)}
	}
	return nil
}

// failureCode is the declared failure code of err value v of result type
// t (see failureCodes).
func failureCode(t *refhost.Type, v any) string {
	switch t.Err.Kind {
	case refhost.KindEnum:
		if s, ok := v.(string); ok {
			return s
		}
	case refhost.KindVariant:
		if vv, ok := v.(refhost.VariantValue); ok {
			return vv.Case
		}
	}
	return codeErr
}

// fail classifies an engine's error: a done context first (the guest was
// interrupted), then a refused growth, then proc_exit, then cause, which
// carries own (the project's own error, such as the *LowerError of a
// failed cabi_realloc) when set. The engine's message is not kept.
func (a *activation) fail(ctx context.Context, cause Cause, err, own error) error {
	if ctx.Err() != nil {
		return &GuestError{Cause: CauseInterrupted, Err: ctx.Err()}
	}
	if a.alloc.refused() {
		return &GuestError{Cause: CauseMemory}
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return &GuestError{Cause: CauseExit, ExitCode: exit.ExitCode()}
	}
	return &GuestError{Cause: cause, Err: own}
}

// guestMemory is the activation as lowering sees it.
type guestMemory struct {
	a   *activation
	ctx context.Context
	err error // cabi_realloc's own failure
}

// memory returns the instance's memory as it is now.
func (g *guestMemory) memory() []byte {
	m := g.a.mem
	if m == nil {
		return nil
	}
	b, _ := m.Read(0, m.Size())
	return b
}

// realloc calls cabi_realloc(0, 0, align, size).
func (g *guestMemory) realloc(align, size uint32) (uint32, error) {
	res, err := g.a.realloc.Call(g.ctx, 0, 0, uint64(align), uint64(size))
	if err != nil {
		g.err = err
		return 0, err
	}
	return uint32(res[0]), nil
}

// sleeper returns a guest's nanosleep: it sleeps at most until ctx is
// done, so a guest asleep cannot outlast its deadline.
func sleeper(ctx context.Context) sys.Nanosleep {
	return func(ns int64) {
		if ns <= 0 {
			return
		}
		t := time.NewTimer(time.Duration(ns))
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
}

// sink keeps the first 4 KiB written to it and counts the rest.
// Writes come from the guest's goroutine only.
type sink struct {
	buf     []byte
	dropped int64
	discard counter
}

// Write implements io.Writer; it never fails.
func (s *sink) Write(p []byte) (int, error) {
	room := maxOutputBytes - len(s.buf)
	if room > len(p) {
		room = len(p)
	}
	if room > 0 {
		s.buf = append(s.buf, p[:room]...)
	}
	s.dropped += int64(len(p) - room)
	return len(p), nil
}

// counter discards and counts, for output not granted.
type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// instanceNumber counts an instance made and returns its number.
func (r *Runtime) instanceNumber() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.Instances++
	return r.stats.Instances
}

// finish counts an activation's platform failure.
func (r *Runtime) finish(a *activation, err error) {
	var ge *GuestError
	if !errors.As(err, &ge) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if ge.Cause >= 1 && ge.Cause < causeEnd {
		r.stats.failures[ge.Cause-1]++
	}
}
