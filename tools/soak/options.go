package soak

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/latent-systems/latent-nats/trigger"
)

// Bounds of Options.
const (
	MinDuration = 5 * time.Second
	MaxDuration = 24 * time.Hour
	MaxTenants  = trigger.MaxTenants
	// MaxBindingsPerTenant bounds Options.Bindings (trigger.MaxBindings
	// bounds the whole installation).
	MaxBindingsPerTenant = 16
	MaxEventsRound       = 64
	DefaultDuration      = 2 * time.Minute
	// SettleBound is how long the consumers may take to settle after the
	// last fault: a retryable event needs MaxDeliver deliveries, an
	// uncertain acknowledgement one ack wait, a killed broker its
	// restart and the dial backoff.
	SettleBound = 30 * time.Second
)

// Fault is one kind of fault a round may inject.
type Fault uint8

// Faults.
const (
	// FaultKill kills the broker with SIGKILL and restarts it on the same
	// port and file store.
	FaultKill Fault = iota + 1
	// FaultRestart stops the broker gracefully and starts it again.
	FaultRestart
	// FaultPause stops the broker's process (SIGSTOP) for a random 50 ms
	// to 1.5 s (beyond the operation timeout) and continues it.
	FaultPause
	// FaultLameDuck puts the broker in lame-duck mode (its clients are
	// told, then closed), waits for its exit and starts it again.
	FaultLameDuck
	// FaultSever resets every link between the runtime and the broker.
	FaultSever
	// FaultStall holds the broker's bytes to the runtime for a random
	// 50 ms to 1.5 s, then delivers them.
	FaultStall
	// FaultBlackhole drops the runtime's bytes to the broker for a random
	// 50 ms to 1.5 s, leaving the sockets open.
	FaultBlackhole
)

// NumFaults is the number of faults; Fault values run from 1 to it.
const NumFaults = int(FaultBlackhole)

// String returns the fault's name, or "Fault(n)" outside the list.
func (f Fault) String() string {
	switch f {
	case FaultKill:
		return "kill"
	case FaultRestart:
		return "restart"
	case FaultPause:
		return "pause"
	case FaultLameDuck:
		return "lame-duck"
	case FaultSever:
		return "sever"
	case FaultStall:
		return "stall"
	case FaultBlackhole:
		return "blackhole"
	}
	return "Fault(" + strconv.Itoa(int(f)) + ")"
}

// ParseFault returns the fault named s.
func ParseFault(s string) (Fault, error) {
	for f := Fault(1); int(f) <= NumFaults; f++ {
		if f.String() == s {
			return f, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown fault %q", ErrInvalidOptions, s)
}

// Options configure Run.
type Options struct {
	// Duration is how long faults are injected, MinDuration to
	// MaxDuration; zero means DefaultDuration. Settling follows.
	Duration time.Duration
	// Tenants and Bindings (per tenant); zero means 3 and 2.
	Tenants  int
	Bindings int
	// EventsPerRound is the batch published each round; zero means 16.
	EventsPerRound int
	// Seed seeds the choice of events, faults and moments; zero means one
	// drawn from the clock (printed, so a run can be repeated).
	Seed uint64
	// Faults are the kinds injected, each round one at random; nil means
	// every kind.
	Faults []Fault
	// Durable says the broker promises that a verified acknowledgement
	// survives the faults injected: a re-execution after one, a message
	// kept in its stream after one (ledger.Verdict.KeptAfterAck) or a
	// retry dropped after a verified NAK (ledger.Verdict.DroppedRetries)
	// then fails the run instead of being listed. A run that injected no
	// kill is held to it whatever this says.
	Durable bool
	// SyncInterval is the broker's JetStream sync_interval
	// (broker.Options.SyncInterval): "" for the server's default, "always"
	// to fsync every write, or a duration. It says what a kill may lose.
	SyncInterval string
	// Binary is the nats-server to run; empty means the pinned one.
	Binary string
	// Out receives the progress and the figures; nil means none.
	Out io.Writer
}

func (o Options) withDefaults() Options {
	if o.Duration == 0 {
		o.Duration = DefaultDuration
	}
	if o.Tenants == 0 {
		o.Tenants = 3
	}
	if o.Bindings == 0 {
		o.Bindings = 2
	}
	if o.EventsPerRound == 0 {
		o.EventsPerRound = 16
	}
	if o.Faults == nil {
		for f := Fault(1); int(f) <= NumFaults; f++ {
			o.Faults = append(o.Faults, f)
		}
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.Duration < MinDuration || o.Duration > MaxDuration:
		return fmt.Errorf("%w: duration %v outside %v to %v", ErrInvalidOptions, o.Duration, MinDuration, MaxDuration)
	case o.Tenants < 1 || o.Tenants > MaxTenants:
		return fmt.Errorf("%w: tenants %d outside 1 to %d", ErrInvalidOptions, o.Tenants, MaxTenants)
	case o.Bindings < 1 || o.Bindings > MaxBindingsPerTenant:
		return fmt.Errorf("%w: bindings per tenant %d outside 1 to %d", ErrInvalidOptions, o.Bindings, MaxBindingsPerTenant)
	case o.EventsPerRound < 1 || o.EventsPerRound > MaxEventsRound:
		return fmt.Errorf("%w: events per round %d outside 1 to %d", ErrInvalidOptions, o.EventsPerRound, MaxEventsRound)
	case len(o.Faults) == 0:
		return fmt.Errorf("%w: no fault to inject", ErrInvalidOptions)
	}
	for _, f := range o.Faults {
		if f < 1 || int(f) > NumFaults {
			return fmt.Errorf("%w: fault %d", ErrInvalidOptions, f)
		}
	}
	return nil
}
