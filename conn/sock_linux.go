package conn

import (
	"io"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// threadSocket is the TCP socket, taken from the runtime's network poller
// and read and written by the calling thread. Where the poller would park
// the goroutine on a would-block and wake it through epoll and the
// scheduler (waking an idle thread for every reply on the way), the socket
// waits in ppoll(2) in a blocking system call, bounded by the deadline,
// and then reads or writes; a Read whose wait blocked yields the processor
// once before reading (see Read). A request of this package is one write and a
// wait for one reply on one goroutine, so the poller buys nothing here and
// costs a good part of the client's CPU per round trip
// (docs/BENCHMARKS.md, "Pull loop").
//
// The descriptor is a duplicate of the dialled one, which is closed (and so
// removed from the poller's epoll set); it stays non-blocking. Deadlines
// are the socket's own: Read and Write return os.ErrDeadlineExceeded once
// theirs has passed, which, as the poller's timeout, leaves a crypto/tls
// connection usable for a later read.
//
// It does not keep net.Conn's contract for other goroutines (which is why
// Config.ThreadSocket is an opt-in): a deadline set from another goroutine
// is stored safely but takes effect at the next wait, not the one in
// progress, so neither it nor a context's end (see canceller) wakes a
// Read or Write already waiting, which ends at the deadline it started
// with; and Close must not be called while a Read or Write is in progress
// (TestThreadSocketForeignDeadline pins the first). Close is idempotent.
type threadSocket struct {
	fd           int // -1 once closed
	laddr, raddr net.Addr
	rdl, wdl     atomic.Int64 // deadlines in Unix nanoseconds, 0 when none
	cleanup      runtime.Cleanup
}

// storeDeadline stores t in d: 0 for the zero time.
func storeDeadline(d *atomic.Int64, t time.Time) {
	if t.IsZero() {
		d.Store(0)
		return
	}
	d.Store(t.UnixNano())
}

// loadDeadline is the deadline stored in d.
func loadDeadline(d *atomic.Int64) time.Time {
	n := d.Load()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// yieldAfter is how long a wait for input must have taken for Read to
// yield the processor afterwards (see Read): shorter waits found the input
// there or almost.
const yieldAfter = 20 * time.Microsecond

// yield is runtime.Gosched; tests count the calls.
var yield = runtime.Gosched

// threadSocketOf takes c over when it is a TCP socket; anything else (a
// caller's dialer returning another net.Conn) is used as it is. On an
// error c is closed.
func threadSocketOf(c net.Conn) (net.Conn, error) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	fd := -1
	var derr error
	if err := rc.Control(func(f uintptr) { fd, derr = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		_ = c.Close()
		return nil, err
	}
	if derr != nil {
		_ = c.Close()
		return nil, os.NewSyscallError("fcntl", derr)
	}
	// The runtime made the socket non-blocking; the mode is shared by
	// every descriptor of it, so make sure, in case a caller's dialer
	// changed it through another one.
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		_ = c.Close()
		return nil, os.NewSyscallError("fcntl", err)
	}
	s := &threadSocket{fd: fd, laddr: tc.LocalAddr(), raddr: tc.RemoteAddr()}
	// Closing the original deletes it from the poller's epoll set; the
	// duplicate keeps the connection open.
	if err := tc.Close(); err != nil {
		_ = unix.Close(fd)
		return nil, err
	}
	s.cleanup = runtime.AddCleanup(s, func(fd int) { _ = unix.Close(fd) }, fd)
	return s, nil
}

func (s *threadSocket) LocalAddr() net.Addr  { return s.laddr }
func (s *threadSocket) RemoteAddr() net.Addr { return s.raddr }

func (s *threadSocket) SetDeadline(t time.Time) error {
	storeDeadline(&s.rdl, t)
	storeDeadline(&s.wdl, t)
	return nil
}

func (s *threadSocket) SetReadDeadline(t time.Time) error {
	storeDeadline(&s.rdl, t)
	return nil
}

func (s *threadSocket) SetWriteDeadline(t time.Time) error {
	storeDeadline(&s.wdl, t)
	return nil
}

func (s *threadSocket) Close() error {
	if s.fd < 0 {
		return net.ErrClosed
	}
	s.cleanup.Stop()
	err := unix.Close(s.fd)
	s.fd = -1
	if err != nil {
		return s.opError("close", err)
	}
	return nil
}

// Read waits for input, then reads what there is.
func (s *threadSocket) Read(p []byte) (int, error) {
	if s.fd < 0 {
		return 0, s.opError("read", net.ErrClosed)
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		start := time.Now()
		if err := wait(s.fd, unix.POLLIN, loadDeadline(&s.rdl)); err != nil {
			return 0, s.opError("read", err)
		}
		// A wait that blocked kept this goroutine's processor in a system
		// call, where the scheduler could not use it: give it the turn a
		// park in the runtime's poller would have given (due timers,
		// runnable goroutines, network readiness) before going on. Without
		// this, another goroutine's 1 ms ticker was taken 0.6 ms late at
		// the median during a busy pull loop, instead of 0.04 ms
		// (docs/BENCHMARKS.md, "Pull loop").
		if time.Since(start) >= yieldAfter {
			yield()
		}
		n, err := unix.Read(s.fd, p)
		switch {
		case err == unix.EAGAIN || err == unix.EINTR:
			continue
		case err != nil:
			return 0, s.opError("read", err)
		case n == 0:
			return 0, io.EOF
		}
		runtime.KeepAlive(s) // the descriptor stays open until its last use here
		return n, nil
	}
}

// Write writes all of p, waiting whenever the send buffer is full.
func (s *threadSocket) Write(p []byte) (int, error) {
	if s.fd < 0 {
		return 0, s.opError("write", net.ErrClosed)
	}
	// As with the runtime's poller, a passed deadline refuses the write
	// even when the send buffer has room.
	if wdl := loadDeadline(&s.wdl); !wdl.IsZero() && !time.Now().Before(wdl) {
		return 0, os.ErrDeadlineExceeded
	}
	w := 0
	for w < len(p) {
		n, err := unix.Write(s.fd, p[w:])
		switch {
		case err == unix.EAGAIN:
			if err := wait(s.fd, unix.POLLOUT, loadDeadline(&s.wdl)); err != nil {
				return w, s.opError("write", err)
			}
		case err == unix.EINTR:
		case err != nil:
			return w, s.opError("write", err)
		case n == 0:
			return w, io.ErrUnexpectedEOF // as the poller reports a write that made no progress
		default:
			w += n
		}
	}
	runtime.KeepAlive(s) // the descriptor stays open until its last use here
	return w, nil
}

// SyscallConn gives the descriptor to peek (peek_unix.go). Its Read and
// Write wait in ppoll(2), bounded by the socket's deadlines, while f
// returns false.
func (s *threadSocket) SyscallConn() (syscall.RawConn, error) { return threadRaw{s}, nil }

// threadRaw is threadSocket's syscall.RawConn.
type threadRaw struct{ s *threadSocket }

func (r threadRaw) Control(f func(fd uintptr)) error {
	if r.s.fd < 0 {
		return net.ErrClosed
	}
	f(uintptr(r.s.fd))
	return nil
}

func (r threadRaw) Read(f func(fd uintptr) bool) error {
	return r.until(f, unix.POLLIN, loadDeadline(&r.s.rdl))
}

func (r threadRaw) Write(f func(fd uintptr) bool) error {
	return r.until(f, unix.POLLOUT, loadDeadline(&r.s.wdl))
}

func (r threadRaw) until(f func(fd uintptr) bool, events int16, deadline time.Time) error {
	for {
		if r.s.fd < 0 {
			return net.ErrClosed
		}
		if f(uintptr(r.s.fd)) {
			runtime.KeepAlive(r.s)
			return nil
		}
		if err := wait(r.s.fd, events, deadline); err != nil {
			return err
		}
	}
}

// opError is err as the net package reports it, a *net.OpError, with a
// system call's errno as an *os.SyscallError inside; a passed deadline is
// returned as it is (os.ErrDeadlineExceeded, a net.Error whose Timeout and
// Temporary are true).
func (s *threadSocket) opError(op string, err error) error {
	switch err {
	case os.ErrDeadlineExceeded:
		return err
	case net.ErrClosed:
	default:
		if errno, ok := err.(syscall.Errno); ok {
			err = os.NewSyscallError(op, errno)
		}
	}
	return &net.OpError{Op: op, Net: "tcp", Source: s.laddr, Addr: s.raddr, Err: err}
}

// wait blocks the thread in ppoll(2) until fd is ready for events, has
// failed or was hung up (the read or write that follows reports which), or
// the deadline passes (os.ErrDeadlineExceeded). A zero deadline waits
// without bound.
func wait(fd int, events int16, deadline time.Time) error {
	pfd := [1]unix.PollFd{{Fd: int32(fd), Events: events}}
	for {
		var ts *unix.Timespec
		if !deadline.IsZero() {
			d := time.Until(deadline)
			if d <= 0 {
				return os.ErrDeadlineExceeded
			}
			t := unix.NsecToTimespec(int64(d))
			ts = &t
		}
		n, err := unix.Ppoll(pfd[:], ts, nil)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return err
		case n > 0:
			return nil
		}
		// n == 0: the wait timed out; the loop checks the deadline again.
	}
}
