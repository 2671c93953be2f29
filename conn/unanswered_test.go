package conn_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/fakeserver"
)

// unansweredWithin is the deadline of a request the fake leaves
// unanswered: it passes with nothing to read, whatever the machine's
// load.
const unansweredWithin = 50 * time.Millisecond

// giveUp makes a request the fake does not answer in time.
func giveUp(t *testing.T, c *conn.Conn, payload string, delivery bool) error {
	t.Helper()
	return giveUpWithin(t, c, payload, delivery, unansweredWithin)
}

// giveUpWithin is giveUp with the request's deadline given.
func giveUpWithin(t *testing.T, c *conn.Conn, payload string, delivery bool, within time.Duration) error {
	t.Helper()
	_, err := c.Exchange(t.Context(), time.Now().Add(within),
		conn.Call{Subject: []byte("svc"), Payload: []byte(payload), Delivery: delivery})
	return err
}

// keepConfig is the fake's configuration with KeepUnanswered.
func (f *fake) keepConfig(t *testing.T) conn.Config {
	cfg := f.config(t)
	cfg.KeepUnanswered = true
	return cfg
}

// TestFakeKeepUnanswered: with KeepUnanswered a request whose deadline
// passes between frames keeps the connection (ErrUnanswered with
// context.DeadlineExceeded, not ErrClosed); its late answer, arriving on
// its own reply subject during the next request or while the connection
// is idle (Check), is discarded and never taken for a later request's
// answer; a message to a reply subject that was answered, not given up,
// is still foreign.
func TestFakeKeepUnanswered(t *testing.T) {
	f := startFake(t, fakeserver.Config{Script: script(
		greet(infoJSON),
		expectPub("1", "slow"),
		// The late answer to 1 comes only once the client wrote 2.
		expectPub("2", "next"),
		steps(msgTo("1", "late"), hmsgTo("1", "NATS/1.0 503\r\n\r\n", ""), msgTo("2", "answer")),
		expectPub("3", "slow again"),
		expectPub("4", "fourth"),
		// 3's answer comes in the TLS record that answers 4, so it is
		// read, unparsed, with that answer and waits for the idle Check.
		steps(together(msgText("4", "answer 4"), msgText("3", "late 3"))),
		expectPub("5", "fifth"),
		steps(together(msgText("5", "answer 5"), msgText("2", "again")), fakeserver.WaitClose()),
	)})
	c, err := f.dial(t, f.keepConfig(t))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	err = giveUp(t, c, "slow", false)
	if !errors.Is(err, conn.ErrUnanswered) || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, conn.ErrClosed) || c.Closed() {
		t.Fatalf("unanswered request: %v (closed %v), want ErrUnanswered and DeadlineExceeded on an open connection", err, c.Closed())
	}
	if r, err := request(t, c, "next"); err != nil || string(r.Payload) != "answer" {
		t.Fatalf("request after the unanswered one: %q, %v; want its own answer, the late ones discarded", r.Payload, err)
	}
	if err := giveUp(t, c, "slow again", false); !errors.Is(err, conn.ErrUnanswered) {
		t.Fatalf("second unanswered request: %v", err)
	}
	if r, err := request(t, c, "fourth"); err != nil || string(r.Payload) != "answer 4" {
		t.Fatalf("request 4: %q, %v", r.Payload, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
	defer cancel()
	if err := c.Check(ctx); err != nil || c.Closed() {
		t.Fatalf("Check with a late answer waiting: %v (closed %v), want it discarded", err, c.Closed())
	}
	if r, err := request(t, c, "fifth"); err != nil || string(r.Payload) != "answer 5" {
		t.Fatalf("request 5: %q, %v", r.Payload, err)
	}
	if err := c.Check(ctx); !errors.Is(err, conn.ErrForeignFrame) || !c.Closed() {
		t.Fatalf("Check with a second message to an answered request: %v, want ErrForeignFrame and a closed connection", err)
	}
}

// TestFakeKeepUnansweredCloses: where keeping the connection is not safe,
// the deadline still closes it: a delivery request (a message delivered to
// a pull comes under the stream's subject, so a late one could not be
// told from a later pull's), a deadline met inside a frame (the parser is
// mid-message), and without KeepUnanswered.
func TestFakeKeepUnansweredCloses(t *testing.T) {
	for _, tc := range []struct {
		name     string
		keep     bool
		delivery bool
		answer   []fakeserver.Step
		// within is the request's deadline: long enough, inside a frame,
		// for its first bytes to arrive before it on a loaded machine.
		within time.Duration
	}{
		{"delivery request", true, true, nil, unansweredWithin},
		{"inside a frame", true, false, steps(fakeserver.SendString("MSG " + fakeInbox + ".1 1 5\r\nab")), dialWithin},
		{"without KeepUnanswered", false, false, nil, unansweredWithin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startFake(t, fakeserver.Config{Script: script(
				greet(infoJSON),
				expectPub("1", "slow"),
				tc.answer,
				steps(fakeserver.WaitClose()),
			)})
			cfg := f.config(t)
			cfg.KeepUnanswered = tc.keep
			c, err := f.dial(t, cfg)
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			err = giveUpWithin(t, c, "slow", tc.delivery, tc.within)
			if !errors.Is(err, conn.ErrClosed) || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, conn.ErrUnanswered) || !c.Closed() {
				t.Fatalf("unanswered request: %v (closed %v), want a closed connection by its deadline", err, c.Closed())
			}
		})
	}
}

// TestFakeKeepUnansweredForgets: past MaxUnanswered requests given up,
// the oldest is forgotten and its late answer is foreign again.
func TestFakeKeepUnansweredForgets(t *testing.T) {
	parts := [][]fakeserver.Step{greet(infoJSON)}
	for i := 1; i <= conn.MaxUnanswered+1; i++ {
		parts = append(parts, expectPub(itoa(i), "slow"))
	}
	last := itoa(conn.MaxUnanswered + 2)
	parts = append(parts, expectPub(last, "next"),
		steps(together(msgText("2", "late 2"), msgText(last, "answer"), msgText("1", "late 1")), fakeserver.WaitClose()))
	f := startFake(t, fakeserver.Config{Script: script(parts...)})
	c, err := f.dial(t, f.keepConfig(t))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	for i := range conn.MaxUnanswered + 1 {
		if err := giveUp(t, c, "slow", false); !errors.Is(err, conn.ErrUnanswered) {
			t.Fatalf("request %d: %v, want ErrUnanswered", i+1, err)
		}
	}
	if r, err := request(t, c, "next"); err != nil || string(r.Payload) != "answer" {
		t.Fatalf("request after them: %q, %v; want its answer, request 2's late answer discarded", r.Payload, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
	defer cancel()
	if err := c.Check(ctx); !errors.Is(err, conn.ErrForeignFrame) {
		t.Fatalf("Check with the forgotten request's answer: %v, want ErrForeignFrame", err)
	}
}

// together sends frames in one write, one TLS record: the connection
// reads them all at once.
func together(frames ...string) fakeserver.Step {
	var b []byte
	for _, f := range frames {
		b = append(b, f...)
	}
	return fakeserver.Send(b)
}
