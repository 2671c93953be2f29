package ledger

import (
	"context"
	"fmt"
	"time"
)

// ViewFunc reads the broker's view of one binding's consumer.
type ViewFunc func(ctx context.Context, binding string) (ConsumerView, error)

// WaitSettled reads every binding's consumer that had events published,
// every tick, until each shows everything settled (ConsumerView.Settled:
// nothing pending, nothing awaiting an acknowledgement, nothing of the
// binding left in a stream that removes settled messages) or ctx ends. It
// returns the last views and how long settling took from the call; on
// ctx's end the error matches ErrNotSettled and the views are the last
// read. A read error is retried at the next tick (the
// broker may still be coming back) and returned when ctx ends.
func (l *Ledger) WaitSettled(ctx context.Context, tick time.Duration, view ViewFunc) ([]ConsumerView, time.Duration, error) {
	start := time.Now()
	l.mu.Lock()
	last := make(map[string]uint64, len(l.last))
	for b, s := range l.last {
		last[b] = s
	}
	l.mu.Unlock()
	bindings := l.Bindings()
	t := time.NewTicker(tick)
	defer t.Stop()
	var views []ConsumerView
	var lastErr error
	for {
		views = views[:0]
		done := true
		for _, b := range bindings {
			if _, ok := last[b]; !ok {
				continue
			}
			cv, err := view(ctx, b)
			if err != nil {
				lastErr, done = err, false
				break
			}
			views = append(views, cv)
			if !cv.Settled() {
				done = false
			}
		}
		if done {
			return views, time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			if lastErr != nil {
				return views, time.Since(start), fmt.Errorf("%w (last read: %w)", ErrNotSettled, lastErr)
			}
			return views, time.Since(start), ErrNotSettled
		case <-t.C:
		}
	}
}
