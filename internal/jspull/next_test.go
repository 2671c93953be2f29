package jspull

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/acksubject"
	"github.com/latent-systems/latent-nats/conn"
)

func TestNextBody(t *testing.T) {
	c := newTestConsumer(t, &fakeClock{})
	want := `{"batch":1,"no_wait":true,"expires":100000000,"max_bytes":10240}`
	if got := string(c.NextBody()); got != want {
		t.Fatalf("NextBody() = %s, want %s", got, want)
	}
	var req struct {
		Batch    int   `json:"batch"`
		NoWait   bool  `json:"no_wait"`
		Expires  int64 `json:"expires"`
		MaxBytes int   `json:"max_bytes"`
	}
	dec := json.NewDecoder(bytes.NewReader(c.NextBody()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		t.Fatal(err)
	}
}

func TestNextStatuses(t *testing.T) {
	// Each status line is spelled as nats-server 2.14.6 writes it.
	tests := []struct {
		code int
		desc string
		want Kind
	}{
		{404, "No Messages", KindNoMessages},
		{408, "Request Timeout", KindRequestTimeout},
		{408, "Requests Pending", KindRequestsPending},
		{408, "Interest Expired", KindInterestExpired},
		{409, "Exceeded MaxWaiting", KindMaxWaiting},
		{409, "Message Size Exceeds MaxBytes", KindMessageTooLarge},
		{409, "Exceeded MaxRequestBatch of 1", KindMaxRequestBatch},
		{409, "Exceeded MaxRequestExpires of 100ms", KindMaxRequestExpires},
		{409, "Exceeded MaxRequestMaxBytes of 10240", KindMaxRequestMaxBytes},
		{409, "Consumer Deleted", KindConsumerDeleted},
		{409, "Consumer is push based", KindPushBased},
		{409, "Leadership Change", KindLeadershipChange},
		{409, "Server Shutdown", KindServerShutdown},
		{409, "Batch Completed", KindBatchCompleted},
		{503, "", KindNoResponders},
		{400, "Bad Request - json: cannot unmarshal string into Go value of type int", KindBadRequest},
		{400, "Bad Request - heartbeat value too large", KindBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.want.String()+"/"+tt.desc, func(t *testing.T) {
			f := &fakeRequester{reply: statusReply(tt.code, tt.desc)}
			res, err := newTestConsumer(t, &fakeClock{}).Next(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(Result{Kind: tt.want}, res, cmp.AllowUnexported(Delivery{})); diff != "" {
				t.Errorf("Result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNextUnknownStatus(t *testing.T) {
	tests := []struct {
		name string
		code int
		desc string
	}{
		{"idle heartbeat", 100, "Idle Heartbeat"},
		{"required api level", 412, "Required Api Level"},
		{"wrong pin id", 423, "Nats-Wrong-Pin-Id"},
		{"pin id mismatch", 423, "Nats-Pin-Id mismatch"},
		{"404 other text", 404, "No Results"},
		{"404 lower case", 404, "no messages"},
		{"408 empty", 408, ""},
		{"409 unknown", 409, "Something Else"},
		{"409 prefix without value", 409, "Exceeded MaxRequestBatch of "},
		{"400 without reason", 400, "Bad Request - "},
		{"400 other", 400, "Bad"},
		{"503 with text", 503, "No Responders"},
		{"500", 500, "Internal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRequester{reply: statusReply(tt.code, tt.desc)}
			_, err := newTestConsumer(t, &fakeClock{}).Next(context.Background(), f)
			if !errors.Is(err, ErrCloseConnection) || !errors.Is(err, ErrUnknownStatus) {
				t.Fatalf("Next() = %v, want ErrUnknownStatus and ErrCloseConnection", err)
			}
			if strings.Contains(err.Error(), tt.desc) && tt.desc != "" {
				t.Errorf("error %q carries the broker's text", err)
			}
		})
	}
}

func TestNextMessage(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	c := newTestConsumer(t, clk)
	f := &fakeRequester{reply: messageReply(testAck, []byte("hello"))}
	res, err := c.Next(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if !f.delivery || f.subject != "$JS.API.CONSUMER.MSG.NEXT.ORDERS.worker" || string(f.payload) != string(c.NextBody()) || len(f.header) != 0 {
		t.Errorf("request: delivery=%v subject=%q payload=%q header=%q", f.delivery, f.subject, f.payload, f.header)
	}
	want := DeliveryID{StreamSeq: 17, ConsumerSeq: 40, Delivered: 2}
	if diff := cmp.Diff(want, res.Delivery.ID); diff != "" {
		t.Errorf("DeliveryID (-want +got):\n%s", diff)
	}
	if res.Kind != KindMessage || string(res.Payload) != "hello" || res.Delivery.Subject() != testAck {
		t.Errorf("Result = %+v", res)
	}
	if got, want := res.Delivery.AckDeadline, clk.t.Add(2*time.Second); !got.Equal(want) {
		t.Errorf("AckDeadline = %v, want %v", got, want)
	}
	if res.Delivery.AckSubject.Form != acksubject.FormClassic || res.Delivery.AckSubject.Pending != 3 {
		t.Errorf("AckSubject = %+v", res.Delivery.AckSubject)
	}
}

func TestNextMessageV2AckSubject(t *testing.T) {
	v2 := "$JS.ACK._." + acksubject.AccountHash("tenant") + ".ORDERS.worker.1.5.5.1767322245000000000.0"
	f := &fakeRequester{reply: messageReply(v2, []byte("x"))}
	res, err := newTestConsumer(t, &fakeClock{}).Next(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if res.Delivery.AckSubject.Form != acksubject.FormV2 || res.Delivery.Subject() != v2 {
		t.Errorf("Delivery = %+v", res.Delivery)
	}
}

func TestNextPayloadCeiling(t *testing.T) {
	ceiling := validBinding().PayloadCeiling
	f := &fakeRequester{reply: messageReply(testAck, make([]byte, ceiling))}
	if _, err := newTestConsumer(t, &fakeClock{}).Next(context.Background(), f); err != nil {
		t.Errorf("payload at the ceiling: %v", err)
	}
	f = &fakeRequester{reply: messageReply(testAck, make([]byte, ceiling+1))}
	_, err := newTestConsumer(t, &fakeClock{}).Next(context.Background(), f)
	if !errors.Is(err, ErrOverCeiling) || !errors.Is(err, ErrCloseConnection) {
		t.Errorf("payload past the ceiling: %v, want ErrOverCeiling", err)
	}
}

func TestNextForeignReplies(t *testing.T) {
	msg := func(edit func(*conn.Reply)) conn.Reply {
		r := messageReply(testAck, []byte("x"))
		edit(&r)
		return r
	}
	tests := []struct {
		name  string
		reply conn.Reply
		want  error
	}{
		{"message on the reply subject", msg(func(r *conn.Reply) { r.Forwarded = false }), ErrUnexpectedReply},
		{"message without reply", msg(func(r *conn.Reply) { r.ReplyTo = nil }), ErrUnexpectedReply},
		{"message from another subject", msg(func(r *conn.Reply) { r.Subject = []byte("orders.old") }), ErrWrongConsumer},
		{"reply not an ack subject", msg(func(r *conn.Reply) { r.ReplyTo = []byte("_INBOX.other.1") }), ErrBadAckSubject},
		{"ack subject with 10 tokens", msg(func(r *conn.Reply) { r.ReplyTo = []byte("$JS.ACK.ORDERS.worker.1.1.1.1.0.9") }), ErrBadAckSubject},
		{"ack subject with zero sequence", msg(func(r *conn.Reply) { r.ReplyTo = []byte("$JS.ACK.ORDERS.worker.1.0.1.1.0") }), ErrBadAckSubject},
		{"ack subject too long", msg(func(r *conn.Reply) { r.ReplyTo = bytes.Repeat([]byte("a"), acksubject.MaxLen+1) }), ErrBadAckSubject},
		{"ack subject of another stream", msg(func(r *conn.Reply) { r.ReplyTo = []byte("$JS.ACK.OTHER.worker.1.1.1.1.0") }), ErrWrongConsumer},
		{"ack subject of another consumer", msg(func(r *conn.Reply) { r.ReplyTo = []byte("$JS.ACK.ORDERS.other.1.1.1.1.0") }), ErrWrongConsumer},
		{"status with payload", conn.Reply{Subject: []byte("_INBOX.x.1"), Status: 404, Description: []byte("No Messages"), Payload: []byte("x")}, ErrUnexpectedReply},
		{"status with reply subject", conn.Reply{Subject: []byte("_INBOX.x.1"), Status: 404, Description: []byte("No Messages"), ReplyTo: []byte("a")}, ErrUnexpectedReply},
		{"forwarded status", conn.Reply{Subject: []byte("orders.new"), Status: 404, Description: []byte("No Messages"), Forwarded: true}, ErrUnexpectedReply},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRequester{reply: tt.reply}
			_, err := newTestConsumer(t, &fakeClock{}).Next(context.Background(), f)
			var re *ReplyError
			if !errors.Is(err, tt.want) || !errors.Is(err, ErrCloseConnection) || !errors.As(err, &re) || re.op != opNext {
				t.Fatalf("Next() = %v, want %v closing the connection", err, tt.want)
			}
		})
	}
}

// TestNextUnsupportedAck: an ack subject of a form the broker writes but
// the profile does not support (a JetStream domain in the v2 form, or the
// v2 form with more tokens) is ErrUnsupportedAck, which keeps the
// connection; a subject that is merely long or malformed stays
// ErrBadAckSubject, which closes it.
func TestNextUnsupportedAck(t *testing.T) {
	const hash = "szMpdrwD"
	tests := []struct {
		name, reply string
		want        error
	}{
		{"v2 with a domain", "$JS.ACK.hub." + hash + ".ORDERS.worker.2.17.40.1767322245000000000.3", ErrUnsupportedAck},
		{"v2 with a domain of another stream", "$JS.ACK.hub." + hash + ".OTHER.worker.2.17.40.1767322245000000000.3", ErrUnsupportedAck},
		{"v2 with a twelfth token", "$JS.ACK._." + hash + ".ORDERS.worker.2.17.40.1767322245000000000.3.x7Yq", ErrUnsupportedAck},
		{"v2 domain with a twelfth token", "$JS.ACK.hub." + hash + ".ORDERS.worker.2.17.40.1767322245000000000.3.x7Yq", ErrUnsupportedAck},
		{"twelve tokens without a v2 hash", "$JS.ACK.ORDERS.worker.2.17.40.1767322245000000000.3.a.b.c", ErrBadAckSubject},
		{"twelve tokens of another prefix", "$JS.ACX._." + hash + ".ORDERS.worker.2.17.40.1767322245000000000.3.x", ErrBadAckSubject},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRequester{reply: messageReply(tt.reply, []byte("x"))}
			res, err := newTestConsumer(t, &fakeClock{}).Next(context.Background(), f)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Next() = %+v, %v, want %v", res, err, tt.want)
			}
			if closes := errors.Is(err, ErrCloseConnection); closes != (tt.want != ErrUnsupportedAck) {
				t.Errorf("Next() = %v: closes the connection %v", err, closes)
			}
			if res.Kind != 0 || res.Delivery.ID != (DeliveryID{}) {
				t.Errorf("Next() read a delivery: %+v", res)
			}
		})
	}
}

func TestNextBound(t *testing.T) {
	f := &fakeRequester{reply: statusReply(404, "No Messages")}
	start := time.Now()
	if _, err := newTestConsumer(t, &fakeClock{}).Next(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	limit := start.Add(RequestExpires + DefaultNextMargin)
	if f.deadline.IsZero() || f.deadline.After(time.Now().Add(RequestExpires+DefaultNextMargin)) || f.deadline.Before(limit.Add(-time.Second)) {
		t.Errorf("request deadline %v, want about %v", f.deadline, limit)
	}
	// An earlier caller deadline is kept as it is.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	want, _ := ctx.Deadline()
	if _, err := newTestConsumer(t, &fakeClock{}).Next(ctx, f); err != nil {
		t.Fatal(err)
	}
	if !f.deadline.Equal(want) {
		t.Errorf("request deadline %v, want the caller's %v", f.deadline, want)
	}
}

func TestNextConnectionError(t *testing.T) {
	cause := &conn.ClosedError{Err: context.DeadlineExceeded}
	f := &fakeRequester{err: cause}
	_, err := newTestConsumer(t, &fakeClock{}).Next(context.Background(), f)
	if !errors.Is(err, conn.ErrClosed) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next() = %v, want the connection's error", err)
	}
}

func TestKindStringAndClass(t *testing.T) {
	want := map[Kind][2]string{
		KindMessage:            {"message", "message"},
		KindNoMessages:         {"no messages", "empty"},
		KindRequestTimeout:     {"request timeout", "empty"},
		KindRequestsPending:    {"requests pending", "busy"},
		KindInterestExpired:    {"interest expired", "busy"},
		KindMaxWaiting:         {"exceeded max waiting", "busy"},
		KindMessageTooLarge:    {"message size exceeds max bytes", "oversize"},
		KindMaxRequestBatch:    {"exceeded max request batch", "misconfigured"},
		KindMaxRequestExpires:  {"exceeded max request expires", "misconfigured"},
		KindMaxRequestMaxBytes: {"exceeded max request max bytes", "misconfigured"},
		KindConsumerDeleted:    {"consumer deleted", "gone"},
		KindPushBased:          {"consumer is push based", "misconfigured"},
		KindLeadershipChange:   {"leadership change", "unavailable"},
		KindServerShutdown:     {"server shutdown", "unavailable"},
		KindBatchCompleted:     {"batch completed", "empty"},
		KindNoResponders:       {"no responders", "gone"},
		KindBadRequest:         {"bad request", "misconfigured"},
	}
	got := map[Kind][2]string{}
	for k := KindMessage; k <= KindBadRequest+1; k++ {
		got[k] = [2]string{k.String(), k.Class().String()}
	}
	want[KindBadRequest+1] = [2]string{"Kind(18)", "Class(0)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("String/Class (-want +got):\n%s", diff)
	}
	if s := Kind(0).String(); s != "Kind(0)" {
		t.Errorf("Kind(0).String() = %q", s)
	}
	for c := ClassMessage; c <= ClassUnavailable; c++ {
		if strings.HasPrefix(c.String(), "Class(") {
			t.Errorf("Class %d has no name", c)
		}
	}
}
