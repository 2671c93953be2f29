package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// row is one binding's line of the final table: what the monitor counted.
type row struct {
	Binding   string
	Tenant    string
	Delivered uint64
	Acked     uint64
	Termed    uint64
	Nacked    uint64
	Exhausted uint64
	Uncertain uint64
}

// rowOf returns binding b's row from its counts.
func rowOf(b trigger.Binding, c trigger.Counts) row {
	return row{
		Binding: b.ID, Tenant: b.Tenant,
		Delivered: c.Delivered, Acked: c.Acked, Termed: c.Termed,
		Nacked: c.Nacked, Exhausted: c.Exhausted, Uncertain: c.Uncertain,
	}
}

// settled returns the terminal commands of a row: +ACK, +TERM and the
// exhausted +TERM.
func (r row) settled() uint64 { return r.Acked + r.Termed + r.Exhausted }

// columns returns the row's counts with their column names, in table
// order.
func (r row) columns() [numColumns]column {
	return [numColumns]column{
		{"delivered", r.Delivered},
		{"acked", r.Acked},
		{"termed", r.Termed},
		{"nacked", r.Nacked},
		{"exhausted", r.Exhausted},
		{"uncertain", r.Uncertain},
	}
}

// numColumns is the number of count columns of the table.
const numColumns = 6

// column is one named count of a row.
type column struct {
	Name  string
	Value uint64
}

// consumerState is what the broker says of one binding's consumer after
// the run, read with the tenant's administrator credentials.
type consumerState struct {
	Binding string
	// Checked is false when the consumer info could not be had.
	Checked    bool
	Pending    uint64
	AckPending int
}

// summary is the outcome of one run of the scenario.
type summary struct {
	// Rows holds one row per binding, in configuration order.
	Rows []row
	// Events is the number of events published, Settled how many of them
	// reached a terminal outcome (+ACK, +TERM or exhausted) before the
	// runtime was stopped.
	Events, Settled uint64
	// Elapsed is how long the runtime ran.
	Elapsed time.Duration
	// Last is the monitor's last-step report (HasLast false when none).
	Last    trigger.StepReport
	HasLast bool
	// Consumers is the broker's view of each binding's consumer.
	Consumers []consumerState
	// Usage is what the shared pools held after the runtime was closed,
	// Host what the reference host held once idle.
	Usage trigger.Usage
	Host  refhost.Stats
	// Guest is what the guest's activations showed; GuestLive the
	// instances still open once the host was idle.
	Guest     activationCounts
	GuestLive int
}

// verify compares a run with the expected rows and activations and returns
// an *outcomeError listing every difference, or nil: each binding's counts
// exactly, every event settled, every consumer with nothing pending or
// awaiting acknowledgement, every pool and host reservation returned, and
// the guest's activations and ok results exactly as many as wantGuest
// says, each activation in a fresh instance, each ok result counting one
// call, no instance left open.
func verify(s summary, want []row, wantGuest activationCounts) error {
	var ps []problem
	add := func(what string, want, got uint64) {
		if want != got {
			ps = append(ps, problem{What: what, Want: want, Got: got})
		}
	}
	add("bindings", uint64(len(want)), uint64(len(s.Rows)))
	for i := range min(len(want), len(s.Rows)) {
		w, g := want[i].columns(), s.Rows[i].columns()
		for j := range w {
			add(want[i].Binding+" "+w[j].Name, w[j].Value, g[j].Value)
		}
	}
	add("events settled", s.Events, s.Settled)
	for _, c := range s.Consumers {
		if !c.Checked {
			add("consumer of "+c.Binding+" inspected", 1, 0)
			continue
		}
		add("consumer of "+c.Binding+" num_pending", 0, c.Pending)
		add("consumer of "+c.Binding+" num_ack_pending", 0, uint64(c.AckPending))
	}
	add("pool bytes", 0, uint64(s.Usage.Bytes))
	add("pool requests", 0, uint64(s.Usage.Requests))
	add("pool clients", 0, uint64(s.Usage.Clients))
	add("pool connections", 0, uint64(s.Usage.Connections))
	add("host admission slots", 0, uint64(s.Host.Slots))
	add("host input bytes", 0, uint64(s.Host.InputBytes))
	add("host guest memory bytes", 0, uint64(s.Host.MemoryBytes))
	add("host functions running", 0, uint64(s.Host.Running))
	// Freshness is checked against the run's own totals, so that a
	// reused instance is named even when the totals are off too.
	add("guest activations", wantGuest.Activations, s.Guest.Activations)
	add("guest activations in a fresh instance", s.Guest.Activations, s.Guest.Fresh)
	add("guest ok results", wantGuest.Counted, s.Guest.Counted)
	add("guest ok results counting one call", s.Guest.Counted, s.Guest.One)
	add("guest instances live", 0, uint64(s.GuestLive))
	if len(ps) > 0 {
		return &outcomeError{Problems: ps}
	}
	return nil
}

// writeTable writes the rows and their total as an aligned table.
func writeTable(w io.Writer, rows []row) {
	width := len("binding")
	tw := len("tenant")
	for _, r := range rows {
		width = max(width, len(r.Binding))
		tw = max(tw, len(r.Tenant))
	}
	var total row
	total.Binding = "total"
	var b strings.Builder
	fmt.Fprintf(&b, "  %-*s  %-*s", width, "binding", tw, "tenant")
	for _, c := range total.columns() {
		fmt.Fprintf(&b, "  %9s", c.Name)
	}
	b.WriteByte('\n')
	line := func(r row) {
		fmt.Fprintf(&b, "  %-*s  %-*s", width, r.Binding, tw, r.Tenant)
		for _, c := range r.columns() {
			fmt.Fprintf(&b, "  %9d", c.Value)
		}
		b.WriteByte('\n')
	}
	for _, r := range rows {
		line(r)
		total.Delivered += r.Delivered
		total.Acked += r.Acked
		total.Termed += r.Termed
		total.Nacked += r.Nacked
		total.Exhausted += r.Exhausted
		total.Uncertain += r.Uncertain
	}
	line(total)
	io.WriteString(w, b.String())
}

// bindingName returns the ID of binding i, or its index when out of range.
func bindingName(bindings []trigger.Binding, i int) string {
	if i >= 0 && i < len(bindings) {
		return bindings[i].ID
	}
	return fmt.Sprintf("binding %d", i)
}

// writeLastStep writes the monitor's last-step report: every field of the
// fixed-size report, no payload, broker text or secret (there is none in
// it).
func writeLastStep(w io.Writer, bindings []trigger.Binding, r trigger.StepReport, ok bool) {
	if !ok {
		fmt.Fprintln(w, "last step: none (no step delivered a message or failed)")
		return
	}
	fmt.Fprintln(w, "last step (the monitor's one fixed-size report):")
	fmt.Fprintf(w, "  step %d, configuration epoch %d, binding %d (%s), result %s\n",
		r.Step, r.Epoch, r.Binding, bindingName(bindings, r.Binding), r.Result)
	fmt.Fprintf(w, "  stream seq %d, delivery %d, route generation %d\n", r.StreamSeq, r.Delivered, r.RouteGeneration)
	fmt.Fprintf(w, "  outcome %s, action %s, ack %s, error %s\n", outcomeName(r.Outcome), actionName(r.Action), r.Ack, r.Error)
}

// outcomeName is o's name, "-" for none.
func outcomeName(o trigger.Outcome) string {
	if o == 0 {
		return "-"
	}
	return o.String()
}

// actionName is a's name, "-" for none.
func actionName(a pull.Action) string {
	if a == 0 {
		return "-"
	}
	return a.String()
}

// progressLine formats one step report as a progress line: when, binding,
// stream sequence, delivery count of max_deliver, outcome, action and
// acknowledgement state, and the kind of event the demo published at that
// sequence (kind 0 when unknown). It never holds payload bytes.
func progressLine(since time.Duration, bindings []trigger.Binding, r trigger.StepReport, kind eventKind) string {
	name := bindingName(bindings, r.Binding)
	if r.Result != trigger.ResultDelivered {
		return fmt.Sprintf("  %7.3fs  %-16s %s: %s", since.Seconds(), name, r.Result, r.Error)
	}
	md := 0
	if r.Binding >= 0 && r.Binding < len(bindings) {
		md = bindings[r.Binding].MaxDeliver
	}
	s := fmt.Sprintf("  %7.3fs  %-16s seq %-3d delivery %d/%d  %-17s -> %-9s ack %s",
		since.Seconds(), name, r.StreamSeq, r.Delivered, md, outcomeName(r.Outcome), actionName(r.Action), r.Ack)
	if r.Error != 0 {
		s += " (" + r.Error.String() + ")"
	}
	if kind != 0 {
		s += "  [" + kind.String() + "]"
	}
	return s
}

// unshownLine formats the deliveries of one binding that happened between
// two samples of the monitor without being its last-step report: how many,
// and what was sent for them.
func unshownLine(binding string, d row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %8s  %-16s +%d %s between samples:", "", binding, d.Delivered, plural(d.Delivered, "delivery", "deliveries"))
	sep := " "
	cols := d.columns()
	for _, c := range cols[1:] {
		if c.Value > 0 {
			fmt.Fprintf(&b, "%s%d %s", sep, c.Value, c.Name)
			sep = ", "
		}
	}
	if sep == " " {
		b.WriteString(" nothing sent yet")
	}
	return b.String()
}

// plural returns one when n is 1, else many.
func plural(n uint64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// totalsLine formats the counts of all bindings at one moment and how many
// of the events published have settled.
func totalsLine(since time.Duration, rows []row, settled, events uint64) string {
	var t row
	for _, r := range rows {
		t.Delivered += r.Delivered
		t.Acked += r.Acked
		t.Termed += r.Termed
		t.Nacked += r.Nacked
		t.Exhausted += r.Exhausted
		t.Uncertain += r.Uncertain
	}
	return fmt.Sprintf("  %6.2fs  delivered %d, acked %d, termed %d, nacked %d, exhausted %d, uncertain %d; %d of %d events settled",
		since.Seconds(), t.Delivered, t.Acked, t.Termed, t.Nacked, t.Exhausted, t.Uncertain, settled, events)
}

// settledOf returns how many events have settled: per binding the
// terminal commands, capped at that binding's events when perBinding is
// given (a redelivered, settled-again event would otherwise count twice).
func settledOf(rows []row, perBinding []uint64) uint64 {
	var n uint64
	for i, r := range rows {
		s := r.settled()
		if i < len(perBinding) {
			s = min(s, perBinding[i])
		}
		n += s
	}
	return n
}

// lockedWriter serialises the writes of the demo's progress lines and of
// the runtime's log, which come from two goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// logLines writes each record of the runtime's log (slog writes one record
// a call) after "  log ", through the same lock as the progress lines.
type logLines struct{ lw *lockedWriter }

func (l *logLines) Write(p []byte) (int, error) {
	l.lw.mu.Lock()
	defer l.lw.mu.Unlock()
	if _, err := io.WriteString(l.lw.w, "  log "); err != nil {
		return 0, err
	}
	return l.lw.w.Write(p)
}
