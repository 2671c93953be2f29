package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
)

const (
	// sampleEvery is how often the demo reads the monitor while the
	// runtime runs: each new last-step report becomes a progress line.
	sampleEvery = 2 * time.Millisecond
	// tickEvery is how often a line of running totals is written.
	tickEvery = time.Second
)

// observer turns monitor samples into progress lines. The monitor keeps one
// last-step report, not a log, so deliveries that happen between two
// samples are written as one line of counts per binding.
type observer struct {
	w          io.Writer
	start      time.Time
	bindings   []trigger.Binding
	kinds      map[seqKey]eventKind
	perBinding []uint64
	events     uint64

	lastStep uint64
	rows     []row
	nextTick time.Time
}

func newObserver(w io.Writer, start time.Time, bindings []trigger.Binding, pub []published) *observer {
	o := &observer{
		w: w, start: start, bindings: bindings,
		kinds:      make(map[seqKey]eventKind, len(pub)),
		perBinding: make([]uint64, len(bindings)),
		rows:       make([]row, len(bindings)),
		nextTick:   start.Add(tickEvery),
	}
	for _, p := range pub {
		o.kinds[seqKey{p.Binding, p.Seq}] = p.Kind
		o.perBinding[p.Binding]++
		o.events++
	}
	for i, b := range bindings {
		o.rows[i] = row{Binding: b.ID, Tenant: b.Tenant}
	}
	return o
}

// stepRow returns what one step's report adds to its binding's row, as
// the monitor counts it.
func stepRow(r trigger.StepReport) row {
	var d row
	if r.Delivered > 0 {
		d.Delivered = 1
	}
	if r.Ack != pull.AckNone && r.Ack != 0 {
		switch r.Action {
		case pull.ActionAck:
			d.Acked = 1
		case pull.ActionTerm:
			d.Termed = 1
		case pull.ActionNak:
			d.Nacked = 1
		case pull.ActionExhausted:
			d.Exhausted = 1
		}
	}
	if r.Ack == pull.AckUncertain {
		d.Uncertain = 1
	}
	return d
}

// sub returns a - b column by column (the counts only grow, so b <= a).
func sub(a, b row) row {
	return row{
		Binding: a.Binding, Tenant: a.Tenant,
		Delivered: a.Delivered - b.Delivered, Acked: a.Acked - b.Acked, Termed: a.Termed - b.Termed,
		Nacked: a.Nacked - b.Nacked, Exhausted: a.Exhausted - b.Exhausted, Uncertain: a.Uncertain - b.Uncertain,
	}
}

// sample reads the monitor once and writes what happened since the last
// sample: the new last-step report, if any, and a line for deliveries no
// report showed; and once per tickEvery a line of totals.
func (o *observer) sample(mon *trigger.Monitor, now time.Time) {
	snap := mon.Snapshot()
	last, ok := mon.LastStep()
	// A report newer than the snapshot belongs to the next sample.
	fresh := ok && last.Step != o.lastStep && last.Step <= snap.Steps
	rows := make([]row, len(o.bindings))
	for i, b := range o.bindings {
		rows[i] = rowOf(b, snap.Bindings[i])
	}
	for i := range rows {
		d := sub(rows[i], o.rows[i])
		if fresh && last.Binding == i {
			d = sub(d, stepRow(last))
		}
		if d.Delivered > 0 {
			fmt.Fprintln(o.w, unshownLine(o.bindings[i].ID, d))
		}
	}
	if fresh {
		o.lastStep = last.Step
		fmt.Fprintln(o.w, progressLine(last.At.Sub(o.start), o.bindings, last, o.kinds[seqKey{last.Binding, last.StreamSeq}]))
	}
	o.rows = rows
	if !now.Before(o.nextTick) {
		o.nextTick = o.nextTick.Add(tickEvery)
		fmt.Fprintln(o.w, totalsLine(now.Sub(o.start), rows, settledOf(rows, o.perBinding), o.events))
	}
}

// settled reports whether every event reached a terminal outcome.
func (o *observer) settled() bool {
	return settledOf(o.rows, o.perBinding) >= o.events
}

// runPhase runs the runtime with Run on its own goroutine until every
// published event reached a terminal outcome, until limit passes or until
// ctx is done, whichever is first, writing progress to w. It returns once
// Run has returned. The error is errInterrupted when ctx ended it,
// errRuntime when Run failed; reaching the limit is not an error here (the
// summary shows what did not settle).
func runPhase(ctx context.Context, w io.Writer, trig *trigger.Triggers, host trigger.Host, o *observer, limit time.Duration) (time.Duration, error) {
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- trig.Run(runCtx, host) }()

	mon := trig.Monitor()
	ticker := time.NewTicker(sampleEvery)
	defer ticker.Stop()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()

	finish := func(reason string) (time.Duration, error) {
		stop()
		err := <-done
		now := time.Now()
		o.sample(mon, now)
		elapsed := now.Sub(o.start)
		switch {
		case ctx.Err() != nil:
			return elapsed, fmt.Errorf("%w: %w", errInterrupted, ctx.Err())
		case err != nil:
			return elapsed, fmt.Errorf("%w: %w", errRuntime, err)
		}
		fmt.Fprintf(w, "%s after %.2fs; the runtime stopped\n", reason, elapsed.Seconds())
		return elapsed, nil
	}
	for {
		select {
		case err := <-done:
			// Run returned on its own: an error, or ctx ended.
			done <- err
			return finish("the runtime returned")
		case <-ctx.Done():
			return finish("interrupted")
		case <-deadline.C:
			return finish(fmt.Sprintf("deadline of %v reached with events unsettled", limit))
		case now := <-ticker.C:
			o.sample(mon, now)
			if o.settled() {
				return finish(fmt.Sprintf("all %d events settled", o.events))
			}
		}
	}
}

// isInterrupt reports whether err says the demo was interrupted.
func isInterrupt(err error) bool {
	return errors.Is(err, errInterrupted)
}
