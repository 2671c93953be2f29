package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Targets of the pull loop (issue 5).
const (
	targetVsJetStream = 1.4
	targetVsCore      = 1.15
	targetAllocs      = 5
	targetCPU         = 40 * time.Microsecond
)

// roundRatios is, for each round, a's steps/s over b's.
func roundRatios(a, b *loop) []float64 {
	var rs []float64
	for i := range min(len(a.samples), len(b.samples)) {
		if rb := b.samples[i].rate(); rb > 0 {
			rs = append(rs, a.samples[i].rate()/rb)
		}
	}
	return rs
}

func metMissed(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}

// printPullReport writes the summary tables in the form docs/BENCHMARKS.md
// uses. loops are latent, core and jetstream in that order; floors are
// the latent and nats.go floors.
func printPullReport(w io.Writer, loops, floors, empties []*loop) {
	sums := make([]summary, len(loops))
	for i, l := range loops {
		sums[i] = summarize(l.samples)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "one visit = inspect, pull one, verified ack; steps/s is the median of the rounds, latencies over every measured visit")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| loop | visits | steps/s | p50 | p99 | max | allocs/visit | bytes/visit | client CPU/visit (of it kernel) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for i, l := range loops {
		s := sums[i]
		fmt.Fprintf(w, "| %s | %d | %.0f | %v | %v | %v | %.1f | %.0f | %v (%v) |\n",
			l.name, s.steps, s.rate, us(s.p50), us(s.p99), us(s.max), s.allocs, s.bytes, us(s.cpu), us(s.sys))
	}
	latent, core, js := loops[0], loops[1], loops[2]
	vsCore := medianFloat(roundRatios(latent, core))
	vsJS := medianFloat(roundRatios(latent, js))
	fmt.Fprintln(w)
	fmt.Fprintf(w, "steps/s ratios, median of the rounds' ratios: latent/core %.2fx (rounds %s), latent/jetstream %.2fx (rounds %s)\n",
		vsCore, joinFloats(roundRatios(latent, core), 2), vsJS, joinFloats(roundRatios(latent, js), 2))
	fmt.Fprintf(w, "p99 by round, us: latent %s, core %s, jetstream %s\n",
		joinFloats(sums[0].p99Round, 0), joinFloats(sums[1].p99Round, 0), joinFloats(sums[2].p99Round, 0))
	fmt.Fprintf(w, "client CPU per visit by round, us: latent %s, core %s, jetstream %s\n",
		joinFloats(sums[0].cpuRound, 1), joinFloats(sums[1].cpuRound, 1), joinFloats(sums[2].cpuRound, 1))
	fmt.Fprintf(w, "allocations per visit by round: latent %s, core %s, jetstream %s\n",
		joinFloats(sums[0].allocR, 1), joinFloats(sums[1].allocR, 1), joinFloats(sums[2].allocR, 1))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| target | result | |")
	fmt.Fprintln(w, "|---|---|---|")
	fmt.Fprintf(w, "| steps/s at least %.2fx jetstream | %.2fx | %s |\n", targetVsJetStream, vsJS, metMissed(vsJS >= targetVsJetStream))
	fmt.Fprintf(w, "| steps/s at least %.2fx core | %.2fx | %s |\n", targetVsCore, vsCore, metMissed(vsCore >= targetVsCore))
	p99L, p99C := medianFloat(sums[0].p99Round), medianFloat(sums[1].p99Round)
	under := 0
	for i := range min(len(sums[0].p99Round), len(sums[1].p99Round)) {
		if sums[0].p99Round[i] < sums[1].p99Round[i] {
			under++
		}
	}
	fmt.Fprintf(w, "| p99 under core's (median of the rounds' p99) | %.0fµs vs %.0fµs, under in %d of %d rounds; all visits %v vs %v | %s |\n",
		p99L, p99C, under, len(sums[0].p99Round), us(sums[0].p99), us(sums[1].p99), metMissed(p99L < p99C))
	fmt.Fprintf(w, "| at most %d allocations per visit | %.1f | %s |\n", targetAllocs, sums[0].allocs, metMissed(sums[0].allocs <= targetAllocs))
	fmt.Fprintf(w, "| at most %v client CPU per visit | %v | %s |\n", targetCPU, us(sums[0].cpu), metMissed(sums[0].cpu <= targetCPU))

	if len(floors) == 2 && len(floors[0].samples) > 0 {
		fl, fn := summarize(floors[0].samples), summarize(floors[1].samples)
		fmt.Fprintln(w)
		fmt.Fprintf(w, "floor = %d bare round trips (a request to a subject without subscribers, answered 503 by the broker's read loop)\n", floorRoundTrips)
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| loop | visits | steps/s | p50 | p99 | allocs/visit | client CPU/visit (of it kernel) |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
		for i, s := range []summary{fl, fn} {
			fmt.Fprintf(w, "| %s | %d | %.0f | %v | %v | %.1f | %v (%v) |\n",
				floors[i].name, s.steps, s.rate, us(s.p50), us(s.p99), s.allocs, us(s.cpu), us(s.sys))
		}
		fmt.Fprintf(w, "\nclient CPU per visit above its floor: latent %v (user %v, kernel %v), core %v\n",
			us(sums[0].cpu-fl.cpu), us((sums[0].cpu-sums[0].sys)-(fl.cpu-fl.sys)), us(sums[0].sys-fl.sys), us(sums[1].cpu-fn.cpu))
		fmt.Fprintf(w, "client CPU per round trip of the floor: latent %v, nats.go %v\n",
			us(fl.cpu/floorRoundTrips), us(fn.cpu/floorRoundTrips))
	}

	if len(empties) == 0 || len(empties[0].samples) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| empty consumer, one visit | visits | p50 | p99 | max | allocs/visit | client CPU/visit (of it kernel) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	es := make([]summary, len(empties))
	for i, l := range empties {
		es[i] = summarize(l.samples)
		fmt.Fprintf(w, "| %s | %d | %v | %v | %v | %.1f | %v (%v) |\n",
			l.name, es[i].steps, us(es[i].p50), us(es[i].p99), us(es[i].max), es[i].allocs, us(es[i].cpu), us(es[i].sys))
	}
	if len(es) == 2 && es[0].p50 > 0 {
		fmt.Fprintf(w, "\nheld pull / inspect, p50: %.0fx\n", float64(es[1].p50)/float64(es[0].p50))
	}
}

// joinFloats formats xs with prec decimals, comma separated.
func joinFloats(xs []float64, prec int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'f', prec, 64)
	}
	return strings.Join(parts, ", ")
}
