package ledger

import (
	"context"
	"fmt"
	"time"
)

// ViewFunc reads the broker's view of one binding's consumer.
type ViewFunc func(ctx context.Context, binding string) (ConsumerView, error)

// WaitSettled reads every binding's consumer that had events published,
// every tick, until each shows everything settled (nothing pending,
// nothing awaiting an acknowledgement, nothing of the binding left in a
// stream that removes settled messages but what Verdict.KeptAfterAck,
// Verdict.DroppedRetries and Verdict.GivenUp set aside) or ctx ends. It
// returns the views and how long settling took from the call. A read error
// is retried at the next tick (the broker may still be coming back). When
// ctx ends first the error is a *SettleError, matching ErrNotSettled, that
// says how the reads went, and the views are each binding's last one read
// (a binding never read has none).
func (l *Ledger) WaitSettled(ctx context.Context, tick time.Duration, view ViewFunc) ([]ConsumerView, time.Duration, error) {
	start := time.Now()
	l.mu.Lock()
	var bindings []string
	for _, b := range l.Bindings() {
		if _, ok := l.last[b]; ok {
			bindings = append(bindings, b)
		}
	}
	l.mu.Unlock()
	t := time.NewTicker(tick)
	defer t.Stop()
	latest := make(map[string]ConsumerView, len(bindings))
	se := &SettleError{LastOK: -1}
	for {
		done := true
		for _, b := range bindings {
			cv, err := view(ctx, b)
			se.Reads++
			if err != nil {
				se.failed(err, time.Since(start))
				done = false
				break
			}
			se.LastOK = time.Since(start)
			latest[b] = cv
			l.mu.Lock()
			settled := l.sortLeft(cv).settled
			l.mu.Unlock()
			if !settled {
				done = false
			}
		}
		if done {
			return viewsOf(bindings, latest), time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return viewsOf(bindings, latest), time.Since(start), se
		case <-t.C:
		}
	}
}

// viewsOf returns the views of bindings, in order, that latest holds.
func viewsOf(bindings []string, latest map[string]ConsumerView) []ConsumerView {
	views := make([]ConsumerView, 0, len(latest))
	for _, b := range bindings {
		if cv, ok := latest[b]; ok {
			views = append(views, cv)
		}
	}
	return views
}

// SettleError is WaitSettled's error when its context ended before every
// consumer settled: how the reads went, so that a broker that stopped
// answering is told apart from consumers that answered and did not
// settle. It matches ErrNotSettled, and the last read error when there is
// one.
type SettleError struct {
	// Reads counts the consumer reads made; Failed those that returned an
	// error.
	Reads, Failed int
	// First and Last are the first and the last read error, at FirstAt
	// and LastAt from the call; nil when no read failed.
	First, Last     error
	FirstAt, LastAt time.Duration
	// LastOK is when the last read that succeeded returned, from the
	// call; -1 when none did.
	LastOK time.Duration
}

func (e *SettleError) failed(err error, at time.Duration) {
	e.Failed++
	if e.First == nil {
		e.First, e.FirstAt = err, at
	}
	e.Last, e.LastAt = err, at
}

func (e *SettleError) Error() string {
	msg := fmt.Sprintf("%v: %d reads, %d failed", ErrNotSettled, e.Reads, e.Failed)
	if e.LastOK >= 0 {
		msg += fmt.Sprintf(", the last that succeeded at %v", e.LastOK.Round(time.Millisecond))
	} else {
		msg += ", none succeeded"
	}
	if e.First != nil {
		msg += fmt.Sprintf("; the first failed at %v: %v", e.FirstAt.Round(time.Millisecond), e.First)
	}
	if e.Last != nil && e.Failed > 1 {
		msg += fmt.Sprintf("; the last at %v: %v", e.LastAt.Round(time.Millisecond), e.Last)
	}
	return msg
}

// Unwrap returns ErrNotSettled and the last read error, if any.
func (e *SettleError) Unwrap() []error {
	if e.Last == nil {
		return []error{ErrNotSettled}
	}
	return []error{ErrNotSettled, e.Last}
}
