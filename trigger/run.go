package trigger

import (
	"context"
	"errors"
	"time"
)

// Run is the owner's loop: it makes steps on the caller's goroutine, one
// after another, with one time.Timer for the pacing, until ctx is done.
// It starts no goroutine. The rotation visits tenants in turn and, within
// a tenant, its bindings in turn; each step handles at most one message and
// one activation.
//
// Pacing: a step that delivered a message is followed at once by the next
// step, and so is every step up to and including that binding's next visit
// (one lap of the rotation); any other step is followed by one poll
// interval on the timer. So an idle owner makes one visit per poll
// interval whatever the number of bindings, and a busy one moves as fast as
// its round trips allow.
//
// When ctx is done Run ends the step in progress at once (a wait on the
// broker, dial and TLS handshake included, is interrupted; the host's
// activation sees ctx done; nothing more is acknowledged), closes every
// tenant connection and client (CloseIdle) and returns nil: within
// milliseconds plus whatever the host's activation takes to return.
// Close does the same from another goroutine, and Run returns ErrClosed.
// It returns ErrSuperseded when a newer epoch of the logical ID was
// installed, ErrClosed after Close, ErrRunning when Run already runs or a
// Step is in progress, ErrReentrant when called from inside the
// installation's own host callbacks (see host.go) and ErrNoHost for a nil
// host, also after CloseIdle.
func (t *Triggers) Run(ctx context.Context, host Host) error {
	if host == nil {
		return ErrNoHost
	}
	ctx, err := t.claim(ctx)
	if err != nil {
		return err
	}
	defer func() {
		t.mu.Lock()
		t.unclaimLocked()
		t.unlock()
	}()
	// Before the claim's end cancels ctx: closed connections hold no
	// registration on it (see conn.Conn.Detach).
	defer t.CloseIdle()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		r, err := t.step(ctx, host)
		switch {
		case err == nil:
		case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
			return stopped(ctx, nil)
		default:
			return err
		}
		if r.Wait <= 0 {
			continue
		}
		timer.Reset(r.Wait)
		select {
		case <-ctx.Done():
			return stopped(ctx, nil)
		case <-timer.C:
		}
	}
}
