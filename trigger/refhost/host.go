package refhost

import (
	"context"
	"fmt"
	"sync"

	"github.com/latent-systems/latent-nats/trigger"
)

// The Host satisfies the runtime's interface.
var _ trigger.Host = (*Host)(nil)

// Config bounds a Host. MaxActivations and MaxInputBytes are required:
// nothing is unlimited. MaxMemoryBytes may be 0 for a host of Go functions
// alone, which reserve no guest memory.
type Config struct {
	// MaxActivations is the number of admission slots, 1..MaxAdmission:
	// the reservations that may be held at once. A slot is held from
	// ReserveInbound until Release, or until the function returns when it
	// outlives its activation.
	MaxActivations int
	// MaxInputBytes is the input allocation all held reservations share,
	// 1..MaxInputAllocation bytes. Each reservation holds the request's
	// MaxInputBytes of it for as long as its slot.
	MaxInputBytes int
	// MaxMemoryBytes is the guest memory all held reservations share,
	// 0..MaxMemoryAllocation bytes. Each reservation holds the Memory of
	// the function its pinned route leads to, for as long as its slot; a
	// function whose Memory is more than MaxMemoryBytes cannot be
	// registered.
	MaxMemoryBytes int
}

// Func is a registered function. It runs on a goroutine the Host owns and
// must return when ctx is done (at the earlier of the activation's
// deadline and budget, or when the owner stops); until it returns it
// keeps its admission slot, input allocation and guest memory. Returning an
// *ApplicationError with a declared code is a declared failure; any other
// error, and a panic, is a platform failure.
type Func func(ctx context.Context, c Call) error

// Call is what a function receives: its decoded arguments and the
// activation's identity. Nothing in it comes from the event except Args
// and Link.
type Call struct {
	// Args holds one Go value per parameter (see the package
	// documentation); they share no memory with the payload.
	Args []any
	// Principal is the derived Trigger principal.
	Principal trigger.Principal
	// ActivationID and Trace are fresh for this root activation.
	ActivationID trigger.ActivationID
	Trace        trigger.TraceID
	// Link is the event's own trace context when it carried one valid
	// traceparent header, else the zero TraceLink: a link beside Trace for
	// the function's telemetry, never Trace's parent (see
	// trigger.TraceLink).
	Link trigger.TraceLink
	// Binding is the binding the event came through.
	Binding trigger.BindingRef
	// Revision and RouteGeneration are those pinned at reservation.
	Revision        string
	RouteGeneration uint64
	// StreamSeq and Delivered identify the delivery (Delivered is 1 on
	// the first).
	StreamSeq uint64
	Delivered uint64
}

// Function is one registration: a Go function, where it lives (service
// and revision), what it implements (contract and name), its declared
// parameter types and the failure codes its contract declares.
type Function struct {
	Service  string
	Revision string
	Contract string
	Name     string
	// Params are the declared argument types, at most 32.
	Params []Type
	// Result is the declared result type, nil for none. The Host only
	// validates it and compares it with a declared Contract; what a
	// function returns beyond its error is its backend's (a Go Func
	// returns no value).
	Result *Type
	// Failures are the declared application failure codes (WIT
	// identifiers, at most 64, each once).
	Failures []string
	// Memory is the guest memory, in bytes, one activation of the
	// function may hold: ReserveInbound reserves it from
	// Config.MaxMemoryBytes before any network, so that an unavailable
	// quota causes no pull. 0 for a Go function; a sandboxed backend
	// (trigger/wasmhost) sets it to the ceiling it enforces.
	Memory int
	Func   Func
}

// funcKey locates a registered function.
type funcKey struct {
	service, revision, contract, name string
}

// function is a validated registration.
type function struct {
	sig      *Signature
	params   string // sig.String()
	result   string // the result type's String, empty for none
	failures []string
	memory   int
	fn       Func
}

// declares reports whether code is one of f's declared failures.
func (f *function) declares(code string) bool {
	for _, c := range f.failures {
		if c == code {
			return true
		}
	}
	return false
}

// Host is the reference host: an in-process registry of Go functions with
// publications, tenant credentials, principals and routes that tests and
// embedders control, an admission limit and input accounting. It is safe
// for concurrent use and may serve several trigger runtimes. It owns the
// goroutines its functions run on; WaitIdle waits for them.
type Host struct {
	cfg Config

	mu        sync.Mutex
	functions map[funcKey]*function
	contracts map[string]map[string]contractFunc
	published map[PublicationKey]bool
	revokedCr map[string]bool // tenants
	revokedPr map[string]bool // principal subjects
	routes    map[routeKey]*route
	slots     int           // admission slots held
	input     int           // input bytes held
	memory    int           // guest memory bytes held
	running   int           // function goroutines
	idle      chan struct{} // closed when running returns to 0
	counts    counts
}

// New returns an empty Host: no functions, publications or routes; every
// credential and principal current.
func New(cfg Config) (*Host, error) {
	if cfg.MaxActivations < 1 || cfg.MaxActivations > MaxAdmission {
		return nil, fmt.Errorf("%w: max activations %d outside 1..%d", ErrInvalidConfig, cfg.MaxActivations, MaxAdmission)
	}
	if cfg.MaxInputBytes < 1 || cfg.MaxInputBytes > MaxInputAllocation {
		return nil, fmt.Errorf("%w: max input bytes %d outside 1..%d", ErrInvalidConfig, cfg.MaxInputBytes, MaxInputAllocation)
	}
	if cfg.MaxMemoryBytes < 0 || cfg.MaxMemoryBytes > MaxMemoryAllocation {
		return nil, fmt.Errorf("%w: max memory bytes %d outside 0..%d", ErrInvalidConfig, cfg.MaxMemoryBytes, MaxMemoryAllocation)
	}
	return &Host{
		cfg:       cfg,
		functions: make(map[funcKey]*function),
		contracts: make(map[string]map[string]contractFunc),
		published: make(map[PublicationKey]bool),
		revokedCr: make(map[string]bool),
		revokedPr: make(map[string]bool),
		routes:    make(map[routeKey]*route),
		counts:    counts{outcomes: make(map[trigger.Outcome]uint64)},
	}, nil
}

// Register adds a function. It does not publish it or route to it: see
// Publish and SetRoute. Errors: ErrInvalidName, ErrInvalidFunction (which
// also wraps the *TypeError of an invalid parameter list or result type)
// and ErrDuplicateFunction. A function is not checked against its
// Contract here: a declared contract is checked at each activation's
// final start check, against the contract as declared then.
func (h *Host) Register(f Function) error {
	for _, n := range []string{f.Service, f.Revision, f.Contract, f.Name} {
		if !validIdentifier(n) {
			return ErrInvalidName
		}
	}
	if f.Func == nil {
		return fmt.Errorf("%w: no func", ErrInvalidFunction)
	}
	sig, result, err := functionType(f.Params, f.Result)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidFunction, err)
	}
	if f.Memory < 0 || f.Memory > h.cfg.MaxMemoryBytes {
		return fmt.Errorf("%w: memory %d outside the host's 0..%d", ErrInvalidFunction, f.Memory, h.cfg.MaxMemoryBytes)
	}
	if len(f.Failures) > maxDeclaredFailures {
		return fmt.Errorf("%w: more than %d failure codes", ErrInvalidFunction, maxDeclaredFailures)
	}
	for i, c := range f.Failures {
		if !validName(c) {
			return fmt.Errorf("%w: failure code %d is not a name", ErrInvalidFunction, i)
		}
		for _, prev := range f.Failures[:i] {
			if prev == c {
				return fmt.Errorf("%w: failure code %d repeated", ErrInvalidFunction, i)
			}
		}
	}
	k := funcKey{f.Service, f.Revision, f.Contract, f.Name}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, dup := h.functions[k]; dup {
		return ErrDuplicateFunction
	}
	h.functions[k] = &function{
		sig: sig, params: sig.String(), result: result, failures: append([]string(nil), f.Failures...),
		memory: f.Memory, fn: f.Func,
	}
	return nil
}

// validIdentifier reports whether s is 1..trigger.MaxTargetNameLen bytes of
// printable ASCII without space.
func validIdentifier(s string) bool {
	if s == "" || len(s) > maxIdentifierLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
