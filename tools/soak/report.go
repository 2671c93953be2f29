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
	fmt.Fprintf(w, "soak: verdict rule: %s\n", r.Rule)
}

// durable reports whether the run holds the broker to every verified
// acknowledgement (ledger.Verdict.Err): when asked to, and whenever no kill
// was injected. Only after a kill has nats-server 2.14.6 been seen to
// restore a message it removed on a verified ACK (Verdict.KeptAfterAck) or
// to forget a verified NAK's retry (Verdict.DroppedRetries); a graceful
// restart, a pause or a cut link leaves it nothing to forget.
func durable(opts Options, faults [NumFaults + 1]int) bool {
	return opts.Durable || faults[FaultKill] == 0
}

// rule names the verdict's rule for the report, and why it applies.
func rule(opts Options, faults [NumFaults + 1]int) string {
	const strict = "a re-execution after a verified ack, a message kept after its ack or a dropped retry fails"
	switch {
	case !durable(opts, faults):
		return "no loss (kills injected): messages kept after their ack and retries dropped are the broker's state, listed"
	case opts.Durable:
		return "durable (asked): " + strict
	}
	return "durable (no kill injected): " + strict
}
