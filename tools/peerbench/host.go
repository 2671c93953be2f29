package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"
)

// hostTick is the period of the host goroutine's ticker.
const hostTick = time.Millisecond

// hostSample is one loop's run beside a host goroutine: how late that
// goroutine's ticker fired while the loop ran.
type hostSample struct {
	steps int
	late  []time.Duration // one per tick received, sorted
}

// measureHost runs up to n steps of l within bound while another goroutine,
// standing for the embedding host's own work, receives from a 1 ms ticker
// and records how late each tick is taken (its receipt time minus the
// tick's time). A client that keeps the goroutine's processor while it
// waits for the broker delays that goroutine's timers and turns.
func measureHost(ctx context.Context, l stepper, n int, bound time.Duration) (hostSample, error) {
	stop := make(chan struct{})
	done := make(chan []time.Duration, 1)
	maxTicks := int(bound/hostTick) + 1
	go func() {
		t := time.NewTicker(hostTick)
		defer t.Stop()
		late := make([]time.Duration, 0, min(maxTicks, 1<<16))
		for {
			select {
			case <-stop:
				done <- late
				return
			case at := <-t.C:
				if len(late) < cap(late) {
					late = append(late, time.Since(at))
				}
			}
		}
	}()
	s, err := measureLoop(ctx, l, n, bound, make([]time.Duration, n))
	close(stop)
	h := hostSample{steps: s.steps, late: <-done}
	slices.Sort(h.late)
	return h, err
}

// printHostReport writes the host goroutine's ticker lateness per loop.
func printHostReport(w io.Writer, loops []*loop) {
	if len(loops) == 0 || loops[0].host.steps == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "another goroutine's %v ticker while each loop runs (GOMAXPROCS %d): how late its ticks were taken\n", hostTick, runtime.GOMAXPROCS(0))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| loop | visits | ticks | p50 | p99 | max |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	for _, l := range loops {
		h := l.host
		if len(h.late) == 0 {
			fmt.Fprintf(w, "| %s | %d | 0 | - | - | - |\n", l.name, h.steps)
			continue
		}
		fmt.Fprintf(w, "| %s | %d | %d | %v | %v | %v |\n", l.name, h.steps, len(h.late),
			us(percentile(h.late, 50)), us(percentile(h.late, 99)), us(h.late[len(h.late)-1]))
	}
}
