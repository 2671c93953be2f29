package trigger

import (
	"context"
	"errors"
	"time"

	"github.com/latent-systems/latent-nats/internal/jspull"
)

// A binding whose consumer does not answer, or answers that it has no
// leader, is backed off: its visits are skipped without network
// (ClassBindingBackoff) until its wait has passed, so that the owner's one
// loop serves the bindings whose consumers answer. The wait after the n-th
// such visit in a row is the tenant dial backoff's schedule (DialBackoff
// doubling up to MaxDialBackoff, jittered down to as little as half), and
// never less than the time that visit held the loop (fairShare times it):
// a binding that keeps timing out holds the loop at most a third of the
// time, whatever the operation timeout. That floor is jittered too, up to
// half again: a fixed multiple of a fixed operation timeout would bring
// every retry back at the same phase of a periodic fault (a link that
// flaps every second, retried every three) and miss every window in which
// the consumer answers. A visit whose consumer info the broker answered
// resets it. Admission, the pools and the connection are untouched by a
// skip.

// fairShare is how many times the loop time of a failed visit the binding
// waits at least before its next visit.
const fairShare = 2

// bindingBackoff is one binding's backoff state.
type bindingBackoff struct {
	failures int
	retryAt  time.Time
}

// due reports whether the binding may be visited at now.
func (b *bindingBackoff) due(now time.Time) bool { return !now.Before(b.retryAt) }

// unanswered reports an exchange error that says the consumer did not
// answer or has no leader to answer (a pull's reply says so by its Kind:
// unansweredKind): the deadline passed (the connection kept or not),
// nothing answers on its subjects, or the cluster says the consumer's
// group has no leader (a 503 API error, nats-server 2.14.6
// JSClusterNotAvailError).
func unanswered(err error) bool {
	if err == nil {
		return false // and no allocation: ae below escapes
	}
	var ae *jspull.APIError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, jspull.ErrNoResponders) ||
		(errors.As(err, &ae) && ae.Leaderless())
}

// unansweredKind reports a pull reply that says the consumer has no
// leader to answer: a leadership change or a server shutdown (the
// unavailable class), or no responders.
func unansweredKind(k jspull.Kind) bool {
	return k.Class() == jspull.ClassUnavailable || k == jspull.KindNoResponders
}

// settleBackoff updates the binding's backoff after a visit that started
// at start and ended at end: failed (unanswered or unavailable) backs it
// off, answered resets it, anything else leaves it.
func (t *Triggers) settleBackoff(b *bindingState, failed, answered bool, start, end time.Time) {
	switch {
	case failed:
		b.backoff.failures++
		fair := fairShare * end.Sub(start)
		fair += jitter(fair, t.rand) - fair/2 // [fair, 1.5 fair]
		wait := max(jitter(backoff(t.pools.lim, b.backoff.failures), t.rand), fair)
		b.backoff.retryAt = end.Add(wait)
	case answered:
		b.backoff = bindingBackoff{}
	}
}
