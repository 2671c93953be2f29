package conn_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/fakeserver"
	"github.com/latent-systems/latent-nats/parser"
)

// TestCheck lets the server act on an idle connection, waits (without
// sleeping) until that reached the client's socket, and checks.
func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		// idle is what the server does after the handshake; the client
		// waits for its first byte before Check, unless quiet.
		idle     []fakeserver.Step
		quiet    bool
		wrap     bool // the socket cannot be peeked at
		wantErr  error
		kind     conn.ErrKind
		open     bool
		lameDuck bool
	}{
		{name: "quiet", idle: steps(fakeserver.WaitClose()), quiet: true, open: true},
		{name: "quiet, not peekable", idle: steps(fakeserver.WaitClose()), quiet: true, wrap: true, open: true},
		{name: "server hung up", idle: steps(fakeserver.Hangup()), wantErr: conn.ErrServerClosed},
		{name: "server hung up, not peekable", idle: steps(fakeserver.Hangup()), wrap: true, wantErr: conn.ErrServerClosed},
		{name: "PING answered",
			idle: steps(fakeserver.SendString("PING\r\n"), fakeserver.ExpectPrefix("PONG\r\n"),
				fakeserver.ExpectPrefix("PUB svc "+fakeInbox+".1 1\r\n"), fakeserver.ExpectPrefix("q\r\n"), msgTo("1", "a"), fakeserver.WaitClose()),
			open: true},
		{name: "PING answered, not peekable",
			idle: steps(fakeserver.SendString("PING\r\n"), fakeserver.ExpectPrefix("PONG\r\n"),
				fakeserver.ExpectPrefix("PUB svc "+fakeInbox+".1 1\r\n"), fakeserver.ExpectPrefix("q\r\n"), msgTo("1", "a"), fakeserver.WaitClose()),
			wrap: true, open: true},
		{name: "lame-duck INFO",
			idle: steps(fakeserver.Send(fakeserver.Info(`{"ldm":true}`)),
				fakeserver.ExpectPrefix("PUB svc "+fakeInbox+".1 1\r\n"), fakeserver.ExpectPrefix("q\r\n"), msgTo("1", "a"), fakeserver.WaitClose()),
			open: true, lameDuck: true},
		{name: "PING flood", idle: steps(fakeserver.SendString(strings.Repeat("PING\r\n", conn.MaxPingsPerExchange+1)), fakeserver.WaitClose()),
			wantErr: conn.ErrControlFlood},
		{name: "message", idle: steps(msgTo("1", "early"), fakeserver.WaitClose()), wantErr: conn.ErrForeignFrame},
		{name: "-ERR then hangup", idle: steps(fakeserver.SendString("-ERR 'Stale Connection'\r\n"), fakeserver.Hangup()),
			kind: conn.KindStaleConnection},
		{name: "permission -ERR", idle: steps(fakeserver.SendString("-ERR 'Permissions Violation for Publish to \"x\"'\r\n"), fakeserver.WaitClose()),
			kind: conn.KindPermission},
		{name: "frame cut short", idle: steps(fakeserver.SendString("PIN"), fakeserver.Stall()), wantErr: context.DeadlineExceeded},
		{name: "unknown op", idle: steps(fakeserver.SendString("PONG!\r\n"), fakeserver.WaitClose()), wantErr: parser.ErrUnknownOp},
		{name: "unsolicited PONG", idle: steps(fakeserver.SendString("PONG\r\n"), fakeserver.WaitClose()), wantErr: conn.ErrUnexpectedFrame},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := startFake(t, fakeserver.Config{Script: script(greet(infoJSON), tt.idle)})
			f.wrap = tt.wrap
			c, err := f.dial(t, f.config(t))
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			if !tt.quiet {
				f.waitReadable(t)
			}
			ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
			defer cancel()
			err = c.Check(ctx)
			if got := c.LameDuck(); got != tt.lameDuck {
				t.Errorf("LameDuck = %v, want %v", got, tt.lameDuck)
			}
			if tt.open {
				if err != nil || c.Closed() {
					t.Fatalf("Check = %v (closed %v), want nil", err, c.Closed())
				}
				if !tt.quiet {
					if r, err := request(t, c, "q"); err != nil || string(r.Payload) != "a" {
						t.Fatalf("request after Check: %q, %v", r.Payload, err)
					}
					_ = c.Close()
					if rec := f.session(t); rec.Err != nil {
						t.Errorf("script: %v", rec.Err)
					}
				}
				return
			}
			if tt.kind != 0 {
				assertKind(t, err, tt.kind)
			} else if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Check = %v, want %v", err, tt.wantErr)
			}
			if !errors.Is(err, conn.ErrClosed) || !c.Closed() {
				t.Fatalf("Check = %v did not close the connection", err)
			}
		})
	}
}

// TestCheckPaused: a goroutine descheduled during Check (seen at a load
// average of 17) must neither miss input that had arrived nor fail the
// answer to a PING. The pause stands for the descheduling: it outlasts
// CheckDrainWait at every point where Check may stop. Regression: the drain
// bound was computed once when Check started, so a pause before the socket
// was read left none (the -ERR went unread, the PONG's write timed out).
func TestCheckPaused(t *testing.T) {
	tests := []struct {
		name string
		idle []fakeserver.Step
		kind conn.ErrKind
	}{
		{name: "-ERR waiting", idle: steps(fakeserver.SendString("-ERR 'Stale Connection'\r\n"), fakeserver.WaitClose()),
			kind: conn.KindStaleConnection},
		{name: "PING waiting",
			idle: steps(fakeserver.SendString("PING\r\n"), fakeserver.ExpectPrefix("PONG\r\n"),
				fakeserver.ExpectPrefix("PUB svc "+fakeInbox+".1 1\r\n"), fakeserver.ExpectPrefix("q\r\n"), msgTo("1", "a"), fakeserver.WaitClose())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := startFake(t, fakeserver.Config{Script: script(greet(infoJSON), tt.idle)})
			c, err := f.dial(t, f.config(t))
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			f.waitReadable(t)
			pauses := 0
			conn.SetCheckPause(c, func() {
				pauses++
				time.Sleep(2 * conn.CheckDrainWait)
			})
			ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
			defer cancel()
			err = c.Check(ctx)
			conn.SetCheckPause(c, nil)
			if pauses == 0 {
				t.Fatal("Check never paused")
			}
			if tt.kind != 0 {
				assertKind(t, err, tt.kind)
				return
			}
			if err != nil || c.Closed() {
				t.Fatalf("Check = %v (closed %v), want nil", err, c.Closed())
			}
			if r, err := request(t, c, "q"); err != nil || string(r.Payload) != "a" {
				t.Fatalf("request after Check: %q, %v", r.Payload, err)
			}
			_ = c.Close()
			if rec := f.session(t); rec.Err != nil {
				t.Errorf("script: %v", rec.Err)
			}
		})
	}
}

// TestCheckAfterPastDeadline: the socket keeps the last request's deadline;
// once it has passed, Check must still see an open, quiet connection.
// Regression: a past deadline made the non-blocking peek fail.
func TestCheckAfterPastDeadline(t *testing.T) {
	f := startFake(t, fakeserver.Config{Script: script(
		greet(infoJSON),
		expectPub("1", "q"),
		steps(msgTo("1", "a"), fakeserver.WaitClose()),
	)})
	c, err := f.dial(t, f.config(t))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), stallWithin)
	defer cancel()
	if _, err := c.Request(ctx, "svc", nil, []byte("q")); err != nil {
		t.Fatalf("request: %v", err)
	}
	<-ctx.Done()
	check, cancelCheck := context.WithTimeout(t.Context(), dialWithin)
	defer cancelCheck()
	if err := c.Check(check); err != nil {
		t.Fatalf("Check after the request's deadline passed: %v", err)
	}
}

func TestCheckCancelledContext(t *testing.T) {
	f := startFake(t, fakeserver.Config{Script: script(greet(infoJSON), steps(fakeserver.WaitClose()))})
	c, err := f.dial(t, f.config(t))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.Check(ctx); !errors.Is(err, context.Canceled) || c.Closed() {
		t.Fatalf("Check = %v (closed %v), want context.Canceled on an open connection", err, c.Closed())
	}
}

// TestCheckFramesAlreadyBuffered: a PING that arrived in the same record as
// the handshake's PONG sits in the parser's buffer, not on the socket; Check
// still answers it.
func TestCheckFramesAlreadyBuffered(t *testing.T) {
	f := startFake(t, fakeserver.Config{Script: script(
		greet(infoJSON)[:5],
		steps(
			fakeserver.SendString("PONG\r\nPING\r\n"),
			fakeserver.ExpectPrefix("PONG\r\n"),
			fakeserver.WaitClose(),
		),
	)})
	c, err := f.dial(t, f.config(t))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
	defer cancel()
	if err := c.Check(ctx); err != nil {
		t.Fatalf("Check: %v", err)
	}
	_ = c.Close()
	if rec := f.session(t); rec.Err != nil {
		t.Errorf("script: %v (the PING was not answered)", rec.Err)
	}
}

// TestCheckQuietDoesNotWait: on a healthy idle connection whose socket can
// be peeked at, Check answers from the non-blocking peek and never waits
// for input. Regression: the probe left a deadline in the past on the
// socket, the peek was refused, and every Check waited CheckDrainWait.
func TestCheckQuietDoesNotWait(t *testing.T) {
	f := startFake(t, fakeserver.Config{Script: script(
		greet(infoJSON),
		expectPub("1", "q"),
		steps(msgTo("1", "a"), fakeserver.WaitClose()),
	)})
	c, err := f.dial(t, f.config(t))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	if _, err := request(t, c, "q"); err != nil {
		t.Fatalf("request: %v", err)
	}
	for i := range 3 {
		ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
		err := c.Check(ctx)
		cancel()
		if err != nil {
			t.Fatalf("Check %d: %v", i, err)
		}
	}
	if got := conn.ProbeWaits(c); got != 0 {
		t.Errorf("Check waited for input %d times on a quiet connection, want 0", got)
	}
}

// TestCheckTrailingStatus: a status-only message to the reply subject of a
// request already made, left unread because no request followed (2.14.6
// sends "409 Batch Completed" after a delivery whose pull carried
// max_bytes), is skipped like a control frame and the connection stays
// usable; anything else on the inbox is still foreign, and too many are a
// flood. Regression: Check closed a healthy connection on the first one.
func TestCheckTrailingStatus(t *testing.T) {
	const done = "NATS/1.0 409 Batch Completed\r\nNats-Pending-Messages: 0\r\nNats-Pending-Bytes: 0\r\n\r\n"
	hmsg := func(n, payload string) string {
		return "HMSG " + fakeInbox + "." + n + " 1 " + itoa(len(done)) + " " + itoa(len(done)+len(payload)) + "\r\n" + done + payload + "\r\n"
	}
	tests := []struct {
		name     string
		requests int    // answered requests before the check
		idle     string // what the server sends after them
		wantErr  error
	}{
		{"to the last reply", 1, hmsg("1", ""), nil},
		{"to an earlier reply", 2, hmsg("1", ""), nil},
		{"at the control-frame cap", 1, strings.Repeat(hmsg("1", ""), conn.MaxControlFramesPerExchange), nil},
		{"past the control-frame cap", 1, strings.Repeat(hmsg("1", ""), conn.MaxControlFramesPerExchange+1), conn.ErrControlFlood},
		{"to a reply not issued", 1, hmsg("2", ""), conn.ErrForeignFrame},
		{"before any request", 0, hmsg("1", ""), conn.ErrForeignFrame},
		{"with a payload", 1, hmsg("1", "x"), conn.ErrForeignFrame},
		{"another sid", 1, "HMSG " + fakeInbox + ".1 2 " + itoa(len(done)) + " " + itoa(len(done)) + "\r\n" + done + "\r\n", conn.ErrForeignFrame},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var parts [][]fakeserver.Step
			parts = append(parts, greet(infoJSON))
			for i := 1; i <= tt.requests; i++ {
				parts = append(parts, expectPub(itoa(i), "q"), steps(msgTo(itoa(i), "a")))
			}
			parts = append(parts, steps(fakeserver.SendString(tt.idle)))
			next := itoa(tt.requests + 1)
			parts = append(parts, expectPub(next, "q"), steps(msgTo(next, "b"), fakeserver.WaitClose()))
			f := startFake(t, fakeserver.Config{Script: script(parts...)})
			c, err := f.dial(t, f.config(t))
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			for i := range tt.requests {
				if _, err := request(t, c, "q"); err != nil {
					t.Fatalf("request %d: %v", i+1, err)
				}
			}
			f.waitReadable(t)
			ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
			defer cancel()
			err = c.Check(ctx)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !errors.Is(err, conn.ErrClosed) || !c.Closed() {
					t.Fatalf("Check = %v (closed %v), want %v and a closed connection", err, c.Closed(), tt.wantErr)
				}
				return
			}
			if err != nil || c.Closed() {
				t.Fatalf("Check = %v (closed %v), want nil", err, c.Closed())
			}
			if r, err := request(t, c, "q"); err != nil || string(r.Payload) != "b" {
				t.Fatalf("request after Check: %q, %v", r.Payload, err)
			}
			_ = c.Close()
			if rec := f.session(t); rec.Err != nil {
				t.Errorf("script: %v", rec.Err)
			}
		})
	}
}
