package wasmhost

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// Config configures a Runtime. Every field is optional.
type Config struct {
	// CacheDir, when set, keeps compiled modules on disk there (wazero's
	// file compilation cache), so that a process registering a module
	// compiled before loads it instead of compiling it again. Empty: an
	// in-memory cache, shared by the Runtime's registrations.
	CacheDir string

	// OnActivation, when set, is given the report of every activation
	// after its instance was closed, on the goroutine that ran the guest
	// (the reference host's, never the trigger runtime's), holding no lock
	// of this package or the trigger runtime. It must return promptly: the
	// activation's admission slot is held until it does.
	OnActivation func(r *Report)
}

// Runtime compiles WebAssembly modules and registers their functions with
// a reference host (trigger/refhost), whose catalog, routes, publications,
// principals, admission and codec they then use: the Runtime adds only
// what runs a guest. It is safe for concurrent use. Close it after the
// trigger runtime has stopped and the host is idle.
type Runtime struct {
	host  *refhost.Host
	cfg   Config
	cache wazero.CompilationCache
	rt    wazero.Runtime

	mu     sync.Mutex
	closed bool
	idle   chan struct{} // closed when stats.Live returns to 0
	stats  Stats
}

// Stats is a snapshot of a Runtime's totals.
type Stats struct {
	// Modules counts registered modules; Compile is the time their
	// compilations took in all (a module found in the cache takes little).
	Modules int
	Compile time.Duration
	// Instances counts instances made (one per activation that reached
	// instantiation); Live counts activations between their start and
	// their instance's close: 0 when no guest runs.
	Instances uint64
	Live      int
	// Failures counts activations that failed on the platform's side, by
	// Cause; read with Failure.
	failures [causeEnd - 1]uint64
}

// Failure returns how many activations failed with c.
func (s Stats) Failure(c Cause) uint64 {
	if c < 1 || c >= causeEnd {
		return 0
	}
	return s.failures[c-1]
}

// New returns a Runtime whose functions register with host. It compiles
// nothing until Register.
func New(ctx context.Context, host *refhost.Host, cfg Config) (*Runtime, error) {
	if host == nil {
		return nil, fmt.Errorf("%w: no host", ErrInvalidConfig)
	}
	var cache wazero.CompilationCache
	if cfg.CacheDir != "" {
		c, err := wazero.NewCompilationCacheWithDir(cfg.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("%w: cache directory: %w", ErrInvalidConfig, err)
		}
		cache = c
	} else {
		cache = wazero.NewCompilationCache()
	}
	rc := wazero.NewRuntimeConfig().
		WithCloseOnContextDone(true).
		WithMemoryLimitPages(MaxMemoryPages).
		WithCompilationCache(cache)
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	// The host functions a GrantWASI module may import. Only those
	// wasiFunction lists pass registration; the rest of the module is
	// never linked to anything.
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		_ = cache.Close(ctx)
		return nil, fmt.Errorf("wasmhost: wasi: %w", err)
	}
	return &Runtime{host: host, cfg: cfg, cache: cache, rt: rt}, nil
}

// opening counts an activation that may make an instance, unless the
// Runtime is closed (false).
func (r *Runtime) opening() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	if r.stats.Live == 0 {
		r.idle = make(chan struct{})
	}
	r.stats.Live++
	return true
}

// closing counts an activation ended, its instance closed.
func (r *Runtime) closing() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.Live--
	if r.stats.Live == 0 {
		close(r.idle)
	}
}

// Stats returns a snapshot.
func (r *Runtime) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// Close stops the Runtime: from its call, activations of its functions
// end as platform failures (CauseInstantiate, wrapping ErrClosed) without
// an instance, and Register returns ErrClosed. It then waits until no
// instance is live, or until ctx is done (returning its error, the engine
// left open: call Close again), and closes every compiled module and the
// engine. An owner stops the trigger runtime and waits for the reference
// host (refhost.Host.WaitIdle) first, so that nothing waits here.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	first := !r.closed
	r.closed = true
	idle := r.idle
	live := r.stats.Live
	r.mu.Unlock()
	if live > 0 {
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if !first {
		return nil
	}
	err := r.rt.Close(ctx)
	if cerr := r.cache.Close(ctx); err == nil {
		err = cerr
	}
	return err
}
