package trigger

import (
	"errors"
	"strconv"
)

// Sentinels of installation, pools and the run loop. errors.go holds those
// of the configuration. No message contains a secret, payload bytes or
// broker text.
var (
	// ErrEpochConflict is matched by every *EpochError: the registry's
	// current epoch for the logical ID is not the expected one, or the new
	// epoch does not move forward.
	ErrEpochConflict = errors.New("trigger: epoch transition refused")
	// ErrSuperseded: a newer epoch of the same logical ID was installed;
	// this installation makes no further step.
	ErrSuperseded = errors.New("trigger: installation superseded by a newer epoch")
	// ErrClosed: the installation (or the pools) was closed.
	ErrClosed = errors.New("trigger: closed")
	// ErrRunning: Run was called while Run is already running, or Step
	// while Run runs.
	ErrRunning = errors.New("trigger: already running")
	// ErrReentrant: Step or Run was called from inside one of the
	// installation's own host callbacks (Activate, ObserveStep or another
	// Host method), on the goroutine that runs the step; it would wait for
	// that step forever.
	ErrReentrant = errors.New("trigger: step or run called from inside the step's own host callback")
	// ErrPoolExhausted is matched by every *ReservationError: a shared pool
	// limit refused a reservation, so nothing was sent.
	ErrPoolExhausted = errors.New("trigger: pool reservation unavailable")
	// ErrDialBackoff: the tenant client's last dial failed and its backoff
	// has not elapsed, so nothing was dialled.
	ErrDialBackoff = errors.New("trigger: tenant client in dial backoff")
	// ErrInvalidPoolLimits is matched by every *PoolLimitsError.
	ErrInvalidPoolLimits = errors.New("trigger: invalid pool limits")
	// ErrInvalidLogicalID: a logical ID empty, longer than MaxIDLen or with
	// bytes other than printable ASCII.
	ErrInvalidLogicalID = errors.New("trigger: invalid logical id")
	// ErrNoHost: Run or Step was given a nil Host.
	ErrNoHost = errors.New("trigger: nil host")
)

// EpochError reports a refused epoch transition of one logical ID.
type EpochError struct {
	LogicalID string
	// Current is the registry's epoch (0 when the ID was never installed).
	Current  uint64
	Expected uint64
	Epoch    uint64
}

func (e *EpochError) Error() string {
	return "trigger: epoch transition refused for " + strconv.QuoteToASCII(e.LogicalID) +
		": current " + strconv.FormatUint(e.Current, 10) +
		", expected " + strconv.FormatUint(e.Expected, 10) +
		", new " + strconv.FormatUint(e.Epoch, 10)
}

// Unwrap returns ErrEpochConflict.
func (e *EpochError) Unwrap() error { return ErrEpochConflict }

// Resource names what a pool reservation ran out of.
type Resource uint8

// Resources of the shared pools.
const (
	// ResourceBytes: PoolLimits.MaxBytes, all accounted bytes.
	ResourceBytes Resource = iota + 1
	// ResourceMetadataBytes: PoolLimits.MaxMetadataBytes, the installation
	// charges.
	ResourceMetadataBytes
	// ResourceInstallations: PoolLimits.MaxInstallations.
	ResourceInstallations
	// ResourceRequests: PoolLimits.MaxRequests.
	ResourceRequests
	// ResourceClients: PoolLimits.MaxClients.
	ResourceClients
	// ResourceConnections: PoolLimits.MaxConnections.
	ResourceConnections
	// ResourceTenantRequests: PoolLimits.MaxTenantRequests.
	ResourceTenantRequests
	// ResourceTenantConnections: PoolLimits.MaxTenantConnections.
	ResourceTenantConnections
	// ResourceProviderRequests: PoolLimits.MaxProviderRequests.
	ResourceProviderRequests
	// ResourceProviderConnections: PoolLimits.MaxProviderConnections.
	ResourceProviderConnections
)

// NumResources is the number of Resource values; they are 1..NumResources.
const NumResources = int(ResourceProviderConnections)

// String returns the resource's name, or "Resource(n)" outside the list.
func (r Resource) String() string {
	switch r {
	case ResourceBytes:
		return "bytes"
	case ResourceMetadataBytes:
		return "metadata bytes"
	case ResourceInstallations:
		return "installations"
	case ResourceRequests:
		return "requests"
	case ResourceClients:
		return "clients"
	case ResourceConnections:
		return "connections"
	case ResourceTenantRequests:
		return "tenant requests"
	case ResourceTenantConnections:
		return "tenant connections"
	case ResourceProviderRequests:
		return "provider requests"
	case ResourceProviderConnections:
		return "provider connections"
	}
	return "Resource(" + strconv.Itoa(int(r)) + ")"
}

// ReservationError reports the pool limit that refused a reservation.
type ReservationError struct {
	Resource Resource
}

func (e *ReservationError) Error() string {
	return "trigger: pool reservation unavailable: " + e.Resource.String()
}

// Unwrap returns ErrPoolExhausted.
func (e *ReservationError) Unwrap() error { return ErrPoolExhausted }

// PoolLimitsError reports the first PoolLimits field out of its bounds.
type PoolLimitsError struct {
	Field string
}

func (e *PoolLimitsError) Error() string {
	return "trigger: invalid pool limits: " + e.Field + " out of range"
}

// Unwrap returns ErrInvalidPoolLimits.
func (e *PoolLimitsError) Unwrap() error { return ErrInvalidPoolLimits }

// reservationError returns a *ReservationError for r.
func reservationError(r Resource) error { return &ReservationError{Resource: r} }
