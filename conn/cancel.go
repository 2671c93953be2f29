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
// the function sets the deadline only while its generation is current,
// under mu, and stopping advances the generation under mu; so a late
// function can never cut short a later call's deadline.
type canceller struct {
	done <-chan struct{} // the registered context's Done; nil when none
	stop func() bool

	mu  sync.Mutex
	gen uint64 // advanced by every stop; read by the registered function
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
	gen := w.gen // only the owner writes gen, under mu
	w.stop = context.AfterFunc(ctx, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.gen == gen {
			_ = raw.SetDeadline(interruptAt())
		}
	})
	w.done = done
}

// unwatch stops the registration, if any; once it returns, the
// registration's function has no effect on the socket.
func (w *canceller) unwatch() {
	if w.stop == nil {
		return
	}
	w.stop()
	w.mu.Lock()
	w.gen++
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
