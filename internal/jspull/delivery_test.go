package jspull

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/acksubject"
	"github.com/latent-systems/latent-nats/conn"
)

// v2Ack is a v2 ack subject for validBinding under account hash of
// account.
func v2Ack(account string, consumerSeq int) string {
	return "$JS.ACK._." + acksubject.AccountHash(account) + ".ORDERS.worker.1.5." + strconv.Itoa(consumerSeq) + ".1767322245000000000.0"
}

// TestDeliveryStaleAfterNext: a Delivery is valid until the next Next on
// its Consumer, whatever that Next returns; then Ack refuses it before
// sending anything, rather than acknowledge the later delivery whose
// subject now fills the buffer. Its values stay correct.
func TestDeliveryStaleAfterNext(t *testing.T) {
	later := []struct {
		name  string
		reply conn.Reply
		err   error
	}{
		{"a message", messageReply("$JS.ACK.ORDERS.worker.1.18.41.1767322245000000001.0", []byte("q")), nil},
		{"no message", statusReply(404, "No Messages"), nil},
		{"a refused reply", messageReply("$JS.ACK.OTHER.worker.1.18.41.1.0", nil), nil},
		{"a connection error", conn.Reply{}, &conn.ClosedError{Err: context.DeadlineExceeded}},
	}
	for _, tt := range later {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestConsumer(t, &fakeClock{t: time.Unix(1000, 0)})
			d := *delivered(t, c)
			kept := d.Clone()
			want := DeliveryID{StreamSeq: 17, ConsumerSeq: 40, Delivered: 2}
			if got := d.Subject(); got != testAck {
				t.Fatalf("Subject() before the next pull = %q, want %q", got, testAck)
			}
			_, _ = c.Next(context.Background(), &fakeRequester{reply: tt.reply, err: tt.err})

			if got := d.Subject(); got != "" {
				t.Errorf("stale Subject() = %q, want empty", got)
			}
			if d.ID != want || d.AckSubject.StreamSeq != 17 {
				t.Errorf("stale Delivery values changed: %+v", d)
			}
			f := &fakeRequester{reply: conn.Reply{Subject: []byte("_INBOX.x.3")}}
			for _, stale := range []Delivery{d, d.Clone()} {
				if rec, err := c.Ack(context.Background(), f, &stale, Ack()); !errors.Is(err, ErrInvalidDelivery) || rec != (Receipt{}) || f.calls != 0 {
					t.Errorf("Ack(stale) = %+v, %v, calls %d; want ErrInvalidDelivery and nothing sent", rec, err, f.calls)
				}
			}

			// The clone made in time owns its subject and acknowledges the
			// right delivery.
			rec, err := c.Ack(context.Background(), f, &kept, Ack())
			if err != nil || rec.Delivery != want || f.subject != testAck {
				t.Errorf("Ack(clone) = %+v, %v to %q; want delivery %+v acknowledged on %q", rec, err, f.subject, want, testAck)
			}
			if got := kept.Subject(); got != testAck {
				t.Errorf("clone Subject() = %q, want %q", got, testAck)
			}
		})
	}
}

// TestDeliveryAcrossConsumers: without Options.Scratch each Consumer has
// its own buffer, so a pull on one leaves the Delivery of another valid
// (TestScratchStaleAcrossConsumers for Consumers sharing a Scratch).
func TestDeliveryAcrossConsumers(t *testing.T) {
	a, b := newTestConsumer(t, &fakeClock{}), newTestConsumer(t, &fakeClock{})
	d := delivered(t, a)
	delivered(t, b)
	f := &fakeRequester{reply: conn.Reply{Subject: []byte("_INBOX.x.3")}}
	if _, err := a.Ack(context.Background(), f, d, Ack()); err != nil || f.subject != testAck {
		t.Errorf("Ack() = %v to %q, want the delivery of a acknowledged", err, f.subject)
	}
}

// TestDeliveryInfoAliasesNoBuffer: the strings of Delivery.AckSubject stay
// what they were when a later delivery rewrites the Scratch's buffer, and
// none of them points into it. A v2 account hash is copied once and shared
// by the deliveries that carry the same hash.
func TestDeliveryInfoAliasesNoBuffer(t *testing.T) {
	c := newTestConsumer(t, &fakeClock{})
	pull := func(subject string) Delivery {
		t.Helper()
		res, err := c.Next(context.Background(), &fakeRequester{reply: messageReply(subject, []byte("p"))})
		if err != nil || res.Kind != KindMessage {
			t.Fatalf("Next(%q) = %v, %v", subject, res.Kind, err)
		}
		return res.Delivery
	}
	first := pull(v2Ack("tenant-a", 1))
	wantFirst := first.AckSubject
	second := pull(v2Ack("tenant-a", 2))
	third := pull(v2Ack("tenant-b", 3))
	if diff := cmp.Diff(wantFirst, first.AckSubject); diff != "" {
		t.Errorf("first AckSubject after later pulls (-want +got):\n%s", diff)
	}
	if got, want := first.AckSubject.AccountHash, acksubject.AccountHash("tenant-a"); got != want {
		t.Errorf("first account hash %q, want %q", got, want)
	}
	if got, want := third.AckSubject.AccountHash, acksubject.AccountHash("tenant-b"); got != want {
		t.Errorf("third account hash %q, want %q", got, want)
	}
	if unsafe.StringData(first.AckSubject.AccountHash) != unsafe.StringData(second.AckSubject.AccountHash) {
		t.Error("two deliveries with the same account hash hold two copies")
	}
	lo := uintptr(unsafe.Pointer(&c.s.ack.buf[0]))
	hi := lo + uintptr(len(c.s.ack.buf))
	for _, d := range []Delivery{first, second, third} {
		for _, s := range []string{d.AckSubject.Stream, d.AckSubject.Consumer, d.AckSubject.AccountHash} {
			if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); p >= lo && p < hi {
				t.Errorf("AckSubject string %q points into the Scratch's buffer", s)
			}
		}
		if d.AckSubject.Stream != "ORDERS" || d.AckSubject.Consumer != "worker" {
			t.Errorf("AckSubject names %q/%q, want ORDERS/worker", d.AckSubject.Stream, d.AckSubject.Consumer)
		}
	}
}

// TestDeliverySubjectAtMaxLen: an ack subject of acksubject.MaxLen bytes
// fits the Scratch's buffer; one byte more is refused before it is
// copied (TestNextForeignReplies).
func TestDeliverySubjectAtMaxLen(t *testing.T) {
	b := validBinding()
	b.Stream = strings.Repeat("S", acksubject.MaxNameLen)
	b.Consumer = strings.Repeat("C", acksubject.MaxNameLen)
	c, err := NewConsumer(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	info := acksubject.Info{
		Form: acksubject.FormV2, AccountHash: acksubject.AccountHash("t"), Stream: b.Stream, Consumer: b.Consumer,
		Delivered: 1<<64 - 1, StreamSeq: 1<<64 - 1, ConsumerSeq: 1<<64 - 1, Pending: 1<<64 - 1, Timestamp: 1<<63 - 1,
	}
	raw, err := info.Append(nil)
	subject := string(raw)
	if err != nil || len(subject) != acksubject.MaxLen {
		t.Fatalf("Append() = %d bytes, %v; want %d", len(subject), err, acksubject.MaxLen)
	}
	res, err := c.Next(context.Background(), &fakeRequester{reply: messageReply(subject, nil)})
	if err != nil || res.Kind != KindMessage || res.Delivery.Subject() != subject {
		t.Fatalf("Next() = %v, %v, subject %d bytes; want the message with its %d-byte subject", res.Kind, err, len(res.Delivery.Subject()), len(subject))
	}
	if diff := cmp.Diff(info, res.Delivery.AckSubject); diff != "" {
		t.Errorf("AckSubject (-want +got):\n%s", diff)
	}
}
