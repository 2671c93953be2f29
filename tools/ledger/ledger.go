package ledger

import (
	"slices"
	"sync"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
)

// Key names one event: the binding it was published for and its stream
// sequence.
type Key struct {
	Binding string
	Seq     uint64
}

// Settlement is what the runtime reported of the step of one delivery.
type Settlement struct {
	Result  trigger.StepResult
	Outcome trigger.Outcome
	Action  pull.Action
	Ack     pull.AckState
	Error   trigger.ErrorClass
}

// Delivery is one delivery of an event: whether the host's function ran on
// it, and the runtime's settlement of it (nil until reported, and for ever
// when the runtime's process died during the step). Kills is how many
// kills of the broker the ledger had recorded (Killing) when the delivery
// was recorded: a kill after it is one that may have lost its settlement.
type Delivery struct {
	Delivered uint64
	Ran       bool
	Settled   *Settlement
	Kills     int
}

// Ledger is the record of one scenario. It is safe for concurrent use: the
// host's function, the step observer and the publisher may run on
// different goroutines, and runtimes of several installations (a restart at
// the next epoch, two processes) may report into one.
type Ledger struct {
	bindings   []string          // binding ID by configuration index
	maxDeliver map[string]uint64 // the configuration's max_deliver by binding ID

	mu         sync.Mutex
	published  map[Key]bool
	last       map[string]uint64 // last sequence published per binding
	order      []Key             // published keys in order
	deliveries map[Key][]Delivery
	kills      int // kills of the broker recorded (Killing)
	reports    int
	badReports int // reports naming a binding index outside the configuration
}

// New returns an empty ledger for installations of cfg: step reports name
// bindings by their index in cfg.Bindings.
func New(cfg trigger.Config) *Ledger {
	ids := make([]string, len(cfg.Bindings))
	maxDeliver := make(map[string]uint64, len(cfg.Bindings))
	for i, b := range cfg.Bindings {
		ids[i] = b.ID
		maxDeliver[b.ID] = uint64(max(b.MaxDeliver, 0))
	}
	return &Ledger{
		bindings:   ids,
		maxDeliver: maxDeliver,
		published:  make(map[Key]bool),
		last:       make(map[string]uint64),
		deliveries: make(map[Key][]Delivery),
	}
}

// Published records an event stored for binding at stream sequence seq
// (after the broker's acknowledgement of the publish).
func (l *Ledger) Published(binding string, seq uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := Key{binding, seq}
	if l.published[k] {
		return
	}
	l.published[k] = true
	l.order = append(l.order, k)
	l.last[binding] = max(l.last[binding], seq)
}

// Activated records that the host's function ran on a delivery: call it
// from the function, before it returns.
func (l *Ledger) Activated(binding string, seq, delivered uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := Key{binding, seq}
	d := l.deliveries[k]
	if n := len(d) - 1; n >= 0 && d[n].Delivered == delivered && !d[n].Ran && d[n].Settled == nil {
		d[n].Ran, d[n].Kills = true, l.kills
		return
	}
	l.deliveries[k] = append(d, Delivery{Delivered: delivered, Ran: true, Kills: l.kills})
}

// Killing records that the broker's process is about to be killed: it may
// come back with its state as last written to disk, without settlements
// it had taken. Call it before the kill, so that every delivery recorded
// before the call is counted as before it (see Verdict.DroppedRetries).
func (l *Ledger) Killing() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.kills++
}

// ObserveStep records the runtime's report of a step (it makes a Ledger a
// trigger.StepObserver). A step that delivered settles the latest
// unsettled delivery of its event with the same delivery count, or adds a
// delivery on which the function did not run (the host refused it before
// the function, or the owner stopped first). Steps that delivered nothing
// are counted only.
func (l *Ledger) ObserveStep(r trigger.StepReport) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reports++
	if r.Delivered == 0 {
		return
	}
	if r.Binding < 0 || r.Binding >= len(l.bindings) {
		l.badReports++
		return
	}
	k := Key{l.bindings[r.Binding], r.StreamSeq}
	s := &Settlement{Result: r.Result, Outcome: r.Outcome, Action: r.Action, Ack: r.Ack, Error: r.Error}
	d := l.deliveries[k]
	if n := len(d) - 1; n >= 0 && d[n].Delivered == r.Delivered && d[n].Settled == nil {
		d[n].Settled = s
		return
	}
	l.deliveries[k] = append(d, Delivery{Delivered: r.Delivered, Settled: s, Kills: l.kills})
}

// Deliveries returns a copy of the deliveries of one event, in order.
func (l *Ledger) Deliveries(k Key) []Delivery {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.deliveries[k])
}

// LastPublished returns the last sequence published for binding, 0 when
// none.
func (l *Ledger) LastPublished(binding string) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last[binding]
}

// Bindings returns the binding IDs in configuration order.
func (l *Ledger) Bindings() []string { return slices.Clone(l.bindings) }

// Host returns h as a trigger.Host that also reports every step to l. A
// host that observes steps itself is wrapped so that both see them.
func (l *Ledger) Host(h trigger.Host) trigger.Host { return &observed{Host: h, l: l} }

type observed struct {
	trigger.Host
	l *Ledger
}

func (o *observed) ObserveStep(r trigger.StepReport) {
	o.l.ObserveStep(r)
	if inner, ok := o.Host.(trigger.StepObserver); ok {
		inner.ObserveStep(r)
	}
}
