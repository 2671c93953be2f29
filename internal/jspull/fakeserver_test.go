package jspull_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/fakeserver"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/pull"
)

// These tests run the operations over a real connection against the
// scripted fake server, for what the pinned broker will not produce for
// this profile: statuses of other setups, foreign frames, lost receipts.

// With an all-zero random source the inbox token is 22 zeros, so scripts
// can name the reply subjects: the n-th request replies to fakeInbox.n.
const fakeInbox = "_INBOX.0000000000000000000000"

const fakeInfo = `{"server_id":"NFAKE","server_name":"fake","version":"2.11.0","proto":1,"go":"go1.26","host":"0.0.0.0","port":4222,"headers":true,"max_payload":1048576,"tls_required":true}`

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func fakeBinding() jspull.Binding {
	return jspull.Binding{
		Stream:         "ORDERS",
		Consumer:       "worker",
		FilterSubject:  "orders.new",
		PayloadCeiling: 16,
		AckWait:        2 * time.Second,
		MaxDeliver:     3,
	}
}

const fakeAck = "$JS.ACK.ORDERS.worker.1.5.9.1767322245000000000.0"

func greet() []fakeserver.Step {
	return []fakeserver.Step{
		fakeserver.Handshake(),
		fakeserver.Send(fakeserver.Info(fakeInfo)),
		fakeserver.ExpectPrefix("CONNECT {"),
		fakeserver.ExpectPrefix("SUB " + fakeInbox + ".* 1\r\n"),
		fakeserver.ExpectPrefix("PING\r\n"),
		fakeserver.SendString("PONG\r\n"),
	}
}

// expectNext expects the pull request with reply n.
func expectNext(n int) []fakeserver.Step {
	c, _ := jspull.NewConsumer(fakeBinding(), jspull.Options{})
	return []fakeserver.Step{
		fakeserver.ExpectPrefix("PUB $JS.API.CONSUMER.MSG.NEXT.ORDERS.worker " + fakeInbox + "." + strconv.Itoa(n) + " "),
		fakeserver.ExpectPrefix(string(c.NextBody()) + "\r\n"),
	}
}

// status sends a status message to reply n.
func status(n int, line string) fakeserver.Step {
	hdr := "NATS/1.0 " + line + "\r\nNats-Pending-Messages: 1\r\nNats-Pending-Bytes: 0\r\n\r\n"
	return fakeserver.SendString("HMSG " + fakeInbox + "." + strconv.Itoa(n) + " 1 " +
		strconv.Itoa(len(hdr)) + " " + strconv.Itoa(len(hdr)) + "\r\n" + hdr + "\r\n")
}

// delivery sends a message delivered under its own subject with reply.
func delivery(subject, reply, payload string) fakeserver.Step {
	return fakeserver.SendString("MSG " + subject + " 1 " + reply + " " + strconv.Itoa(len(payload)) + "\r\n" + payload + "\r\n")
}

func dialFake(t *testing.T, script ...[]fakeserver.Step) *conn.Conn {
	t.Helper()
	var steps []fakeserver.Step
	for _, s := range script {
		steps = append(steps, s...)
	}
	srv, err := fakeserver.Start(t.Context(), fakeserver.Config{Script: steps})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	secret, err := credential.FromToken("fake-token")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	c, err := conn.Dial(ctx, conn.Config{
		Addr: srv.Addr(), AllowNonPublic: srv.Addr().Addr(), ServerName: srv.ServerName(),
		Roots: srv.RootCAs(), Credential: secret, Rand: zeroReader{},
	})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func newFakeConsumer(t *testing.T) *jspull.Consumer {
	t.Helper()
	c, err := jspull.NewConsumer(fakeBinding(), jspull.Options{OpTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFakeServerStatuses(t *testing.T) {
	tests := []struct {
		line string
		want jspull.Kind
	}{
		{"408 Requests Pending", jspull.KindRequestsPending},
		{"408 Interest Expired", jspull.KindInterestExpired},
		{"409 Exceeded MaxRequestBatch of 1", jspull.KindMaxRequestBatch},
		{"409 Leadership Change", jspull.KindLeadershipChange},
		{"409 Server Shutdown", jspull.KindServerShutdown},
		{"400 Bad Request - Priority Group missing", jspull.KindBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			c := dialFake(t, greet(), expectNext(1), []fakeserver.Step{status(1, tt.line), fakeserver.WaitClose()})
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			res, err := newFakeConsumer(t).Next(ctx, c)
			if err != nil || res.Kind != tt.want {
				t.Fatalf("Next() = %v, %v; want %v", res.Kind, err, tt.want)
			}
			if c.Closed() {
				t.Error("a known status closed the connection")
			}
		})
	}
}

func TestFakeServerFramesThatClose(t *testing.T) {
	tests := []struct {
		name string
		send fakeserver.Step
		want error
	}{
		{"unknown status", status(1, "423 Nats-Wrong-Pin-Id"), jspull.ErrUnknownStatus},
		{"idle heartbeat", status(1, "100 Idle Heartbeat"), jspull.ErrUnknownStatus},
		{"ack subject of another consumer", delivery("orders.new", "$JS.ACK.ORDERS.other.1.5.9.1.0", "x"), jspull.ErrWrongConsumer},
		{"message from another subject", delivery("orders.old", fakeAck, "x"), jspull.ErrWrongConsumer},
		{"reply that is no ack subject", delivery("orders.new", "reply.to.me", "x"), jspull.ErrBadAckSubject},
		{"payload over the ceiling", delivery("orders.new", fakeAck, "01234567890123456"), jspull.ErrOverCeiling},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dialFake(t, greet(), expectNext(1), []fakeserver.Step{tt.send, fakeserver.WaitClose()})
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			_, err := newFakeConsumer(t).Next(ctx, c)
			if !errors.Is(err, tt.want) || !errors.Is(err, jspull.ErrCloseConnection) {
				t.Fatalf("Next() = %v, want %v requiring the connection closed", err, tt.want)
			}
		})
	}
}

func TestFakeServerMessageAtCeiling(t *testing.T) {
	c := dialFake(t, greet(), expectNext(1), []fakeserver.Step{delivery("orders.new", fakeAck, "0123456789012345"), fakeserver.WaitClose()})
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	res, err := newFakeConsumer(t).Next(ctx, c)
	if err != nil || res.Kind != jspull.KindMessage || len(res.Payload) != fakeBinding().PayloadCeiling {
		t.Fatalf("Next() = %+v, %v; want the message", res, err)
	}
}

func TestFakeServerHeldPullIsBounded(t *testing.T) {
	// A broker that never answers the pull: Next gives up at its own bound,
	// not the caller's longer deadline.
	c := dialFake(t, greet(), expectNext(1), []fakeserver.Step{fakeserver.Stall()})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err := newFakeConsumer(t).Next(ctx, c)
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("Next() = %v, want the deadline, connection closed", err)
	}
	if bound := jspull.RequestExpires + jspull.DefaultNextMargin; took < bound || took > bound+time.Second {
		t.Errorf("Next() took %v, want about %v", took, bound)
	}
}

// TestFakeServerLostReceipts loses an acknowledgement twice: the server
// never reads it, or reads it and hangs up without the receipt. Both are
// Uncertain and name the delivery.
func TestFakeServerLostReceipts(t *testing.T) {
	id := jspull.DeliveryID{StreamSeq: 5, ConsumerSeq: 9, Delivered: 1}
	tests := []struct {
		name  string
		after []fakeserver.Step
		cause error
	}{
		{"command never read", []fakeserver.Step{fakeserver.Stall()}, context.DeadlineExceeded},
		{"command read, receipt lost", []fakeserver.Step{
			fakeserver.ExpectPrefix("PUB " + fakeAck + " " + fakeInbox + ".2 4\r\n"),
			fakeserver.ExpectPrefix("+ACK\r\n"),
			fakeserver.Hangup(),
		}, conn.ErrServerClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dialFake(t, greet(), expectNext(1), []fakeserver.Step{delivery("orders.new", fakeAck, "hello")}, tt.after)
			p := newFakeConsumer(t)
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			defer cancel()
			res, err := p.Next(ctx, c)
			if err != nil || res.Kind != jspull.KindMessage {
				t.Fatalf("Next() = %v, %v", res.Kind, err)
			}
			rec, err := p.Ack(ctx, c, &res.Delivery, jspull.Ack())
			if rec.Outcome != pull.AckUncertain || rec.Delivery != id || !errors.Is(err, jspull.ErrNotVerified) || !errors.Is(err, tt.cause) {
				t.Fatalf("Ack() = %+v, %v; want uncertain for %+v caused by %v", rec, err, id, tt.cause)
			}
		})
	}
}

func TestFakeServerVerifiedReceipt(t *testing.T) {
	c := dialFake(t, greet(), expectNext(1), []fakeserver.Step{
		delivery("orders.new", fakeAck, "hello"),
		fakeserver.ExpectPrefix("PUB " + fakeAck + " " + fakeInbox + ".2 4\r\n"),
		fakeserver.ExpectPrefix("+ACK\r\n"),
		fakeserver.SendString("MSG " + fakeInbox + ".2 1 0\r\n\r\n"),
		fakeserver.WaitClose(),
	})
	p := newFakeConsumer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	res, err := p.Next(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := p.Ack(ctx, c, &res.Delivery, jspull.Ack()); err != nil || rec.Outcome != pull.AckVerified {
		t.Fatalf("Ack() = %+v, %v; want verified", rec, err)
	}
}

// TestFakeServerBatchCompletedAfterMessage pins what nats-server 2.14.6
// does after delivering a message to a pull request carrying max_bytes:
// it sends "409 Batch Completed" to the same reply subject (consumer.go,
// loopAndGatherMsgs, JsPullRequestRemainingBytesT), which the client reads
// only during its next request. That stale status must not cost the
// acknowledgement its receipt or the connection.
func TestFakeServerBatchCompletedAfterMessage(t *testing.T) {
	c := dialFake(t, greet(), expectNext(1), []fakeserver.Step{
		delivery("orders.new", fakeAck, "hello"),
		status(1, "409 Batch Completed"),
		fakeserver.ExpectPrefix("PUB " + fakeAck + " " + fakeInbox + ".2 4\r\n"),
		fakeserver.ExpectPrefix("+ACK\r\n"),
		fakeserver.SendString("MSG " + fakeInbox + ".2 1 0\r\n\r\n"),
		fakeserver.WaitClose(),
	})
	p := newFakeConsumer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	res, err := p.Next(ctx, c)
	if err != nil || res.Kind != jspull.KindMessage {
		t.Fatalf("Next() = %v, %v", res.Kind, err)
	}
	if rec, err := p.Ack(ctx, c, &res.Delivery, jspull.Ack()); err != nil || rec.Outcome != pull.AckVerified {
		t.Fatalf("Ack() = %+v, %v; want verified despite the stale 409 Batch Completed", rec, err)
	}
}
