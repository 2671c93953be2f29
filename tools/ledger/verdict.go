package ledger

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
)

// ConsumerView is the broker's view of one binding's consumer, as its
// administrator reads it from consumer info.
type ConsumerView struct {
	Binding string
	// AckFloor is the ack floor's stream sequence: reported, not judged.
	// The broker writes a consumer's state to disk asynchronously, so
	// after a crash it may restore a floor below messages a work-queue
	// stream already removed, with nothing left to move it.
	AckFloor       uint64
	NumPending     uint64
	NumAckPending  uint64
	NumRedelivered uint64
	// Left counts the binding's messages its stream still holds where
	// the stream's retention removes a settled one (work-queue,
	// interest): a message the runtime never settled, or one the broker
	// gave up on. A limits stream keeps every message, and its view
	// reports 0 (see ReadView).
	Left uint64
	// LeftSeqs are the stream sequences of the first of those messages,
	// at most MaxLeftRead (see ReadView): what the ledger checks them
	// against.
	LeftSeqs []uint64
}

// MaxLeftRead is how many of a binding's messages left in its stream
// ReadView reads the sequences of.
const MaxLeftRead = 64

// Reexecution is one run of the host's function on an event that it had
// run on before, with the cause: what the runtime knew of the settlement of
// the delivery before it.
type Reexecution struct {
	Key       Key
	Delivered uint64
	Cause     Cause
}

// Verdict is what a ledger concludes.
type Verdict struct {
	// Published counts events; Executions counts runs of the host's
	// function; Deliveries counts deliveries (with or without a run).
	Published  int
	Executions int
	Deliveries int
	// Reports counts the step reports observed.
	Reports int
	// Lost lists events published and never delivered.
	Lost []Key
	// Unsettled lists the consumers whose final view still has something
	// pending, something awaiting an acknowledgement, or a message of the
	// binding left in a stream that removes settled ones; bindings
	// without a view given to Verdict are listed with a zero view, and
	// in Unread.
	Unsettled []ConsumerView
	// LeftUnsettled lists each message an unsettled consumer's stream
	// still holds that KeptAfterAck, DroppedRetries and GivenUp do not
	// set aside, as far as its sequences were read, with what the ledger
	// knows of it: what tells a message given up at max_deliver from one
	// whose acknowledgement the broker lost.
	LeftUnsettled []LeftMessage
	// Unread lists the bindings that had events published and no view
	// given to Verdict: the broker's state of those is not known.
	Unread []string
	// KeptAfterAck lists messages a work-queue stream still holds though
	// the runtime ran them, the broker's receipt verified their ACK or
	// TERM, and the consumer recorded it (at or below its ack floor,
	// nothing pending or awaiting an acknowledgement): the broker's
	// state, not the runtime's.
	// After a kill, nats-server 2.14.6 rebuilds a stream whose state file
	// is older than its last block ("Stream state outdated, last block has
	// additional entries, will rebuild") and restores messages it had
	// removed on their acknowledgement, while the consumer's floor stays
	// past them: they are never delivered again, and never removed. A
	// consumer whose only messages left are of the kinds set aside here
	// (this, DroppedRetries and GivenUp) is settled.
	KeptAfterAck []Key
	// DroppedRetries lists messages a work-queue stream still holds whose
	// last delivery the function ran and asked to retry, the broker's
	// receipt verifying the NAK, below the binding's max_deliver, and
	// whose delivery began before a kill of the broker (Ledger.Killing),
	// while the consumer holds nothing pending and nothing awaiting an
	// acknowledgement: by the consumer's state no redelivery is owed.
	// After a kill, nats-server 2.14.6 was seen to restore a consumer's
	// state without a message it had NAK'd, so the retry is never made.
	// Redeliveries the broker sent up to max_deliver that all failed to
	// reach the runtime would look the same; the listing gives the last
	// delivery count the runtime saw.
	DroppedRetries []LeftMessage
	// GivenUp lists messages a work-queue stream still holds whose last
	// delivery, exactly the binding's max_deliver-th, the function ran and
	// the runtime gave up on (ActionExhausted) with a TERM the link lost
	// (its receipt uncertain, or not sent because the connection failed),
	// at or below the consumer's floor with nothing pending and nothing
	// awaiting an acknowledgement: the broker gave up on its own at
	// max_deliver, the end the TERM asked for, and announced it with its
	// MAX_DELIVERIES advisory (a dead letter; see docs/DEADLETTERS.md),
	// and a work-queue stream keeps such a message. That is the broker's
	// documented behaviour, not a broken promise.
	GivenUp []LeftMessage
	// Foreign lists events delivered that were never published.
	Foreign []Key
	// Reexecutions lists every re-execution with its cause; ByCause
	// counts them, indexed by Cause (index 0 unused).
	Reexecutions []Reexecution
	ByCause      [NumCauses + 1]int
	// AfterVerified lists the re-executions that followed a verified
	// ACK or TERM: the critical figure.
	AfterVerified []Reexecution
	// BadReports counts step reports naming a binding outside the
	// configuration.
	BadReports int
}

// Verdict draws the verdict from the record and the consumers' final
// views (one per binding that had events published).
func (l *Ledger) Verdict(views []ConsumerView) Verdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := Verdict{Published: len(l.order), Reports: l.reports, BadReports: l.badReports}
	for _, k := range l.order {
		if len(l.deliveries[k]) == 0 {
			v.Lost = append(v.Lost, k)
		}
	}
	keys := make([]Key, 0, len(l.deliveries))
	for k := range l.deliveries {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b Key) int {
		if c := strings.Compare(a.Binding, b.Binding); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	for _, k := range keys {
		ds := l.deliveries[k]
		v.Deliveries += len(ds)
		if !l.published[k] {
			v.Foreign = append(v.Foreign, k)
		}
		ran := false
		for i, d := range ds {
			if !d.Ran {
				continue
			}
			v.Executions++
			if ran {
				re := Reexecution{Key: k, Delivered: d.Delivered, Cause: causeOf(ds[i-1].Settled)}
				v.Reexecutions = append(v.Reexecutions, re)
				v.ByCause[re.Cause]++
				if re.Cause == CauseAfterVerified {
					v.AfterVerified = append(v.AfterVerified, re)
				}
			}
			ran = true
		}
	}
	byBinding := make(map[string]ConsumerView, len(views))
	for _, cv := range views {
		byBinding[cv.Binding] = cv
	}
	bindings := make([]string, 0, len(l.last))
	for b := range l.last {
		bindings = append(bindings, b)
	}
	slices.Sort(bindings)
	for _, b := range bindings {
		cv, ok := byBinding[b]
		if !ok {
			v.Unread = append(v.Unread, b)
		}
		sorted := l.sortLeft(cv)
		if !ok || !sorted.settled {
			cv.Binding = b // no view: listed as a zero view
			v.Unsettled = append(v.Unsettled, cv)
			v.LeftUnsettled = append(v.LeftUnsettled, sorted.left...)
			continue
		}
		v.KeptAfterAck = append(v.KeptAfterAck, sorted.kept...)
		v.DroppedRetries = append(v.DroppedRetries, sorted.dropped...)
		v.GivenUp = append(v.GivenUp, sorted.givenUp...)
	}
	return v
}

// LeftMessage is a message left in a stream, with the ledger's record of
// it: how many deliveries ran the function, the last delivery seen (its
// count, 0 when none), and the runtime's settlement of the last delivery
// it reported (nil when none).
type LeftMessage struct {
	Key       Key
	Runs      int
	Delivered uint64
	Last      *Settlement
}

func (m LeftMessage) String() string {
	last := "no settlement reported"
	if m.Last != nil {
		last = fmt.Sprintf("last %v, ack %v", m.Last.Action, m.Last.Ack)
	}
	return fmt.Sprintf("%s seq %d, ran %d times, last delivery %d, %s", m.Key.Binding, m.Key.Seq, m.Runs, m.Delivered, last)
}

// leftSorted is a consumer's messages left, sorted by sortLeft.
type leftSorted struct {
	kept    []Key
	dropped []LeftMessage
	givenUp []LeftMessage
	left    []LeftMessage
	settled bool
}

// sortLeft sorts the messages cv's stream still holds: those kept after
// their acknowledgement (see Verdict.KeptAfterAck: the runtime ran them,
// their ACK or TERM was verified, and they are at or below the consumer's
// floor), the retries the broker dropped (Verdict.DroppedRetries), those
// the broker gave up on at max_deliver (Verdict.GivenUp), and the others,
// described with what the ledger knows of them. The consumer is settled
// when nothing is pending, nothing awaits an acknowledgement, every
// message left was read and none is of the others. l.mu is held.
func (l *Ledger) sortLeft(cv ConsumerView) leftSorted {
	var r leftSorted
	idle := cv.NumPending == 0 && cv.NumAckPending == 0
	for _, seq := range cv.LeftSeqs {
		k := Key{Binding: cv.Binding, Seq: seq}
		ds := l.deliveries[k]
		belowFloor := seq <= cv.AckFloor
		if belowFloor && slices.ContainsFunc(ds, settledVerified) {
			r.kept = append(r.kept, k)
			continue
		}
		m := LeftMessage{Key: k}
		for _, d := range ds {
			if d.Ran {
				m.Runs++
			}
			m.Delivered = max(m.Delivered, d.Delivered)
			if d.Settled != nil {
				m.Last = d.Settled
			}
		}
		switch {
		case !idle || len(ds) == 0:
			r.left = append(r.left, m)
		case l.retryOwed(cv.Binding, ds[len(ds)-1]):
			r.dropped = append(r.dropped, m)
		case belowFloor && l.exhausted(cv.Binding, ds[len(ds)-1]):
			r.givenUp = append(r.givenUp, m)
		default:
			r.left = append(r.left, m)
		}
	}
	r.settled = idle && uint64(len(cv.LeftSeqs)) == cv.Left && len(r.left) == 0
	return r
}

// retryOwed reports whether last, a binding's last delivery of a message,
// left the broker owing a redelivery that a kill may have lost: the
// function ran, the broker's receipt verified the NAK, the delivery was
// below the binding's max_deliver, and a kill was recorded after it began.
// l.mu is held.
func (l *Ledger) retryOwed(binding string, last Delivery) bool {
	s := ranAndSettled(last, pull.ActionNak)
	return s != nil && s.Ack.Verified() && last.Delivered < l.maxDeliver[binding] && last.Kills < l.kills
}

// exhausted reports whether last, a binding's last delivery of a message,
// was its max_deliver-th, the function ran on it, and the runtime gave up
// on it (ActionExhausted) with a TERM that the link lost: its receipt
// uncertain, or nothing sent because the connection failed. A TERM not
// sent for any other reason (the runtime's own failure) does not count.
// The broker then gives up on its own. l.mu is held.
func (l *Ledger) exhausted(binding string, last Delivery) bool {
	s := ranAndSettled(last, pull.ActionExhausted)
	if s == nil || !(s.Ack == pull.AckUncertain || s.Ack == pull.AckNone && s.Error == trigger.ClassConnection) {
		return false
	}
	m := l.maxDeliver[binding]
	return m > 0 && last.Delivered == m
}

// settledVerified reports a delivery the function ran whose ACK or TERM
// (exhausted included) the broker's receipt verified: the one settlement
// after which a message left in a work-queue stream is the broker's state
// alone. A message given up otherwise (its last command uncertain at
// max_deliver, say) is not.
func settledVerified(d Delivery) bool {
	s := ranAndSettled(d, pull.ActionAck, pull.ActionTerm, pull.ActionExhausted)
	return s != nil && s.Ack.Verified()
}

// ranAndSettled returns d's settlement when the function ran on d and the
// runtime settled it with one of actions; nil otherwise.
func ranAndSettled(d Delivery, actions ...pull.Action) *Settlement {
	if !d.Ran || d.Settled == nil || !slices.Contains(actions, d.Settled.Action) {
		return nil
	}
	return d.Settled
}

// Settled reports whether a consumer's view shows everything settled:
// nothing pending, nothing awaiting an acknowledgement, nothing of the
// binding left in a stream that removes settled messages. The ack floor
// is not judged (see ConsumerView.AckFloor): with nothing pending and
// nothing awaiting an acknowledgement, every message of the binding the
// stream holds was delivered and acknowledged, and the ledger checks
// that every event published was delivered. The ledger also sets aside
// the messages left that it saw run and the consumer recorded as
// acknowledged (Verdict.KeptAfterAck), the retries the broker dropped
// (Verdict.DroppedRetries) and the messages it gave up on at max_deliver
// (Verdict.GivenUp); this method, without the ledger, does not.
func (cv ConsumerView) Settled() bool {
	return cv.NumPending == 0 && cv.NumAckPending == 0 && cv.Left == 0
}

// ErrNoLoss returns nil when nothing was lost (every event delivered, every
// consumer settled), nothing foreign was delivered and every report named
// a binding of the configuration; else a *VerdictError. Re-executions
// after a verified acknowledgement are not counted here: use it where the
// broker does not promise that an acknowledgement survives the fault.
func (v Verdict) ErrNoLoss() error {
	if len(v.Lost) > 0 || len(v.Unsettled) > 0 || len(v.Foreign) > 0 || v.BadReports > 0 {
		return &VerdictError{Verdict: v}
	}
	return nil
}

// Err is ErrNoLoss that also fails on any re-execution after a verified
// acknowledgement, on any message kept in its stream after its
// acknowledgement (KeptAfterAck: the removal the acknowledgement made did
// not survive either) and on any retry the broker dropped after its
// verified NAK (DroppedRetries): use it wherever the broker promises that
// a verified acknowledgement survives the fault. A message the broker
// gave up on at max_deliver (GivenUp) fails neither: no receipt promised
// anything of it.
func (v Verdict) Err() error {
	if err := v.ErrNoLoss(); err != nil {
		return err
	}
	if len(v.AfterVerified) > 0 || len(v.KeptAfterAck) > 0 || len(v.DroppedRetries) > 0 {
		return &VerdictError{Verdict: v}
	}
	return nil
}

// String formats the verdict in a few lines: the figures, the
// re-executions by cause, and every loss.
func (v Verdict) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "published %d, deliveries %d, executions %d, re-executions %d, after a verified ack %d, lost %d, unsettled consumers %d, kept after their ack %d, retries dropped %d, given up at max_deliver %d, foreign %d",
		v.Published, v.Deliveries, v.Executions, len(v.Reexecutions), len(v.AfterVerified), len(v.Lost), len(v.Unsettled), len(v.KeptAfterAck), len(v.DroppedRetries), len(v.GivenUp), len(v.Foreign))
	if len(v.Reexecutions) > 0 {
		b.WriteString("\nre-executions by cause:")
		for c := Cause(1); int(c) <= NumCauses; c++ {
			if n := v.ByCause[c]; n > 0 {
				fmt.Fprintf(&b, " %s %d;", c, n)
			}
		}
	}
	for _, k := range v.Lost {
		fmt.Fprintf(&b, "\nlost: %s seq %d", k.Binding, k.Seq)
	}
	if len(v.KeptAfterAck) > 0 {
		fmt.Fprintf(&b, "\nkept in the stream after their acknowledgement (the broker's state: run, acknowledged, never delivered again):")
		for _, k := range v.KeptAfterAck {
			fmt.Fprintf(&b, "\nkept: %s seq %d", k.Binding, k.Seq)
		}
	}
	if len(v.DroppedRetries) > 0 {
		b.WriteString("\nretries dropped (the NAK verified, then a kill; the consumer holds nothing pending or awaiting an ack, so owes no redelivery: the broker forgot the retry, or its redeliveries up to max_deliver never reached the runtime):")
		for _, m := range v.DroppedRetries {
			fmt.Fprintf(&b, "\ndropped: %v", m)
		}
	}
	if len(v.GivenUp) > 0 {
		b.WriteString("\ngiven up at max_deliver (the link lost the last TERM; the broker gave up on its own and the work-queue stream keeps the message: a dead letter):")
		for _, m := range v.GivenUp {
			fmt.Fprintf(&b, "\ngiven up: %v", m)
		}
	}
	for _, cv := range v.Unsettled {
		if slices.Contains(v.Unread, cv.Binding) {
			fmt.Fprintf(&b, "\nunsettled: %s, no view read", cv.Binding)
			continue
		}
		fmt.Fprintf(&b, "\nunsettled: %s ack floor %d, pending %d, awaiting ack %d, left in the stream %d %v", cv.Binding, cv.AckFloor, cv.NumPending, cv.NumAckPending, cv.Left, cv.LeftSeqs)
	}
	for _, m := range v.LeftUnsettled {
		fmt.Fprintf(&b, "\nleft: %v", m)
	}
	for _, r := range v.AfterVerified {
		fmt.Fprintf(&b, "\nafter a verified ack: %s seq %d delivery %d", r.Key.Binding, r.Key.Seq, r.Delivered)
	}
	return b.String()
}
