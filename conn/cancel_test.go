package conn_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/fakeserver"
)

// cancelWithin bounds how long a call may take to return once its context
// is cancelled while it waits on a stalled server. The interruption itself
// is a deadline set on the socket from the context package's goroutine and
// the poller waking the waiting goroutine, tens of microseconds on an idle
// machine; the bound is ten times the 50 ms the trigger runtime promises,
// because the machines that run these tests are shared and loaded (other
// test binaries, a fuzzer) and a goroutine can wait that long for a
// processor. The measured figure is logged.
const cancelWithin = 500 * time.Millisecond

// blockingWrites is a TCP connection whose send buffer is small and which
// reports when its writes have passed min bytes in all, so that a test can
// cancel a write that cannot complete against a server that reads nothing
// (its receive buffer holds about 128 KiB; crypto/tls writes a large
// payload as many records, each a Write here).
type blockingWrites struct {
	net.Conn
	min     int
	written int
	writing chan struct{} // closed once written passes min
}

func (b *blockingWrites) Write(p []byte) (int, error) {
	b.written += len(p)
	if b.written >= b.min {
		select {
		case <-b.writing:
		default:
			close(b.writing)
		}
	}
	return b.Conn.Write(p)
}

// TestCancelInterruptsEveryPhase stalls the server in each phase of a
// connection (the TLS handshake, INFO, the PONG after CONNECT, a request's
// reply, a request's write into a full send buffer) and cancels the
// caller's context there, long before its deadline: the call returns
// ctx's error at once, the connection closed (a request) or never handed
// out (Dial), over the runtime's network poller as Dial uses it by default.
func TestCancelInterruptsEveryPhase(t *testing.T) {
	const bigPayload = 1 << 20
	tests := []struct {
		name   string
		script []fakeserver.Step
		dial   bool      // the phase is in Dial; otherwise a request's
		step   conn.Step // Dial's failed step
		write  bool      // cancel once the request's write has started
	}{
		{name: "tls", script: steps(fakeserver.ReadClientHello(), fakeserver.Stall()), dial: true, step: conn.StepTLS},
		{name: "info", script: steps(fakeserver.Handshake(), fakeserver.Stall()), dial: true, step: conn.StepInfo},
		{name: "pong", script: steps(
			fakeserver.Handshake(),
			fakeserver.Send(fakeserver.Info(infoJSON)),
			fakeserver.ExpectPrefix("CONNECT {"),
			fakeserver.ExpectPrefix("SUB "+fakeInbox+".* 1\r\n"),
			fakeserver.ExpectPrefix("PING\r\n"),
			fakeserver.Stall(),
		), dial: true, step: conn.StepConnect},
		{name: "reply", script: script(greet(infoJSON), steps(fakeserver.ExpectPrefix("PUB svc "+fakeInbox+".1 1\r\n"), fakeserver.Stall()))},
		{name: "write", script: script(greet(infoJSON), steps(fakeserver.Stall())), write: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := startFake(t, fakeserver.Config{Script: tt.script})
			cfg := f.config(t)
			cfg.MaxPayload = bigPayload
			bw := &blockingWrites{min: 32 << 10, writing: make(chan struct{})}
			cfg.Dialer = func(ctx context.Context, network, address string) (net.Conn, error) {
				d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
					var serr error
					if err := rc.Control(func(fd uintptr) {
						serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, 4096)
					}); err != nil {
						return err
					}
					return serr
				}}
				c, err := d.DialContext(ctx, network, address)
				if err != nil {
					return nil, err
				}
				bw.Conn = c
				return bw, nil
			}
			var c *conn.Conn
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			if !tt.dial {
				dctx, dcancel := context.WithTimeout(t.Context(), dialWithin)
				var err error
				c, err = conn.Dial(dctx, cfg)
				dcancel()
				if err != nil {
					t.Fatalf("Dial: %v", err)
				}
				t.Cleanup(func() { _ = c.Close() })
			}
			done := make(chan error, 1)
			go func() {
				if tt.dial {
					dc, err := conn.Dial(ctx, cfg)
					if dc != nil {
						_ = dc.Close()
						err = errors.New("Dial succeeded")
					}
					done <- err
					return
				}
				payload := []byte("q")
				if tt.write {
					payload = []byte(strings.Repeat("w", bigPayload))
				}
				_, err := c.Request(ctx, "svc", nil, payload)
				done <- err
			}()
			wait := f.srv.Stalled()
			if tt.write {
				wait = bw.writing
			}
			select {
			case <-wait:
			case err := <-done:
				t.Fatalf("returned before the stall: %v", err)
			case <-time.After(dialWithin):
				t.Fatal("the script never reached its stall")
			}
			start := time.Now()
			cancel()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("no return 10 s after cancel")
			}
			took := time.Since(start)
			t.Logf("returned %v after cancel", took)
			if took > cancelWithin {
				t.Errorf("returned %v after cancel, want within %v", took, cancelWithin)
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v, want context.Canceled", err)
			}
			if tt.dial {
				assertStep(t, err, tt.step)
				return
			}
			var ce *conn.ClosedError
			if !errors.As(err, &ce) || !c.Closed() {
				t.Errorf("error %v (%T), closed %v: want a *ClosedError and the connection closed", err, err, c.Closed())
			}
		})
	}
}

// TestCancelBeforeWriteKeepsConnection: a context already done when a
// request starts returns its error before anything is written, and the
// connection stays usable for the next request.
func TestCancelBeforeWriteKeepsConnection(t *testing.T) {
	f := startFake(t, fakeserver.Config{Script: script(greet(infoJSON), expectPub("1", "q"), steps(msgTo("1", "a"), fakeserver.WaitClose()))})
	c, err := f.dial(t, f.config(t))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
	cancel()
	if _, err := c.Request(ctx, "svc", nil, []byte("q")); !errors.Is(err, context.Canceled) || c.Closed() {
		t.Fatalf("Request under a cancelled context: %v, closed %v; want context.Canceled and open", err, c.Closed())
	}
	if r, err := request(t, c, "q"); err != nil || string(r.Payload) != "a" {
		t.Fatalf("next request: %q, %v", r.Payload, err)
	}
}

// TestEndedContextLeavesLaterRequests: the context of an answered request
// ending afterwards (its cancel called, as every caller does) does not cut
// short the next request's deadline, on the same context's registration
// or a new one.
func TestEndedContextLeavesLaterRequests(t *testing.T) {
	f := startFake(t, fakeserver.Config{Script: script(greet(infoJSON),
		expectPub("1", "q"), steps(msgTo("1", "a")),
		expectPub("2", "q"), steps(msgTo("2", "b")),
		expectPub("3", "q"), steps(msgTo("3", "c"), fakeserver.WaitClose()),
	)})
	c, err := f.dial(t, f.config(t))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	for _, want := range []string{"a", "b", "c"} {
		ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
		r, err := c.Request(ctx, "svc", nil, []byte("q"))
		cancel()
		if err != nil || string(r.Payload) != want {
			t.Fatalf("request: %q, %v; want %q", r.Payload, err, want)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if rec := f.session(t); rec.Err != nil {
		t.Errorf("script: %v", rec.Err)
	}
}

// TestExchangeDeadline: Exchange is bounded by its explicit deadline when
// ctx has none, and by ctx's when it is earlier; a zero deadline is
// refused before anything is written.
func TestExchangeDeadline(t *testing.T) {
	f := startFake(t, fakeserver.Config{Script: script(greet(infoJSON), steps(fakeserver.ExpectPrefix("PUB svc "+fakeInbox+".1 1\r\n"), fakeserver.Stall()))})
	c, err := f.dial(t, f.config(t))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	if _, err := c.Exchange(t.Context(), time.Time{}, conn.Call{Subject: []byte("svc")}); !errors.Is(err, conn.ErrNoDeadline) || c.Closed() {
		t.Fatalf("zero deadline: %v, closed %v", err, c.Closed())
	}
	deadline := time.Now().Add(stallWithin)
	_, err = c.Exchange(context.WithoutCancel(t.Context()), deadline, conn.Call{Subject: []byte("svc"), Payload: []byte("q")})
	if !errors.Is(err, context.DeadlineExceeded) || !c.Closed() {
		t.Fatalf("stalled reply: %v, closed %v; want context.DeadlineExceeded and closed", err, c.Closed())
	}
	if time.Now().Before(deadline) {
		t.Errorf("returned before the explicit deadline")
	}
}

// TestDetach: a request leaves its context registered (the next request
// under it reuses the registration), Detach and Close stop it, and a
// context without a Done channel registers nothing.
func TestDetach(t *testing.T) {
	f := startFake(t, fakeserver.Config{Script: script(greet(infoJSON),
		expectPub("1", "q"), steps(msgTo("1", "a")),
		expectPub("2", "q"), steps(msgTo("2", "b")),
		expectPub("3", "q"), steps(msgTo("3", "c"), fakeserver.WaitClose()),
	)})
	c, err := f.dial(t, f.config(t))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	if conn.CancelRegistered(c) {
		t.Fatal("registered after Dial returned")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if r, err := c.Exchange(ctx, time.Now().Add(dialWithin), conn.Call{Subject: []byte("svc"), Payload: []byte("q")}); err != nil || string(r.Payload) != "a" {
		t.Fatalf("request: %q, %v", r.Payload, err)
	}
	if !conn.CancelRegistered(c) {
		t.Fatal("no registration kept after a request under a cancellable context")
	}
	c.Detach()
	if conn.CancelRegistered(c) {
		t.Fatal("registered after Detach")
	}
	if r, err := c.Exchange(context.WithoutCancel(t.Context()), time.Now().Add(dialWithin), conn.Call{Subject: []byte("svc"), Payload: []byte("q")}); err != nil || string(r.Payload) != "b" {
		t.Fatalf("request: %q, %v", r.Payload, err)
	}
	if conn.CancelRegistered(c) {
		t.Fatal("registered for a context that cannot end")
	}
	if r, err := c.Exchange(ctx, time.Now().Add(dialWithin), conn.Call{Subject: []byte("svc"), Payload: []byte("q")}); err != nil || string(r.Payload) != "c" {
		t.Fatalf("request: %q, %v", r.Payload, err)
	}
	if err := c.Close(); err != nil || conn.CancelRegistered(c) {
		t.Fatalf("Close: %v, registered %v", err, conn.CancelRegistered(c))
	}
}
