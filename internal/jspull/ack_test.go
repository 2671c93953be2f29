package jspull

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/pull"
)

func TestAppendCommand(t *testing.T) {
	tests := []struct {
		name string
		cmd  Command
		want string
		err  error
	}{
		{"ack", Ack(), "+ACK", nil},
		{"term", Term(""), "+TERM", nil},
		{"term with reason", Term("invalid arguments"), "+TERM invalid arguments", nil},
		{"term reason at max", Term(strings.Repeat("r", MaxTermReasonLen)), "+TERM " + strings.Repeat("r", MaxTermReasonLen), nil},
		{"term reason past max", Term(strings.Repeat("r", MaxTermReasonLen+1)), "", ErrInvalidTermReason},
		{"term reason with newline", Term("a\nb"), "", ErrInvalidTermReason},
		{"term reason with non-ascii", Term("caf\u00e9"), "", ErrInvalidTermReason},
		{"term reason leading space", Term(" a"), "", ErrInvalidTermReason},
		{"term reason trailing space", Term("a "), "", ErrInvalidTermReason},
		{"term with delay", Command{Action: pull.ActionTerm, Delay: time.Second}, "", ErrInvalidAction},
		{"nak at min", Nak(MinNakDelay), `-NAK {"delay":100000000}`, nil},
		{"nak below min", Nak(MinNakDelay - time.Nanosecond), "", ErrInvalidNakDelay},
		{"nak at max", Nak(MaxNakDelay), `-NAK {"delay":10000000000}`, nil},
		{"nak past max", Nak(MaxNakDelay + time.Nanosecond), "", ErrInvalidNakDelay},
		{"nak zero", Nak(0), "", ErrInvalidNakDelay},
		{"nak negative", Nak(-time.Second), "", ErrInvalidNakDelay},
		{"nak with reason", Command{Action: pull.ActionNak, Delay: time.Second, Reason: "x"}, "", ErrInvalidAction},
		{"ack with delay", Command{Action: pull.ActionAck, Delay: time.Second}, "", ErrInvalidAction},
		{"ack with reason", Command{Action: pull.ActionAck, Reason: "x"}, "", ErrInvalidAction},
		{"zero action", Command{}, "", ErrInvalidAction},
		{"exhausted is no command", Command{Action: pull.ActionExhausted}, "", ErrInvalidAction},
		{"none is no command", Command{Action: pull.ActionNone}, "", ErrInvalidAction},
		{"unknown action", Command{Action: pull.ActionNone + 1}, "", ErrInvalidAction},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte("keep")
			got, err := appendCommand(dst, tt.cmd)
			if !errors.Is(err, tt.err) {
				t.Fatalf("appendCommand() error = %v, want %v", err, tt.err)
			}
			want := "keep" + tt.want
			if string(got) != want {
				t.Errorf("appendCommand() = %q, want %q", got, want)
			}
			// String is the same payload, "invalid" where it is refused.
			wantString := "invalid"
			if tt.err == nil {
				wantString = tt.want
			}
			if diff := cmp.Diff(wantString, tt.cmd.String()); diff != "" {
				t.Errorf("String() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAppendCommandDoesNotAllocate(t *testing.T) {
	var buf [maxCommandLen]byte
	cmds := []Command{Ack(), Nak(MaxNakDelay), Term(strings.Repeat("r", MaxTermReasonLen))}
	allocs := testing.AllocsPerRun(100, func() {
		for _, c := range cmds {
			out, err := appendCommand(buf[:0], c)
			if err != nil || len(out) > maxCommandLen {
				t.Fatal(err, len(out))
			}
		}
	})
	if allocs != 0 {
		t.Errorf("appendCommand allocates %v times", allocs)
	}
}

func TestEnumStrings(t *testing.T) {
	got := []string{opInspect.String(), opNext.String(), opAck.String(), operation(0).String()}
	want := []string{"inspect", "next", "ack", "operation(0)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("String() (-want +got):\n%s", diff)
	}
}

// delivered pulls testAck through a fake so the Delivery is real.
func delivered(t *testing.T, c *Consumer) *Delivery {
	t.Helper()
	res, err := c.Next(context.Background(), &fakeRequester{reply: messageReply(testAck, []byte("p"))})
	if err != nil {
		t.Fatal(err)
	}
	return &res.Delivery
}

func TestAckReceipts(t *testing.T) {
	empty := conn.Reply{Subject: []byte("_INBOX.x.2")}
	id := DeliveryID{StreamSeq: 17, ConsumerSeq: 40, Delivered: 2}
	tests := []struct {
		name    string
		elapsed time.Duration // clock advance between pull and receipt
		reply   conn.Reply
		err     error
		want    Receipt
		wantErr []error
	}{
		{"verified", time.Second, empty, nil, Receipt{Outcome: pull.AckVerified, Action: pull.ActionAck, Delivery: id}, nil},
		{"verified at the deadline", 2 * time.Second, empty, nil, Receipt{Outcome: pull.AckVerified, Action: pull.ActionAck, Delivery: id}, nil},
		{"verified late", 2*time.Second + time.Millisecond, empty, nil, Receipt{Outcome: pull.AckVerifiedLate, Action: pull.ActionAck, Delivery: id, Late: time.Millisecond}, nil},
		{"deadline", 0, conn.Reply{}, &conn.ClosedError{Err: context.DeadlineExceeded}, Receipt{Outcome: pull.AckUncertain, Action: pull.ActionAck, Delivery: id}, []error{ErrNotVerified, context.DeadlineExceeded, conn.ErrClosed}},
		// A kept connection that gave the receipt up (conn.KeepUnanswered):
		// written, so as uncertain as a closed one, never "not sent".
		{"unanswered on a kept connection", 0, conn.Reply{}, fmt.Errorf("%w: %w", conn.ErrUnanswered, context.DeadlineExceeded), Receipt{Outcome: pull.AckUncertain, Action: pull.ActionAck, Delivery: id}, []error{ErrNotVerified, context.DeadlineExceeded, conn.ErrUnanswered}},
		{"connection lost", 0, conn.Reply{}, &conn.ClosedError{Err: conn.ErrServerClosed}, Receipt{Outcome: pull.AckUncertain, Action: pull.ActionAck, Delivery: id}, []error{ErrNotVerified, conn.ErrServerClosed}},
		{"partial write", 0, conn.Reply{}, &conn.ClosedError{Err: io.ErrShortWrite}, Receipt{Outcome: pull.AckUncertain, Action: pull.ActionAck, Delivery: id}, []error{ErrNotVerified, io.ErrShortWrite}},
		{"permission violation", 0, conn.Reply{}, &conn.ServerError{Kind: conn.KindPermission}, Receipt{Outcome: pull.AckUncertain, Action: pull.ActionAck, Delivery: id}, []error{ErrNotVerified}},
		{"unknown requester error", 0, conn.Reply{}, errors.New("x"), Receipt{Outcome: pull.AckUncertain, Action: pull.ActionAck, Delivery: id}, []error{ErrNotVerified}},
		{"no responders", 0, conn.Reply{Subject: []byte("_INBOX.x.2"), Status: 503}, nil, Receipt{Outcome: pull.AckUncertain, Action: pull.ActionAck, Delivery: id}, []error{ErrNotVerified, ErrNoResponders}},
		{"non-empty reply", 0, conn.Reply{Subject: []byte("_INBOX.x.2"), Payload: []byte("x")}, nil, Receipt{Outcome: pull.AckUncertain, Action: pull.ActionAck, Delivery: id}, []error{ErrNotVerified, ErrUnexpectedReply, ErrCloseConnection}},
		{"status reply", 0, conn.Reply{Subject: []byte("_INBOX.x.2"), Status: 404, Description: []byte("No Messages")}, nil, Receipt{Outcome: pull.AckUncertain, Action: pull.ActionAck, Delivery: id}, []error{ErrNotVerified, ErrUnexpectedReply}},
		{"reply with headers", 0, conn.Reply{Subject: []byte("_INBOX.x.2"), Header: []byte("NATS/1.0\r\n\r\n")}, nil, Receipt{Outcome: pull.AckUncertain, Action: pull.ActionAck, Delivery: id}, []error{ErrNotVerified, ErrUnexpectedReply}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &fakeClock{t: time.Unix(1000, 0)}
			c := newTestConsumer(t, clk)
			d := delivered(t, c)
			clk.t = clk.t.Add(tt.elapsed)
			f := &fakeRequester{reply: tt.reply, err: tt.err}
			rec, err := c.Ack(context.Background(), f, d, Ack())
			if diff := cmp.Diff(tt.want, rec); diff != "" {
				t.Errorf("Receipt (-want +got):\n%s", diff)
			}
			if (err == nil) != (len(tt.wantErr) == 0) {
				t.Fatalf("Ack() error = %v, want %v", err, tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !errors.Is(err, w) {
					t.Errorf("Ack() error = %v, does not match %v", err, w)
				}
			}
			if f.delivery || f.subject != testAck || string(f.payload) != "+ACK" || len(f.header) != 0 {
				t.Errorf("request: delivery=%v subject=%q payload=%q", f.delivery, f.subject, f.payload)
			}
		})
	}
}

func TestAckNotWritten(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"closed before", conn.ErrClosed},
		{"no deadline", conn.ErrNoDeadline},
		{"too large", conn.ErrTooLarge},
		{"invalid request", conn.ErrInvalidRequest},
		{"context cancelled before", context.Canceled},
		{"context expired before", context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &fakeClock{}
			c := newTestConsumer(t, clk)
			d := delivered(t, c)
			rec, err := c.Ack(context.Background(), &fakeRequester{err: tt.err}, d, Ack())
			if !errors.Is(err, tt.err) || errors.Is(err, ErrNotVerified) {
				t.Errorf("Ack() error = %v, want %v without ErrNotVerified", err, tt.err)
			}
			if rec != (Receipt{}) {
				t.Errorf("Receipt = %+v, want zero (nothing sent)", rec)
			}
		})
	}
}

func TestAckPayloads(t *testing.T) {
	tests := []struct {
		cmd  Command
		want string
	}{
		{Ack(), "+ACK"},
		{Nak(250 * time.Millisecond), `-NAK {"delay":250000000}`},
		{Term("bad input"), "+TERM bad input"},
	}
	for _, tt := range tests {
		t.Run(tt.cmd.Action.String(), func(t *testing.T) {
			c := newTestConsumer(t, &fakeClock{})
			d := delivered(t, c)
			f := &fakeRequester{reply: conn.Reply{Subject: []byte("_INBOX.x.2")}}
			rec, err := c.Ack(context.Background(), f, d, tt.cmd)
			if err != nil || rec.Outcome != pull.AckVerified || rec.Action != tt.cmd.Action {
				t.Fatalf("Ack() = %+v, %v", rec, err)
			}
			if string(f.payload) != tt.want {
				t.Errorf("payload = %q, want %q", f.payload, tt.want)
			}
		})
	}
}

func TestAckRefusedBeforeSending(t *testing.T) {
	c := newTestConsumer(t, &fakeClock{})
	d := delivered(t, c)
	other := *d
	other.AckSubject.Consumer = "other"
	tests := []struct {
		name string
		d    *Delivery
		cmd  Command
		want error
	}{
		{"nil delivery", nil, Ack(), ErrInvalidDelivery},
		{"zero delivery", &Delivery{}, Ack(), ErrInvalidDelivery},
		{"other consumer", &other, Ack(), ErrInvalidDelivery},
		{"bad delay", d, Nak(time.Millisecond), ErrInvalidNakDelay},
		{"bad reason", d, Term("\x00"), ErrInvalidTermReason},
		{"bad action", d, Command{}, ErrInvalidAction},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRequester{}
			rec, err := c.Ack(context.Background(), f, tt.d, tt.cmd)
			if !errors.Is(err, tt.want) || rec != (Receipt{}) || f.calls != 0 {
				t.Errorf("Ack() = %+v, %v, calls %d; want %v and nothing sent", rec, err, f.calls, tt.want)
			}
		})
	}
}

func TestAckBound(t *testing.T) {
	c := newTestConsumer(t, &fakeClock{})
	d := delivered(t, c)
	f := &fakeRequester{reply: conn.Reply{Subject: []byte("_INBOX.x.2")}}
	before := time.Now()
	if _, err := c.Ack(context.Background(), f, d, Ack()); err != nil {
		t.Fatal(err)
	}
	if f.deadline.IsZero() || f.deadline.Before(before.Add(DefaultOpTimeout)) || f.deadline.After(time.Now().Add(DefaultOpTimeout)) {
		t.Errorf("ack deadline %v, want now + %v", f.deadline, DefaultOpTimeout)
	}
}
