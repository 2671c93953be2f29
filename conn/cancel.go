package conn

import (
	"context"
	"net"
	"sync"
	"time"
)

// interruptAt is the deadline set on the socket to interrupt a read or
// write in progress: long past, so the runtime's network poller wakes the
// waiting goroutine at once with a timeout.
func interruptAt() time.Time { return time.Unix(1, 0) }

// canceller makes the end of a caller's context interrupt the socket. A
// context.AfterFunc, run by the context package on a goroutine of its own
// once ctx is done, sets a passed deadline on the socket, which wakes a
// read or write blocked in it (net.Conn's SetDeadline works from any
// goroutine). The call that was interrupted sees the timeout, and its
// caller the context's error.
//
// One registration is kept for every later call given a context with the
// same Done channel (the trigger runtime's Run passes one context to every
// request), so a request allocates nothing for it; a call with another
// context stops it and registers anew, and Close stops it. A registration
// stopped after its function started cannot touch the socket any more:
// the function sets the deadline only while the Done channel registered
// now, read under mu, is closed, and stopping clears it under mu; so a late
// function can never cut short a later call's deadline (a later context
// that is done itself would interrupt that call anyway). The function is
// one method value per connection, not a closure per registration.
type canceller struct {
	done <-chan struct{} // the registered context's Done; nil when none
	stop func() bool
	fire func() // interrupt, made at the first registration

	mu    sync.Mutex
	armed <-chan struct{} // done, for interrupt; nil when none
	raw   net.Conn
}

// watch registers ctx unless the current registration already covers it.
// A context that can never be done (nil Done) needs none.
func (w *canceller) watch(ctx context.Context, raw net.Conn) {
	done := ctx.Done()
	if done == w.done {
		return
	}
	w.unwatch()
	if done == nil {
		return
	}
	if w.fire == nil {
		w.fire = w.interrupt
	}
	w.mu.Lock()
	w.armed, w.raw = done, raw
	w.mu.Unlock()
	w.stop = context.AfterFunc(ctx, w.fire)
	w.done = done
}

// interrupt is the registration's function, run once its context is
// done: it sets a passed deadline on the socket if the context registered
// now is done (see canceller).
func (w *canceller) interrupt() {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-w.armed: // a nil channel (none registered) is never ready
		_ = w.raw.SetDeadline(interruptAt())
	default:
	}
}

// unwatch stops the registration, if any; once it returns, the
// registration's function has no effect on the socket.
func (w *canceller) unwatch() {
	if w.stop == nil {
		return
	}
	w.stop()
	w.mu.Lock()
	w.armed, w.raw = nil, nil
	w.mu.Unlock()
	w.stop, w.done = nil, nil
}

// interrupted is the cause to report for err, an error of a read or write
// of a call under ctx: ctx's error when ctx is done and err is the
// timeout its end caused, err otherwise.
func interrupted(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && isTimeout(err) {
		return cerr
	}
	return err
}
