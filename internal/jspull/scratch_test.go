package jspull

import (
	"context"
	"errors"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/acksubject"
	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/pull"
)

// otherBinding is a second binding of validBinding's stream, on its own
// consumer and filter subject.
func otherBinding() Binding {
	b := validBinding()
	b.Consumer = "shipper"
	b.FilterSubject = "orders.shipped"
	return b
}

// otherAck is an ack subject of otherBinding.
const otherAck = "$JS.ACK.ORDERS.shipper.1.9.8.1767322245000000000.0"

// otherMessage is a delivered message for otherBinding.
func otherMessage(ackSubject string) conn.Reply {
	return conn.Reply{Subject: []byte("orders.shipped"), ReplyTo: []byte(ackSubject), Payload: []byte("s"), Forwarded: true}
}

// sharingConsumers returns a consumer of validBinding and one of
// otherBinding sharing one Scratch.
func sharingConsumers(t *testing.T, clk *fakeClock) (a, b *Consumer, s *Scratch) {
	t.Helper()
	s = new(Scratch)
	a, err := NewConsumer(validBinding(), Options{Now: clk.now, Scratch: s})
	if err != nil {
		t.Fatal(err)
	}
	b, err = NewConsumer(otherBinding(), Options{Now: clk.now, Scratch: s})
	if err != nil {
		t.Fatal(err)
	}
	return a, b, s
}

func TestNewConsumerScratch(t *testing.T) {
	own1, own2 := newTestConsumer(t, &fakeClock{}), newTestConsumer(t, &fakeClock{})
	if own1.Scratch() == nil || own1.Scratch() == own2.Scratch() {
		t.Errorf("without Options.Scratch: scratches %p and %p, want two of their own", own1.Scratch(), own2.Scratch())
	}
	a, b, s := sharingConsumers(t, &fakeClock{})
	if a.Scratch() != s || b.Scratch() != s {
		t.Errorf("with Options.Scratch %p: scratches %p and %p, want it", s, a.Scratch(), b.Scratch())
	}
}

// TestConsumerHoldsNoBuffer: the buffers are in the Scratch, not in the
// Consumer, so that Consumers sharing one hold no copy of them.
func TestConsumerHoldsNoBuffer(t *testing.T) {
	if got := unsafe.Sizeof(Consumer{}); got >= uintptr(acksubject.MaxLen) {
		t.Errorf("unsafe.Sizeof(Consumer{}) = %d, want less than the ack-subject buffer (%d)", got, acksubject.MaxLen)
	}
	if got, want := unsafe.Sizeof(Scratch{}), uintptr(maxCommandLen+acksubject.MaxLen); got < want {
		t.Errorf("unsafe.Sizeof(Scratch{}) = %d, want at least the two buffers (%d)", got, want)
	}
}

// TestScratchStaleAcrossConsumers: a Delivery of one Consumer is made stale
// by the next Next of another Consumer sharing its Scratch, whatever that
// Next returns; Ack then refuses it before sending anything, rather than
// acknowledge on the subject the other delivery wrote into the buffer.
func TestScratchStaleAcrossConsumers(t *testing.T) {
	later := []struct {
		name  string
		reply conn.Reply
		err   error
	}{
		{"a message", otherMessage(otherAck), nil},
		{"no message", statusReply(404, "No Messages"), nil},
		{"a refused reply", otherMessage("$JS.ACK.OTHER.shipper.1.9.8.1.0"), nil},
		{"a connection error", conn.Reply{}, &conn.ClosedError{Err: context.DeadlineExceeded}},
	}
	for _, tt := range later {
		t.Run(tt.name, func(t *testing.T) {
			a, b, _ := sharingConsumers(t, &fakeClock{t: time.Unix(1000, 0)})
			d := *delivered(t, a)
			kept := d.Clone()
			want := DeliveryID{StreamSeq: 17, ConsumerSeq: 40, Delivered: 2}
			_, _ = b.Next(context.Background(), &fakeRequester{reply: tt.reply, err: tt.err})

			if got := d.Subject(); got != "" {
				t.Errorf("stale Subject() = %q, want empty", got)
			}
			f := &fakeRequester{reply: conn.Reply{Subject: []byte("_INBOX.x.3")}}
			for _, stale := range []Delivery{d, d.Clone()} {
				if rec, err := a.Ack(context.Background(), f, &stale, Ack()); !errors.Is(err, ErrInvalidDelivery) || rec != (Receipt{}) || f.calls != 0 {
					t.Errorf("Ack(stale) = %+v, %v, calls %d; want ErrInvalidDelivery and nothing sent", rec, err, f.calls)
				}
			}
			rec, err := a.Ack(context.Background(), f, &kept, Ack())
			if err != nil || rec.Delivery != want || f.subject != testAck {
				t.Errorf("Ack(clone) = %+v, %v to %q; want delivery %+v acknowledged on %q", rec, err, f.subject, want, testAck)
			}
		})
	}
}

// TestScratchOnlyNextEndsValidity: Inspect, and an Ack refused or sent,
// by another Consumer sharing the Scratch leave a Delivery valid.
func TestScratchOnlyNextEndsValidity(t *testing.T) {
	a, b, _ := sharingConsumers(t, &fakeClock{t: time.Unix(1000, 0)})
	d := delivered(t, a)
	if _, err := b.Inspect(context.Background(), &fakeRequester{reply: infoReply(matchingInfo)}); !errors.Is(err, ErrProfileMismatch) {
		// matchingInfo names validBinding's consumer, not otherBinding's.
		t.Fatalf("b.Inspect() = %v, want a profile mismatch", err)
	}
	f := &fakeRequester{reply: conn.Reply{Subject: []byte("_INBOX.x.3")}}
	if _, err := b.Ack(context.Background(), f, d, Term("not mine")); !errors.Is(err, ErrInvalidDelivery) || f.calls != 0 {
		t.Fatalf("b.Ack(a's delivery) = %v, calls %d; want ErrInvalidDelivery and nothing sent", err, f.calls)
	}
	rec, err := a.Ack(context.Background(), f, d, Ack())
	if err != nil || rec.Outcome != pull.AckVerified || f.subject != testAck || string(f.payload) != "+ACK" {
		t.Errorf("a.Ack() = %+v, %v, %q to %q; want +ACK verified on %q", rec, err, f.payload, f.subject, testAck)
	}
}

// TestScratchAcksGoToOwnSubjects: Consumers sharing a Scratch, visited in
// turn, each acknowledge their own delivery on its own subject with their
// own command.
func TestScratchAcksGoToOwnSubjects(t *testing.T) {
	a, b, _ := sharingConsumers(t, &fakeClock{t: time.Unix(1000, 0)})
	type visit struct {
		c     *Consumer
		reply conn.Reply
		cmd   Command
	}
	type sent struct{ Subject, Payload string }
	visits := []visit{
		{a, messageReply(testAck, []byte("p")), Term("bad input from a")},
		{b, otherMessage(otherAck), Ack()},
		{a, messageReply(v2Ack("tenant", 41), []byte("p")), Nak(time.Second)},
		{b, otherMessage("$JS.ACK.ORDERS.shipper.2.10.9.1767322245000000000.0"), Term("")},
	}
	want := []sent{
		{testAck, "+TERM bad input from a"},
		{otherAck, "+ACK"},
		{v2Ack("tenant", 41), `-NAK {"delay":1000000000}`},
		{"$JS.ACK.ORDERS.shipper.2.10.9.1767322245000000000.0", "+TERM"},
	}
	var got []sent
	for _, v := range visits {
		res, err := v.c.Next(context.Background(), &fakeRequester{reply: v.reply})
		if err != nil || res.Kind != KindMessage {
			t.Fatalf("Next() = %v, %v", res.Kind, err)
		}
		f := &fakeRequester{reply: conn.Reply{Subject: []byte("_INBOX.x.3")}}
		if rec, err := v.c.Ack(context.Background(), f, &res.Delivery, v.cmd); err != nil || rec.Outcome != pull.AckVerified {
			t.Fatalf("Ack() = %+v, %v", rec, err)
		}
		got = append(got, sent{f.subject, string(f.payload)})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("acknowledgements (-want +got):\n%s", diff)
	}
}

// TestSharedVisitAllocations: visits of two Consumers sharing a Scratch,
// one after the other (inspect, next, ack each), allocate nothing, as
// TestVisitAllocations asserts for one Consumer.
func TestSharedVisitAllocations(t *testing.T) {
	a, b, _ := sharingConsumers(t, &fakeClock{t: time.Unix(1000, 0)})
	infoA := &fakeRequester{reply: infoReply(matchingInfo)}
	nextA := &fakeRequester{reply: messageReply(testAck, []byte("hello"))}
	nextB := &fakeRequester{reply: otherMessage("$JS.ACK._." + acksubject.AccountHash("tenant") + ".ORDERS.shipper.1.9.8.1767322245000000000.0")}
	ack := &fakeRequester{reply: conn.Reply{Subject: []byte("_INBOX.x.3")}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	allocs := testing.AllocsPerRun(50, func() {
		if _, err := a.Inspect(ctx, fastFake{infoA}); err != nil {
			t.Fatal(err)
		}
		for _, v := range []struct {
			c    *Consumer
			next *fakeRequester
		}{{a, nextA}, {b, nextB}} {
			res, err := v.c.Next(ctx, fastFake{v.next})
			if err != nil || res.Kind != KindMessage {
				t.Fatal(res.Kind, err)
			}
			if _, err := v.c.Ack(ctx, fastFake{ack}, &res.Delivery, Ack()); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("two visits sharing a Scratch allocate %v times, want 0", allocs)
	}
}
