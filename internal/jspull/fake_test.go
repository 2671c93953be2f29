package jspull

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

	calls    int
	delivery bool // the last call was a pull (Call.Delivery)
	subject  string
	header   []byte
	payload  []byte
	deadline time.Time       // the deadline passed
	ctx      context.Context // the context passed
}

func (f *fakeRequester) Exchange(ctx context.Context, deadline time.Time, call conn.Call) (conn.Reply, error) {
	f.calls++
	f.subject = string(call.Subject)
	f.header = append([]byte(nil), call.Header...)
	f.payload = append([]byte(nil), call.Payload...)
	f.delivery = call.Delivery
	f.deadline = deadline
	f.ctx = ctx
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
