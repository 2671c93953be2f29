package refhost

import (
	"context"
	"fmt"
	"sync"

	"github.com/latent-systems/latent-nats/trigger"
)

// The Host satisfies the runtime's interface.
var _ trigger.Host = (*Host)(nil)

// Config bounds a Host. Both fields are required: nothing is unlimited.
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
}

// Func is a registered function. It runs on a goroutine the Host owns and
// must return when ctx is done (at the earlier of the activation's
// deadline and budget, or when the owner stops); until it returns it
// keeps its admission slot and input allocation. Returning an
// *ApplicationError with a declared code is a declared failure; any other
// error, and a panic, is a platform failure.
type Func func(ctx context.Context, c Call) error

// Call is what a function receives: its decoded arguments and the
// activation's identity. Nothing in it comes from the event except Args.
type Call struct {
	// Args holds one Go value per parameter (see the package
	// documentation); they share no memory with the payload.
	Args []any
	// Principal is the derived Trigger principal.
	Principal trigger.Principal
	// ActivationID and Trace are fresh for this root activation.
	ActivationID trigger.ActivationID
	Trace        trigger.TraceID
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
	// Params are the declared argument types, at most MaxParams.
	Params []Type
	// Failures are the declared application failure codes (WIT
	// identifiers, at most MaxDeclaredFailures, each once).
	Failures []string
	Func     Func
}

// funcKey locates a registered function.
type funcKey struct {
	service, revision, contract, name string
}

// function is a validated registration.
type function struct {
	sig      *Signature
	failures []string
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
	published map[PublicationKey]bool
	revokedCr map[string]bool // tenants
	revokedPr map[string]bool // principal subjects
	routes    map[routeKey]*route
	slots     int           // admission slots held
	input     int           // input bytes held
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
	return &Host{
		cfg:       cfg,
		functions: make(map[funcKey]*function),
		published: make(map[PublicationKey]bool),
		revokedCr: make(map[string]bool),
		revokedPr: make(map[string]bool),
		routes:    make(map[routeKey]*route),
	}, nil
}

// Register adds a function. It does not publish it or route to it: see
// Publish and SetRoute. Errors: ErrInvalidName, ErrInvalidFunction (which
// also wraps the *TypeError of an invalid parameter list) and
// ErrDuplicateFunction.
func (h *Host) Register(f Function) error {
	for _, n := range []string{f.Service, f.Revision, f.Contract, f.Name} {
		if !validIdentifier(n) {
			return ErrInvalidName
		}
	}
	if f.Func == nil {
		return fmt.Errorf("%w: no func", ErrInvalidFunction)
	}
	sig, err := NewSignature(f.Params...)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidFunction, err)
	}
	if len(f.Failures) > MaxDeclaredFailures {
		return fmt.Errorf("%w: more than %d failure codes", ErrInvalidFunction, MaxDeclaredFailures)
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
	h.functions[k] = &function{sig: sig, failures: append([]string(nil), f.Failures...), fn: f.Func}
	return nil
}

// validIdentifier reports whether s is 1..MaxIdentifierLen bytes of
// printable ASCII without space.
func validIdentifier(s string) bool {
	if s == "" || len(s) > MaxIdentifierLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
