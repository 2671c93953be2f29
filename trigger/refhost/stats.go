package refhost

import (
	"context"
	"maps"

	"github.com/latent-systems/latent-nats/trigger"
)

// counts are the Host's running totals. Guarded by Host.mu.
type counts struct {
	reservations uint64
	unavailable  uint64
	noRoute      uint64
	releases     uint64
	activations  uint64
	overran      uint64
	misuse       uint64
	outcomes     map[trigger.Outcome]uint64
}

// Stats is a snapshot of a Host's accounting and totals.
type Stats struct {
	// Slots, InputBytes and MemoryBytes are the admission slots, input
	// bytes and guest memory bytes held now; Running is the number of
	// functions running now (including any that outlived their
	// activation). All four return to zero when every reservation is
	// released and every function has returned.
	Slots       int
	InputBytes  int
	MemoryBytes int
	Running     int

	// Reservations counts successful ReserveInbound calls, Unavailable
	// those refused for capacity and NoRoute those refused for want of a
	// route; Releases counts first Release calls.
	Reservations uint64
	Unavailable  uint64
	NoRoute      uint64
	Releases     uint64
	// Activations counts accepted Activate calls; Overran those whose
	// function was still running when Activate returned; Misuse repeated
	// or inconsistent calls (a second Activate or Release, a mismatched
	// binding or generation).
	Activations uint64
	Overran     uint64
	Misuse      uint64

	// outcomes counts Activate results by outcome; read with Outcome, so
	// that an outcome added to trigger changes no caller.
	outcomes map[trigger.Outcome]uint64
}

// Outcome returns how many activations ended with o.
func (s Stats) Outcome(o trigger.Outcome) uint64 {
	return s.outcomes[o]
}

// Stats returns a snapshot.
func (h *Host) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.counts
	return Stats{
		Slots:        h.slots,
		InputBytes:   h.input,
		MemoryBytes:  h.memory,
		Running:      h.running,
		Reservations: c.reservations,
		Unavailable:  c.unavailable,
		NoRoute:      c.noRoute,
		Releases:     c.releases,
		Activations:  c.activations,
		Overran:      c.overran,
		Misuse:       c.misuse,
		outcomes:     maps.Clone(c.outcomes),
	}
}

// WaitIdle waits until no function runs, or until ctx is done (returning
// its error). Owners call it when stopping, after the runtime has
// returned, so that no goroutine of the Host outlives them.
func (h *Host) WaitIdle(ctx context.Context) error {
	h.mu.Lock()
	if h.running == 0 {
		h.mu.Unlock()
		return nil
	}
	idle := h.idle
	h.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
