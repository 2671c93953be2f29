package conn_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/fakeserver"
)

// TestFakeAwait: Await reads the message that follows the first answer of
// the last request, as a replicated consumer sends its pulled message
// after "409 Batch Completed": a forwarded message after a delivery
// request, a message to the reply subject after any request. Without an
// answered request it reads nothing (ErrNoRequest), and a message to
// another reply subject is foreign.
func TestFakeAwait(t *testing.T) {
	const done = "NATS/1.0 409 Batch Completed\r\nNats-Pending-Messages: 0\r\nNats-Pending-Bytes: 10240\r\n\r\n"
	f := startFake(t, fakeserver.Config{Script: script(
		greet(infoJSON),
		expectPub("1", "pull"),
		steps(hmsgTo("1", done, ""), fakeserver.SendString("HMSG orders.a 1 $JS.ACK.S.C.1.2.3.4.0 12 15\r\nNATS/1.0\r\n\r\nmsg\r\n")),
		expectPub("2", "q"),
		steps(msgTo("2", "a"), msgTo("2", "b")),
		expectPub("3", "q"),
		steps(msgTo("3", "c"), msgTo("9", "x"), fakeserver.WaitClose()),
	)})
	c, err := f.dial(t, f.config(t))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
	defer cancel()
	if _, err := c.Await(ctx, time.Now().Add(dialWithin)); !errors.Is(err, conn.ErrNoRequest) || c.Closed() {
		t.Fatalf("Await before any request: %v, want ErrNoRequest on an open connection", err)
	}

	r, err := c.Exchange(ctx, time.Now().Add(dialWithin), conn.Call{Subject: []byte("svc"), Payload: []byte("pull"), Delivery: true})
	if err != nil || r.Status != 409 {
		t.Fatalf("pull: status %d, %v; want 409", r.Status, err)
	}
	r, err = c.Await(ctx, time.Now().Add(dialWithin))
	if err != nil {
		t.Fatalf("Await after the status: %v", err)
	}
	got := []string{string(r.Subject), string(r.ReplyTo), string(r.Payload)}
	if diff := cmp.Diff([]string{"orders.a", "$JS.ACK.S.C.1.2.3.4.0", "msg"}, got); diff != "" || !r.Forwarded {
		t.Errorf("followed delivery (-want +got):\n%s (forwarded %v)", diff, r.Forwarded)
	}

	if r, err = request(t, c, "q"); err != nil || string(r.Payload) != "a" {
		t.Fatalf("request 2: %q, %v", r.Payload, err)
	}
	if r, err = c.Await(ctx, time.Now().Add(dialWithin)); err != nil || string(r.Payload) != "b" {
		t.Fatalf("Await after request 2: %q, %v; want the second message to its reply subject", r.Payload, err)
	}

	if r, err = request(t, c, "q"); err != nil || string(r.Payload) != "c" {
		t.Fatalf("request 3: %q, %v", r.Payload, err)
	}
	if _, err := c.Await(ctx, time.Now().Add(dialWithin)); !errors.Is(err, conn.ErrForeignFrame) || !c.Closed() {
		t.Fatalf("Await after request 3: %v, want ErrForeignFrame and a closed connection", err)
	}
}

// TestFakeAwaitDeadline: an Await that gets nothing by its deadline
// closes the connection with context.DeadlineExceeded, as a request does.
func TestFakeAwaitDeadline(t *testing.T) {
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
	began := time.Now()
	_, err = c.Await(t.Context(), time.Now().Add(50*time.Millisecond))
	if !errors.Is(err, context.DeadlineExceeded) || !c.Closed() {
		t.Fatalf("Await past its deadline: %v, want DeadlineExceeded and a closed connection", err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("Await returned %v after a 50 ms deadline", took)
	}
}
