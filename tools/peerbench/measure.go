package main

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"time"
)

// sample is one loop's run in one round.
type sample struct {
	steps  int
	wall   time.Duration
	cpu    time.Duration // this process's user + system time
	sys    time.Duration // the system part of cpu
	allocs uint64        // runtime.MemStats.Mallocs delta
	bytes  uint64        // runtime.MemStats.TotalAlloc delta
	lat    []time.Duration
	cut    bool // the round's time bound ended the loop early
}

func (s sample) rate() float64 {
	if s.wall <= 0 {
		return 0
	}
	return float64(s.steps) / s.wall.Seconds()
}

// measureLoop runs up to n steps of l, all within bound, recording each step's
// latency into lat (len(lat) >= n), and the process's CPU time and
// allocations around the loop. The broker is another process, so they are
// the client's alone (with whatever its idle goroutines cost meanwhile).
// A collection runs before the loop so one loop's garbage is not collected
// on the next one's time.
func measureLoop(ctx context.Context, l stepper, n int, bound time.Duration, lat []time.Duration) (sample, error) {
	runtime.GC()
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	deadline, _ := ctx.Deadline()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	u0, s0 := cpuTime()
	start := time.Now()
	var s sample
	var err error
	prev := start
	for s.steps < n {
		if err = l.step(ctx); err != nil {
			break
		}
		now := time.Now()
		lat[s.steps] = now.Sub(prev)
		prev = now
		s.steps++
		if !now.Before(deadline) {
			s.cut = s.steps < n
			break
		}
	}
	s.wall = time.Since(start)
	u1, s1 := cpuTime()
	s.cpu, s.sys = u1-u0+s1-s0, s1-s0
	runtime.ReadMemStats(&m1)
	s.allocs = m1.Mallocs - m0.Mallocs
	s.bytes = m1.TotalAlloc - m0.TotalAlloc
	s.lat = lat[:s.steps:s.steps]
	if err != nil {
		return s, fmt.Errorf("step %d: %w", s.steps+1, err)
	}
	return s, nil
}

// summary aggregates one loop's samples over every round.
type summary struct {
	steps            int
	rate             float64 // median of the rounds' steps/s
	p50, p99, max    time.Duration
	allocs, bytes    float64       // per step, over every round
	cpu, sys         time.Duration // per step
	cpuRound, allocR []float64
	p99Round         []float64 // each round's p99, in microseconds
	cut              bool
}

func summarize(ss []sample) summary {
	var sum summary
	var lat []time.Duration
	var allocs, bytes uint64
	var cpu, sys time.Duration
	rates := make([]float64, 0, len(ss))
	for _, s := range ss {
		sum.steps += s.steps
		lat = append(lat, s.lat...)
		allocs += s.allocs
		bytes += s.bytes
		cpu += s.cpu
		sys += s.sys
		sum.cut = sum.cut || s.cut
		rates = append(rates, s.rate())
		if s.steps > 0 {
			sorted := slices.Sorted(slices.Values(s.lat))
			sum.p99Round = append(sum.p99Round, float64(percentile(sorted, 99))/float64(time.Microsecond))
			sum.cpuRound = append(sum.cpuRound, float64(s.cpu.Microseconds())/float64(s.steps))
			sum.allocR = append(sum.allocR, float64(s.allocs)/float64(s.steps))
		}
	}
	sum.rate = medianFloat(rates)
	if sum.steps == 0 {
		return sum
	}
	slices.Sort(lat)
	sum.p50 = percentile(lat, 50)
	sum.p99 = percentile(lat, 99)
	sum.max = lat[len(lat)-1]
	sum.allocs = float64(allocs) / float64(sum.steps)
	sum.bytes = float64(bytes) / float64(sum.steps)
	sum.cpu = cpu / time.Duration(sum.steps)
	sum.sys = sys / time.Duration(sum.steps)
	return sum
}

// percentile is the nearest-rank percentile of sorted (not empty).
func percentile(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

// medianFloat is the median (the lower middle one for an even count).
func medianFloat(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.SortFunc(s, cmp.Compare)
	return s[(len(s)-1)/2]
}
