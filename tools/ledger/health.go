package ledger

import (
	"context"
	"os"
	"runtime"
	"time"

	"github.com/latent-systems/latent-nats/trigger"
)

// HealthSample is what the process and the pools hold at one moment.
type HealthSample struct {
	Goroutines int
	// Descriptors counts the process's open file descriptors (-1 where
	// /proc/self/fd cannot be read).
	Descriptors int
	Usage       trigger.Usage
}

// Health compares the runtime with a baseline taken before the scenario.
type Health struct {
	pools    *trigger.Pools
	baseline HealthSample
}

// NewHealth takes the baseline: call it before the runtime is installed
// (or after it was installed and before it ran, with the pools holding
// only the installation's charge).
func NewHealth(pools *trigger.Pools) *Health {
	return &Health{pools: pools, baseline: sample(pools)}
}

// Baseline returns the baseline sample.
func (h *Health) Baseline() HealthSample { return h.baseline }

// Wait waits, polling every tick until ctx ends, for goroutines and
// descriptors to be at most their baseline and the pools' usage to equal
// it: goroutines and sockets that ended leave the counts shortly after.
// On ctx's end it returns a *HealthError with the last sample.
func (h *Health) Wait(ctx context.Context, tick time.Duration) error {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		now := sample(h.pools)
		if now.Goroutines <= h.baseline.Goroutines && now.Descriptors <= h.baseline.Descriptors && now.Usage == h.baseline.Usage {
			return nil
		}
		select {
		case <-ctx.Done():
			return &HealthError{Baseline: h.baseline, Now: now}
		case <-t.C:
		}
	}
}

func sample(pools *trigger.Pools) HealthSample {
	return HealthSample{Goroutines: runtime.NumGoroutine(), Descriptors: descriptors(), Usage: pools.Usage()}
}

// descriptors counts the open file descriptors, -1 when unknown.
func descriptors() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}
