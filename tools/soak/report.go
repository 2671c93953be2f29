package soak

import (
	"fmt"
	"io"
	"strings"
)

func faultCounts(c [NumFaults + 1]int) string {
	var parts []string
	for f := Fault(1); int(f) <= NumFaults; f++ {
		if c[f] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", f, c[f]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// report writes the figures of a run.
func report(w io.Writer, r *Result) {
	s := &r.Snapshot
	fmt.Fprintf(w, "soak: seed %d, %d rounds, faults %s, settled in %v\n", r.Seed, r.Rounds, faultCounts(r.Faults), r.Settle.Round(1e6))
	fmt.Fprintf(w, "soak: runtime: %d steps, %d dials, %d connections replaced, %d delivered, %d uncertain, %d late, %d unacknowledged, %d failed visits, %d empty pulls, %d visits awaiting a redelivery\n",
		s.Steps, s.Dials, s.Replaced, s.Totals.Delivered, s.Totals.Uncertain, s.Totals.Late, s.Totals.Unacknowledged, s.Totals.Failed, s.Totals.EmptyPulls, s.Totals.Awaiting)
	fmt.Fprintf(w, "soak: process: live heap %d KiB then %d KiB, goroutines %d then %d (installed, before any fault; stopped, after settling)\n",
		r.Start.HeapBytes>>10, r.End.HeapBytes>>10, r.Start.Goroutines, r.End.Goroutines)
	fmt.Fprintf(w, "soak: verdict: %s\n", r.Verdict)
}
