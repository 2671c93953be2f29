package ledger

import (
	"errors"
	"fmt"
)

// Sentinels matched with errors.Is.
var (
	// ErrVerdict: the verdict found a loss, an unsettled consumer, a
	// delivery of an event never published, a report of an unknown
	// binding, or (Verdict.Err only) a re-execution after a verified
	// acknowledgement. A *VerdictError carries the verdict.
	ErrVerdict = errors.New("ledger: verdict failed")
	// ErrNotSettled: the consumers did not settle within the bound.
	ErrNotSettled = errors.New("ledger: consumers not settled")
	// ErrUnhealthy: goroutines, descriptors or pool usage did not return
	// to their baseline within the bound.
	ErrUnhealthy = errors.New("ledger: runtime not back to its baseline")
)

// VerdictError is a failed verdict.
type VerdictError struct{ Verdict Verdict }

func (e *VerdictError) Error() string {
	v := &e.Verdict
	return fmt.Sprintf("ledger: verdict failed: %d lost, %d unsettled consumers, %d re-executions after a verified acknowledgement, %d messages kept after their acknowledgement, %d retries dropped, %d foreign deliveries, %d reports of unknown bindings",
		len(v.Lost), len(v.Unsettled), len(v.AfterVerified), len(v.KeptAfterAck), len(v.DroppedRetries), len(v.Foreign), v.BadReports)
}

func (e *VerdictError) Unwrap() error { return ErrVerdict }

// HealthError is a runtime that did not return to its baseline.
type HealthError struct {
	Baseline, Now HealthSample
}

func (e *HealthError) Error() string {
	return fmt.Sprintf("ledger: runtime not back to its baseline: goroutines %d (baseline %d), descriptors %d (baseline %d), pool usage %+v (baseline %+v)",
		e.Now.Goroutines, e.Baseline.Goroutines, e.Now.Descriptors, e.Baseline.Descriptors, e.Now.Usage, e.Baseline.Usage)
}

func (e *HealthError) Unwrap() error { return ErrUnhealthy }
