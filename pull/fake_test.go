package pull

import (
	"context"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
)

// fakeRequester answers every request with one scripted reply or error and
// records what was asked.
type fakeRequester struct {
	reply conn.Reply
	err   error

	calls       int
	delivery    bool // the last call was RequestDelivery
	bytes       bool // the last call was RequestBytes
	subject     string
	header      []byte
	payload     []byte
	deadline    time.Time
	hasDeadline bool
}

func (f *fakeRequester) record(ctx context.Context, subject string, header, payload []byte) {
	f.calls++
	f.subject = subject
	f.header = append([]byte(nil), header...)
	f.payload = append([]byte(nil), payload...)
	f.deadline, f.hasDeadline = ctx.Deadline()
}

func (f *fakeRequester) Request(ctx context.Context, subject string, header, payload []byte) (conn.Reply, error) {
	f.record(ctx, subject, header, payload)
	f.delivery, f.bytes = false, false
	return f.reply, f.err
}

func (f *fakeRequester) RequestBytes(ctx context.Context, subject []byte, header, payload []byte) (conn.Reply, error) {
	f.record(ctx, string(subject), header, payload)
	f.delivery, f.bytes = false, true
	return f.reply, f.err
}

func (f *fakeRequester) RequestDelivery(ctx context.Context, subject string, header, payload []byte) (conn.Reply, error) {
	f.record(ctx, subject, header, payload)
	f.delivery, f.bytes = true, false
	return f.reply, f.err
}

// fakeClock is an injected clock that moves only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func newTestConsumer(t *testing.T, clk *fakeClock) *Consumer {
	t.Helper()
	c, err := NewConsumer(validBinding(), Options{Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// statusReply is a status message as the broker sends it to a reply subject.
func statusReply(code int, desc string) conn.Reply {
	return conn.Reply{Subject: []byte("_INBOX.x.1"), Status: code, Description: []byte(desc), Header: []byte("NATS/1.0 ...\r\n\r\n")}
}

// messageReply is a delivered message for validBinding.
func messageReply(ackSubject string, payload []byte) conn.Reply {
	return conn.Reply{Subject: []byte("orders.new"), ReplyTo: []byte(ackSubject), Payload: payload, Forwarded: true}
}

const testAck = "$JS.ACK.ORDERS.worker.2.17.40.1767322245000000000.3"
