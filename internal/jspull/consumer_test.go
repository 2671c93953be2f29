package jspull

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/conn"
)

func infoReply(body string) conn.Reply {
	return conn.Reply{Subject: []byte("_INBOX.x.1"), Payload: []byte(body)}
}

func TestInspect(t *testing.T) {
	f := &fakeRequester{reply: infoReply(matchingInfo)}
	p, err := newTestConsumer(t, &fakeClock{}).Inspect(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Pending{NumPending: 7, NumAckPending: 1, NumRedelivered: 2, Leader: true}, p); diff != "" {
		t.Errorf("Pending (-want +got):\n%s", diff)
	}
	if f.delivery || f.subject != "$JS.API.CONSUMER.INFO.ORDERS.worker" || len(f.payload) != 0 || len(f.header) != 0 {
		t.Errorf("request: delivery=%v subject=%q payload=%q", f.delivery, f.subject, f.payload)
	}
	if f.deadline.IsZero() {
		t.Error("request without deadline")
	}
}

func TestInspectProfileErrorKeepsPending(t *testing.T) {
	f := &fakeRequester{reply: infoReply(string(infoWith(t, nil, map[string]any{"max_waiting": 512, "ack_policy": "all"})))}
	p, err := newTestConsumer(t, &fakeClock{}).Inspect(context.Background(), f)
	var pe *ProfileError
	if !errors.As(err, &pe) || !errors.Is(err, ErrProfileMismatch) {
		t.Fatalf("Inspect() = %v, want *ProfileError", err)
	}
	want := []Mismatch{{"ack_policy", "explicit", "all"}, {"max_waiting", "1", "512"}}
	if diff := cmp.Diff(want, pe.Mismatches); diff != "" {
		t.Errorf("Mismatches (-want +got):\n%s", diff)
	}
	if p.NumPending != 7 {
		t.Errorf("Pending = %+v, want the counts", p)
	}
}

func TestInspectErrors(t *testing.T) {
	tests := []struct {
		name  string
		reply conn.Reply
		err   error
		want  []error
	}{
		{"no responders", conn.Reply{Subject: []byte("_INBOX.x.1"), Status: 503}, nil, []error{ErrNoResponders}},
		{"other status", conn.Reply{Subject: []byte("_INBOX.x.1"), Status: 408, Description: []byte("Request Timeout")}, nil, []error{ErrUnknownStatus, ErrCloseConnection}},
		{"forwarded", conn.Reply{Subject: []byte("a"), Payload: []byte(matchingInfo), Forwarded: true}, nil, []error{ErrUnexpectedReply, ErrCloseConnection}},
		{"with reply subject", conn.Reply{Subject: []byte("_INBOX.x.1"), ReplyTo: []byte("r"), Payload: []byte(matchingInfo)}, nil, []error{ErrUnexpectedReply}},
		{"with headers", conn.Reply{Subject: []byte("_INBOX.x.1"), Header: []byte("NATS/1.0\r\nA: b\r\n\r\n"), Payload: []byte(matchingInfo)}, nil, []error{ErrUnexpectedReply}},
		{"malformed", infoReply(`{"type":`), nil, []error{ErrMalformedInfo}},
		{"empty body", infoReply(``), nil, []error{ErrMalformedInfo}},
		{"consumer not found", infoReply(`{"type":"io.nats.jetstream.api.v1.consumer_info_response","error":{"code":404,"err_code":10014,"description":"consumer not found"}}`), nil, []error{ErrConsumerNotFound}},
		{"stream not found", infoReply(`{"type":"io.nats.jetstream.api.v1.consumer_info_response","error":{"code":404,"err_code":10059,"description":"stream not found"}}`), nil, []error{ErrStreamNotFound}},
		{"permission violation", conn.Reply{}, &conn.ServerError{Kind: conn.KindPermission}, []error{}},
		{"deadline", conn.Reply{}, &conn.ClosedError{Err: context.DeadlineExceeded}, []error{conn.ErrClosed, context.DeadlineExceeded}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRequester{reply: tt.reply, err: tt.err}
			_, err := newTestConsumer(t, &fakeClock{}).Inspect(context.Background(), f)
			if err == nil {
				t.Fatal("Inspect() = nil error")
			}
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Errorf("Inspect() = %v, does not match %v", err, w)
				}
			}
		})
	}
}

func TestInspectPermissionErrorIsTyped(t *testing.T) {
	f := &fakeRequester{err: &conn.ServerError{Kind: conn.KindPermission}}
	_, err := newTestConsumer(t, &fakeClock{}).Inspect(context.Background(), f)
	var se *conn.ServerError
	if !errors.As(err, &se) || se.Kind != conn.KindPermission {
		t.Fatalf("Inspect() = %v, want the *conn.ServerError", err)
	}
}

func TestNewConsumerOptions(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		field string
	}{
		{"zero", Options{}, ""},
		{"margin at min", Options{NextMargin: MinNextMargin}, ""},
		{"margin below min", Options{NextMargin: MinNextMargin - 1}, "next_margin"},
		{"margin at max", Options{NextMargin: MaxNextMargin}, ""},
		{"margin past max", Options{NextMargin: MaxNextMargin + 1}, "next_margin"},
		{"op timeout at min", Options{OpTimeout: MinOpTimeout}, ""},
		{"op timeout below min", Options{OpTimeout: MinOpTimeout - 1}, "op_timeout"},
		{"op timeout at max", Options{OpTimeout: MaxOpTimeout}, ""},
		{"op timeout past max", Options{OpTimeout: MaxOpTimeout + 1}, "op_timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewConsumer(validBinding(), tt.opts)
			if got := bindingField(err); got != tt.field {
				t.Errorf("NewConsumer() = %v, want field %q", err, tt.field)
			}
		})
	}
	if _, err := NewConsumer(Binding{}, Options{}); !errors.Is(err, ErrInvalidBinding) {
		t.Errorf("NewConsumer(zero binding) = %v, want ErrInvalidBinding", err)
	}
}

func TestInspectBoundKeepsEarlierDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	want, _ := ctx.Deadline()
	f := &fakeRequester{reply: infoReply(matchingInfo)}
	if _, err := newTestConsumer(t, &fakeClock{}).Inspect(ctx, f); err != nil {
		t.Fatal(err)
	}
	if !f.deadline.Equal(want) {
		t.Errorf("deadline %v, want the caller's %v", f.deadline, want)
	}
}

// TestVisitAllocations counts allocations of a full visit against the fake:
// inspect, next, ack. None: the ack subject is kept in the Consumer's
// buffer (it used to be copied into a string per delivery, one allocation
// per visit), and a v2 account hash is copied at the first delivery only.
func TestVisitAllocations(t *testing.T) {
	tests := []struct{ name, ack string }{
		{"classic", testAck},
		{"v2", v2Ack("tenant", 40)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &fakeClock{t: time.Unix(1000, 0)}
			c := newTestConsumer(t, clk)
			info := &fakeRequester{reply: infoReply(matchingInfo)}
			next := &fakeRequester{reply: messageReply(tt.ack, []byte("hello"))}
			ack := &fakeRequester{reply: conn.Reply{Subject: []byte("_INBOX.x.3")}}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			allocs := testing.AllocsPerRun(50, func() {
				if _, err := c.Inspect(ctx, fastFake{info}); err != nil {
					t.Fatal(err)
				}
				res, err := c.Next(ctx, fastFake{next})
				if err != nil || res.Kind != KindMessage {
					t.Fatal(res.Kind, err)
				}
				if _, err := c.Ack(ctx, fastFake{ack}, &res.Delivery, Ack()); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("a visit allocates %v times, want 0", allocs)
			}
		})
	}
}

// fastFake answers like fakeRequester without recording (recording
// allocates).
type fastFake struct{ f *fakeRequester }

func (f fastFake) Exchange(context.Context, time.Time, conn.Call) (conn.Reply, error) {
	return f.f.reply, f.f.err
}

// TestCallerContextPassedThrough: every operation hands the Requester the
// caller's own context, whose end interrupts the request, and its bound as
// an explicit deadline; no context of the package's own (a context whose
// Done would not fire at its deadline) stands in between.
func TestCallerContextPassedThrough(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newTestConsumer(t, &fakeClock{})
	info := &fakeRequester{reply: infoReply(matchingInfo)}
	next := &fakeRequester{reply: messageReply(testAck, []byte("p"))}
	ack := &fakeRequester{reply: conn.Reply{Subject: []byte("_INBOX.x.3")}}
	start := time.Now()
	if _, err := c.Inspect(ctx, info); err != nil {
		t.Fatal(err)
	}
	res, err := c.Next(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Ack(ctx, ack, &res.Delivery, Ack()); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		f     *fakeRequester
		bound time.Duration
	}{
		{"inspect", info, DefaultOpTimeout},
		{"next", next, RequestExpires + DefaultNextMargin},
		{"ack", ack, DefaultOpTimeout},
	} {
		if tt.f.ctx != ctx {
			t.Errorf("%s: the Requester got another context than the caller's", tt.name)
		}
		if tt.f.deadline.Before(start.Add(tt.bound)) || tt.f.deadline.After(time.Now().Add(tt.bound)) {
			t.Errorf("%s: deadline %v, want %v from the call", tt.name, tt.f.deadline, tt.bound)
		}
	}
}
