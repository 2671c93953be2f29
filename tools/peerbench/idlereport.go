package main

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/latent-systems/latent-nats/trigger"
)

// idleRateTolerance is how far apart the idle request rates of the two
// installation sizes may be, relative, for "set by the poll interval
// alone": the timer's pacing plus the visit's own round trip, sampled over
// one window, differ by a few percent between runs.
const idleRateTolerance = 0.05

// find returns the phase of client with n bindings or consumers and poll.
func find(phases []phase, client string, n int, poll time.Duration) (phase, bool) {
	for _, p := range phases {
		if p.client == client && p.n == n && p.poll == poll {
			return p, true
		}
	}
	return phase{}, false
}

// perOne is x divided by n, 0 for no n.
func perOne(x int64, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(x) / float64(n)
}

// slope is the growth of y per unit of n between two phases.
func slope(ys, yl int64, ns, nl int) float64 {
	if nl == ns {
		return 0
	}
	return float64(yl-ys) / float64(nl-ns)
}

func metStr(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}

// printIdleReport writes the tables of docs/BENCHMARKS.md's "Idle cost".
func printIdleReport(w io.Writer, o idleOptions, phases []phase, rates []rateCheck, visits []emptyVisits) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| client | bindings/consumers | goroutines | fds | heap (HeapAlloc) | heap+stack (HeapInuse+StackInuse) | heap+stack per binding/consumer | broker requests/s | broker messages out/s | requests per visit | client CPU | allocs/s |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, p := range phases {
		who := "nats.go `Consume()`"
		perVisit := "-"
		if p.client == "latent" {
			who = fmt.Sprintf("latent `Run`, poll %v", p.poll)
			if p.visits > 0 {
				perVisit = fmt.Sprintf("%.2f", float64(p.reqs)/float64(p.visits))
			}
		}
		hs := p.heapInuse + p.stackInuse
		fmt.Fprintf(w, "| %s | %d | %+d | %+d | %.1f KiB | %.1f KiB | %.0f B | %.1f | %.1f | %s | %.1f ms/s | %.0f |\n",
			who, p.n, p.goroutines, p.fds, float64(p.heapAlloc)/1024, float64(hs)/1024, perOne(hs, p.n),
			p.perSecond(float64(p.reqs)), p.perSecond(float64(p.replies)), perVisit,
			p.perSecond(float64(p.cpu.Microseconds()))/1000, p.perSecond(float64(p.mallocs)))
	}

	large := trigger.MaxBindings
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| | latent | nats.go |")
	fmt.Fprintln(w, "|---|---:|---:|")
	ls, okls := find(phases, "latent", o.small, pollFast)
	ll, okll := find(phases, "latent", large, pollFast)
	ns, okns := find(phases, "nats.go", o.small, 0)
	nl, oknl := find(phases, "nats.go", large, 0)
	if okls && okll && okns && oknl {
		fmt.Fprintf(w, "| goroutines added per binding/consumer (%d to %d) | %.2f | %.2f |\n", o.small, large,
			slope(int64(ls.goroutines), int64(ll.goroutines), o.small, large),
			slope(int64(ns.goroutines), int64(nl.goroutines), o.small, large))
		fmt.Fprintf(w, "| heap (HeapAlloc) per binding/consumer, running (%d to %d) | %.0f B | %.0f B |\n", o.small, large,
			slope(ls.heapAlloc, ll.heapAlloc, o.small, large), slope(ns.heapAlloc, nl.heapAlloc, o.small, large))
		fmt.Fprintf(w, "| heap+stack per binding/consumer, running (%d to %d) | %.0f B | %.0f B |\n", o.small, large,
			slope(ls.heapInuse+ls.stackInuse, ll.heapInuse+ll.stackInuse, o.small, large),
			slope(ns.heapInuse+ns.stackInuse, nl.heapInuse+nl.stackInuse, o.small, large))
		fmt.Fprintf(w, "| broker requests/s, %d vs %d | %.1f vs %.1f (poll %v) | %.1f vs %.1f |\n", o.small, large,
			ls.perSecond(float64(ls.reqs)), ll.perSecond(float64(ll.reqs)), pollFast,
			ns.perSecond(float64(ns.reqs)), nl.perSecond(float64(nl.reqs)))
		fmt.Fprintf(w, "| pull requests held by the broker at %d | 0 | %d |\n", large, nl.held)
		fmt.Fprintf(w, "| at %d: goroutines nats.go / latent | | %.0fx |\n", large, float64(nl.goroutines)/float64(max(ll.goroutines, 1)))
		fmt.Fprintf(w, "| at %d: heap+stack nats.go / latent | | %.1fx |\n", large,
			float64(nl.heapInuse+nl.stackInuse)/float64(max(ll.heapInuse+ll.stackInuse, 1)))
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "| target | result | |")
	fmt.Fprintln(w, "|---|---|---|")
	same := true
	var gs []string
	for _, poll := range idlePolls() {
		a, oka := find(phases, "latent", o.small, poll)
		b, okb := find(phases, "latent", large, poll)
		if !oka || !okb {
			continue
		}
		same = same && a.goroutines == b.goroutines && a.fds == b.fds
		gs = append(gs, fmt.Sprintf("poll %v: %+d and %+d goroutines, %+d and %+d fds", poll, a.goroutines, b.goroutines, a.fds, b.fds))
	}
	fmt.Fprintf(w, "| goroutines independent of the number of bindings | %d vs %d bindings, %v | %s |\n", o.small, large, gs, metStr(same))

	is, oki := find(phases, "latent", o.small, pollFast)
	il, okl := find(phases, "latent", large, pollFast)
	if oki && okl {
		installed := slope(is.install, il.install, o.small, large)
		charged := slope(is.charge, il.charge, o.small, large) // per binding
		heapOK := installed <= charged && il.install <= il.charge
		var running []string
		for _, poll := range idlePolls() {
			a, oka := find(phases, "latent", o.small, poll)
			b, okb := find(phases, "latent", large, poll)
			if !oka || !okb {
				continue
			}
			if a.visited != a.n || b.visited != b.n {
				running = append(running, fmt.Sprintf("poll %v: not every binding visited (%d of %d)", poll, b.visited, b.n))
				heapOK = false
				continue
			}
			per := slope(a.heapAlloc, b.heapAlloc, o.small, large)
			heapOK = heapOK && per <= charged
			running = append(running, fmt.Sprintf("poll %v: %.0f B", poll, per))
		}
		fmt.Fprintf(w, "| heap per installed binding within %.0f B | running, every binding visited (%d to %d): %v; installation alone: %.0f B per binding, the %d-binding installation %d B in all, charged %d B | %s |\n",
			charged, o.small, large, running, installed, large, il.install, il.charge, metStr(heapOK))
	}

	rateOK := len(rates) > 0
	var rs []string
	for _, c := range rates {
		ra, rb := c.perSecond(0), c.perSecond(1)
		ceiling := float64(time.Second) / float64(c.poll)
		ok := ra > 0 && math.Abs(rb/ra-1) <= idleRateTolerance && ra <= ceiling && rb <= ceiling
		rateOK = rateOK && ok
		rs = append(rs, fmt.Sprintf("poll %v: %.1f vs %.1f/s (at most %.0f)", c.poll, ra, rb, ceiling))
	}
	fmt.Fprintf(w, "| idle broker requests/s set by the poll interval alone (%d and %d bindings side by side, within %.0f%%) | %v | %s |\n",
		o.small, large, idleRateTolerance*100, rs, metStr(rateOK))

	oneRT := len(visits) > 0
	var vs []string
	for _, v := range visits {
		oneRT = oneRT && v.reqs == int64(v.steps) && v.replies == int64(v.steps)
		vs = append(vs, fmt.Sprintf("%d bindings: %d requests and %d replies in %d Steps, p50 %v", v.n, v.reqs, v.replies, v.steps, us(v.p50)))
	}
	for _, p := range phases {
		if p.client == "latent" {
			oneRT = oneRT && p.visits > 0 && p.reqs <= int64(p.visits)+1 && p.reqs >= int64(p.visits)-1
		}
	}
	fmt.Fprintf(w, "| a visit to an empty consumer: one round trip | %v; in every `Run` window requests = visits ±1 | %s |\n", vs, metStr(oneRT))
}
