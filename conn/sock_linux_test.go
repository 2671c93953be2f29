package conn

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// sockWithin bounds every wait of these tests that is not the subject.
const sockWithin = 5 * time.Second

// socketPair dials a loopback listener and returns the dialled socket
// taken over as a thread socket, the TCP socket it replaced, and the
// accepted peer.
func socketPair(t *testing.T) (*threadSocket, *net.TCPConn, *net.TCPConn) {
	t.Helper()
	c, peer := tcpPair(t)
	if err := peer.SetDeadline(time.Now().Add(sockWithin)); err != nil {
		t.Fatal(err)
	}
	nc, err := threadSocketOf(c)
	if err != nil {
		t.Fatalf("threadSocketOf: %v", err)
	}
	s, ok := nc.(*threadSocket)
	if !ok {
		t.Fatalf("threadSocketOf returned %T, want *threadSocket", nc)
	}
	t.Cleanup(func() { s.Close() })
	return s, c, peer
}

// waitInput blocks, bounded, until s has input or an end of stream
// waiting, through its SyscallConn as peek uses it.
func waitInput(t *testing.T, s *threadSocket) {
	t.Helper()
	if err := s.SetReadDeadline(time.Now().Add(sockWithin)); err != nil {
		t.Fatal(err)
	}
	rc, err := s.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return !errors.Is(rerr, syscall.EAGAIN)
	})
	if err != nil {
		t.Fatalf("waiting for input: %v", err)
	}
	if err := s.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
}

func TestThreadSocketExchange(t *testing.T) {
	s, orig, peer := socketPair(t)
	if s.LocalAddr().String() != orig.LocalAddr().String() || s.RemoteAddr().String() != orig.RemoteAddr().String() {
		t.Fatalf("addresses %v %v, want %v %v", s.LocalAddr(), s.RemoteAddr(), orig.LocalAddr(), orig.RemoteAddr())
	}
	// The dialled socket is closed (and so out of the runtime's poller);
	// the connection lives on in the duplicate.
	if _, err := orig.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write on the replaced socket: %v, want net.ErrClosed", err)
	}
	if err := s.SetDeadline(time.Now().Add(sockWithin)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Write([]byte("hello")); n != 5 || err != nil {
		t.Fatalf("Write: %d, %v", n, err)
	}
	got := make([]byte, 5)
	if _, err := io.ReadFull(peer, got); err != nil || string(got) != "hello" {
		t.Fatalf("peer read %q, %v", got, err)
	}
	if _, err := peer.Write([]byte("world")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(s, got); err != nil || string(got) != "world" {
		t.Fatalf("Read %q, %v", got, err)
	}
	if n, err := s.Read(nil); n != 0 || err != nil {
		t.Fatalf("empty Read: %d, %v", n, err)
	}
}

func TestThreadSocketNotTCP(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	got, err := threadSocketOf(a)
	if err != nil || got != a {
		t.Fatalf("threadSocketOf(pipe) = %v, %v; want the pipe itself", got, err)
	}
}

func TestThreadSocketReadDeadline(t *testing.T) {
	s, _, peer := socketPair(t)
	const wait = 30 * time.Millisecond
	start := time.Now()
	if err := s.SetReadDeadline(start.Add(wait)); err != nil {
		t.Fatal(err)
	}
	n, err := s.Read(make([]byte, 8))
	took := time.Since(start)
	if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) || !isTimeout(err) {
		t.Fatalf("Read with nothing sent: %d, %v; want a timeout", n, err)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("%v (%T) is not a net.Error timeout", err, err)
	}
	if took < wait || took > sockWithin {
		t.Fatalf("timed out after %v, want %v and not much more", took, wait)
	}
	if normalise(err) != context.DeadlineExceeded {
		t.Fatalf("normalise(%v) = %v", err, normalise(err))
	}

	// A deadline in the past refuses at once and consumes nothing, even
	// with input waiting.
	if _, err := peer.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	waitInput(t, s)
	if err := s.SetReadDeadline(time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Read(make([]byte, 8)); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read past the deadline: %d, %v", n, err)
	}
	if err := s.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 3)
	if _, err := io.ReadFull(s, got); err != nil || string(got) != "abc" {
		t.Fatalf("Read after clearing the deadline: %q, %v", got, err)
	}
}

func TestThreadSocketWriteDeadline(t *testing.T) {
	s, _, peer := socketPair(t)
	// A passed deadline refuses even a write the buffer has room for, as
	// the runtime's poller does.
	if err := s.SetWriteDeadline(time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Write([]byte("x")); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Write past the deadline: %d, %v", n, err)
	}
	// The peer never reads, and its buffers are small.
	smallBuffers(t, s, peer)
	big := make([]byte, 4<<20)
	const wait = 50 * time.Millisecond
	start := time.Now()
	if err := s.SetWriteDeadline(start.Add(wait)); err != nil {
		t.Fatal(err)
	}
	n, err := s.Write(big)
	took := time.Since(start)
	if !errors.Is(err, os.ErrDeadlineExceeded) || n >= len(big) {
		t.Fatalf("Write to a peer that does not read: %d of %d, %v; want a timeout part way", n, len(big), err)
	}
	if took < wait || took > sockWithin {
		t.Fatalf("timed out after %v, want %v and not much more", took, wait)
	}
}

func TestThreadSocketEndOfStream(t *testing.T) {
	s, _, peer := socketPair(t)
	if err := peer.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.SetReadDeadline(time.Now().Add(sockWithin)); err != nil {
		t.Fatal(err)
	}
	n, err := s.Read(make([]byte, 8))
	if n != 0 || err != io.EOF {
		t.Fatalf("Read after the peer closed: %d, %v; want io.EOF", n, err)
	}
	if normalise(err) != ErrServerClosed {
		t.Fatalf("normalise(%v) = %v", err, normalise(err))
	}
}

func TestThreadSocketReset(t *testing.T) {
	s, _, peer := socketPair(t)
	if err := peer.SetLinger(0); err != nil { // close sends a reset
		t.Fatal(err)
	}
	if err := peer.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.SetReadDeadline(time.Now().Add(sockWithin)); err != nil {
		t.Fatal(err)
	}
	_, err := s.Read(make([]byte, 8))
	var oe *net.OpError
	if !errors.Is(err, syscall.ECONNRESET) || !errors.As(err, &oe) || oe.Op != "read" {
		t.Fatalf("Read after a reset: %v (%T); want a read *net.OpError of ECONNRESET", err, err)
	}
	if normalise(err) != ErrServerClosed {
		t.Fatalf("normalise(%v) = %v", err, normalise(err))
	}
	// A write fails too (EPIPE; no SIGPIPE ends the process), as the
	// server closing the connection.
	if err := s.SetWriteDeadline(time.Now().Add(sockWithin)); err != nil {
		t.Fatal(err)
	}
	_, err = s.Write([]byte("x"))
	if !errors.As(err, &oe) || oe.Op != "write" || normalise(err) != ErrServerClosed {
		t.Fatalf("Write after a reset: %v (%T); want a write *net.OpError meaning ErrServerClosed", err, err)
	}
}

func TestThreadSocketClose(t *testing.T) {
	s, _, peer := socketPair(t)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("second Close: %v, want net.ErrClosed", err)
	}
	if _, err := s.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Read after Close: %v", err)
	}
	if _, err := s.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Write after Close: %v", err)
	}
	rc, err := s.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Control(func(uintptr) { t.Error("Control ran on a closed socket") }); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Control after Close: %v", err)
	}
	// The peer sees the end of the stream: the descriptor was closed.
	n, err := peer.Read(make([]byte, 1))
	if n != 0 || err != io.EOF {
		t.Fatalf("peer read after Close: %d, %v; want io.EOF", n, err)
	}
}

// The socket needs no allocation for a request's write and its reply's
// read.
func TestThreadSocketAllocs(t *testing.T) {
	s, _, peer := socketPair(t)
	msg, got := []byte("ping"), make([]byte, 4)
	echo := make([]byte, 4)
	allocs := testing.AllocsPerRun(100, func() {
		if err := s.SetDeadline(time.Now().Add(sockWithin)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(peer, echo); err != nil {
			t.Fatal(err)
		}
		if _, err := peer.Write(echo); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(s, got); err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("echo %q, %v", got, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per round trip, want 0", allocs)
	}
}

// A Read that had to wait yields the processor once before reading. (That
// one finding its input waiting does not is left untested: a thread
// descheduled inside the wait would make it look long.)
func TestThreadSocketYieldsAfterWaiting(t *testing.T) {
	s, _, peer := socketPair(t)
	yields := 0
	saved := yield
	yield = func() { yields++ }
	defer func() { yield = saved }()
	if err := s.SetReadDeadline(time.Now().Add(sockWithin)); err != nil {
		t.Fatal(err)
	}

	// The input cannot arrive before the peer's pause ends, so the wait
	// lasts that long less the time this goroutine takes to reach it: with
	// a pause 2,500 times yieldAfter, well over yieldAfter, unless this
	// goroutine was descheduled for the whole pause; then the input was
	// waiting and no yield is due, and the attempt is made again (at most
	// three times).
	const pause = 50 * time.Millisecond
	got := make([]byte, 1)
	for attempt := 1; ; attempt++ {
		yields = 0
		wrote := make(chan error, 1)
		go func() {
			time.Sleep(pause)
			_, err := peer.Write([]byte("a"))
			wrote <- err
		}()
		start := time.Now()
		if _, err := io.ReadFull(s, got); err != nil || string(got) != "a" {
			t.Fatalf("Read %q, %v", got, err)
		}
		took := time.Since(start)
		if err := <-wrote; err != nil {
			t.Fatal(err)
		}
		if yields == 1 {
			return
		}
		if yields > 1 || took >= pause/2 || attempt == 3 {
			t.Fatalf("attempt %d: %d yields after a Read of %v that waited for a write %v away, want 1", attempt, yields, took, pause)
		}
	}
}

// A write larger than the socket buffers waits for room, as often as
// needed, and delivers every byte in order.
func TestThreadSocketWriteWaitsForRoom(t *testing.T) {
	s, _, peer := socketPair(t)
	smallBuffers(t, s, peer)
	big := make([]byte, 1<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, len(big))
		_, _ = io.ReadFull(peer, b) // the comparison below reports a short read
		got <- b
	}()
	if err := s.SetWriteDeadline(time.Now().Add(sockWithin)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Write(big); n != len(big) || err != nil {
		t.Fatalf("Write: %d of %d, %v", n, len(big), err)
	}
	if !bytes.Equal(<-got, big) {
		t.Fatal("the peer read other bytes than were written")
	}
}

// smallBuffers sets the send buffer of s and the receive buffer of peer to
// 64 KiB, so that a write of a few MiB fills them whatever the host's
// tcp_wmem and tcp_rmem (far smaller buffers make loopback TCP crawl on
// zero-window probes, with or without the runtime's poller).
func smallBuffers(t *testing.T, s *threadSocket, peer *net.TCPConn) {
	t.Helper()
	if err := unix.SetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 64<<10); err != nil {
		t.Fatal(err)
	}
	if err := peer.SetReadBuffer(64 << 10); err != nil {
		t.Fatal(err)
	}
}

// A socket dropped without Close is closed when it is collected.
func TestThreadSocketCleanup(t *testing.T) {
	peer := droppedSocket(t)
	b := make([]byte, 1)
	// Collections are not promised to run cleanups at once: a bounded
	// number of them, each followed by a short wait for the peer's end of
	// stream.
	for range 20 {
		runtime.GC()
		if err := peer.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		n, err := peer.Read(b)
		if n == 0 && err == io.EOF {
			return
		}
		if !isTimeout(err) {
			t.Fatalf("peer read: %d, %v", n, err)
		}
	}
	t.Fatal("the dropped socket was not closed after 20 collections")
}

// droppedSocket makes a thread socket and drops it without closing it; it
// returns the peer.
func droppedSocket(t *testing.T) *net.TCPConn {
	t.Helper()
	c, peer := tcpPair(t)
	if _, err := threadSocketOf(c); err != nil {
		t.Fatal(err)
	}
	return peer
}

// tcpPair dials a loopback listener and returns the dialled socket and
// the accepted peer, which is closed when the test ends.
func tcpPair(t *testing.T) (c, peer *net.TCPConn) {
	t.Helper()
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := ln.SetDeadline(time.Now().Add(sockWithin)); err != nil {
		t.Fatal(err)
	}
	if c, err = net.DialTCP("tcp4", nil, ln.Addr().(*net.TCPAddr)); err != nil {
		t.Fatal(err)
	}
	if peer, err = ln.AcceptTCP(); err != nil {
		c.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	return c, peer
}

// threadRaw waits only when its function asks to, and not past the
// socket's deadline.
func TestThreadSocketRawConn(t *testing.T) {
	s, _, _ := socketPair(t)
	rc, err := s.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetReadDeadline(time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	calls := 0
	if err := rc.Read(func(uintptr) bool { calls++; return true }); err != nil || calls != 1 {
		t.Fatalf("Read with a function done at once: %v after %d calls; want nil after 1", err, calls)
	}
	calls = 0
	if err := rc.Read(func(uintptr) bool { calls++; return false }); !errors.Is(err, os.ErrDeadlineExceeded) || calls != 1 {
		t.Fatalf("Read that must wait, past the deadline: %v after %d calls; want a timeout after 1", err, calls)
	}
}

// inPpoll reports whether a thread of this process is blocked in ppoll(2),
// from /proc (the Go runtime itself waits in epoll_pwait, futex and
// nanosleep, never in ppoll; no other test of the package runs in
// parallel).
func inPpoll(t *testing.T) bool {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatalf("reading /proc/self/task: %v", err)
	}
	want := []byte(strconv.Itoa(unix.SYS_PPOLL) + " ")
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/syscall")
		if err == nil && bytes.HasPrefix(b, want) {
			return true
		}
	}
	return false
}

// TestThreadSocketForeignDeadline pins the contract the thread socket does
// not keep, and the reason Config.ThreadSocket is an opt-in: a deadline
// set from another goroutine while a Read waits (what a context's end does
// through the canceller, and what crypto/tls's HandshakeContext does) does
// not wake it; the Read ends at the deadline it started waiting with.
// (Close from another goroutine during a Read is not allowed at all.) The
// same call over the runtime's poller returns at once
// (TestCancelInterruptsEveryPhase).
func TestThreadSocketForeignDeadline(t *testing.T) {
	s, _, _ := socketPair(t)
	const wait = 300 * time.Millisecond
	start := time.Now()
	deadline := start.Add(wait)
	if err := s.SetReadDeadline(deadline); err != nil {
		t.Fatal(err)
	}
	type result struct {
		err error
		at  time.Time
	}
	done := make(chan result, 1)
	go func() {
		_, err := s.Read(make([]byte, 8))
		done <- result{err, time.Now()}
	}()
	// Set the past deadline only once the reader's thread is blocked in
	// ppoll, bounded by the read's own deadline.
	for !inPpoll(t) {
		if time.Now().After(deadline) {
			t.Fatal("the reader never blocked in ppoll before its deadline")
		}
		runtime.Gosched()
	}
	if err := s.SetDeadline(time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if !errors.Is(r.err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read: %v, want a timeout", r.err)
	}
	if r.at.Before(deadline) {
		t.Errorf("Read returned %v before its own deadline: a foreign deadline woke it, update the package documentation", deadline.Sub(r.at))
	}
	t.Logf("Read returned %v after it started, at its own deadline", r.at.Sub(start))
}
