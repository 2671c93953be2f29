package jspull_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/fakeserver"
	"github.com/latent-systems/latent-nats/internal/jspull"
)

// TestFakeServerStatusBeforeMessage pins the order a consumer replicated
// in a 2.14.6 cluster answers a pull in (conformance:
// TestClusterPullStatusBeforeMessage): "409 Batch Completed" first, the
// delivered message after it. Next reads the message within the pull's
// bound and returns it; the connection stays open. A status that no
// message follows within the bound fails the pull and closes the
// connection; a leadership change or shutdown after it (the leader went
// before it sent the message, which the broker redelivers after the ack
// wait) is that status; the same status again (two leaders around a
// partition's heal) is skipped, up to a bound; any other status after it
// is an unexpected reply.
func TestFakeServerStatusBeforeMessage(t *testing.T) {
	t.Run("message follows", func(t *testing.T) {
		c := dialFake(t, greet(), expectNext(1), []fakeserver.Step{
			status(1, "409 Batch Completed"), delivery("orders.new", fakeAck, "x"), fakeserver.WaitClose(),
		})
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		res, err := newFakeConsumer(t).Next(ctx, c)
		if err != nil || res.Kind != jspull.KindMessage || string(res.Payload) != "x" || res.Delivery.ID.StreamSeq != 5 {
			t.Fatalf("Next() = %v %q seq %d, %v; want the message after the status", res.Kind, res.Payload, res.Delivery.ID.StreamSeq, err)
		}
		if c.Closed() {
			t.Error("the connection was closed")
		}
	})
	t.Run("nothing follows", func(t *testing.T) {
		c := dialFake(t, greet(), expectNext(1), []fakeserver.Step{status(1, "409 Batch Completed"), fakeserver.WaitClose()})
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		_, err := newFakeConsumer(t).Next(ctx, c)
		if !errors.Is(err, context.DeadlineExceeded) || !c.Closed() {
			t.Fatalf("Next() = %v, want the pull's bound exceeded and the connection closed", err)
		}
	})
	t.Run("leadership change follows", func(t *testing.T) {
		c := dialFake(t, greet(), expectNext(1), []fakeserver.Step{
			status(1, "409 Batch Completed"), status(1, "409 Leadership Change"), fakeserver.WaitClose(),
		})
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		res, err := newFakeConsumer(t).Next(ctx, c)
		if err != nil || res.Kind != jspull.KindLeadershipChange || c.Closed() {
			t.Fatalf("Next() = %v, %v (closed %v); want the leadership change on an open connection", res.Kind, err, c.Closed())
		}
	})
	t.Run("the status again, then the message", func(t *testing.T) {
		// Two consumer leaders around a partition's heal: each answers
		// the pull with the status; the one with a quorum sends the
		// message.
		c := dialFake(t, greet(), expectNext(1), []fakeserver.Step{
			status(1, "409 Batch Completed"), status(1, "409 Batch Completed"), delivery("orders.new", fakeAck, "x"), fakeserver.WaitClose(),
		})
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		res, err := newFakeConsumer(t).Next(ctx, c)
		if err != nil || res.Kind != jspull.KindMessage || string(res.Payload) != "x" || c.Closed() {
			t.Fatalf("Next() = %v %q, %v (closed %v); want the message on an open connection", res.Kind, res.Payload, err, c.Closed())
		}
	})
	t.Run("the status repeated to the bound, then the message", func(t *testing.T) {
		steps := []fakeserver.Step{status(1, "409 Batch Completed")}
		for range jspull.MaxRepeatedCompleted {
			steps = append(steps, status(1, "409 Batch Completed"))
		}
		steps = append(steps, delivery("orders.new", fakeAck, "x"), fakeserver.WaitClose())
		c := dialFake(t, greet(), expectNext(1), steps)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		res, err := newFakeConsumer(t).Next(ctx, c)
		if err != nil || res.Kind != jspull.KindMessage || c.Closed() {
			t.Fatalf("Next() = %v, %v (closed %v); want the message after %d repeats", res.Kind, err, c.Closed(), jspull.MaxRepeatedCompleted)
		}
	})
	t.Run("the status without end", func(t *testing.T) {
		steps := []fakeserver.Step{status(1, "409 Batch Completed")}
		for range jspull.MaxRepeatedCompleted + 1 {
			steps = append(steps, status(1, "409 Batch Completed"))
		}
		c := dialFake(t, greet(), expectNext(1), append(steps, fakeserver.WaitClose()))
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err := newFakeConsumer(t).Next(ctx, c)
		if !errors.Is(err, jspull.ErrUnexpectedReply) || !errors.Is(err, jspull.ErrCloseConnection) {
			t.Fatalf("Next() = %v, want an unexpected reply that requires closing", err)
		}
	})
	t.Run("another status follows", func(t *testing.T) {
		c := dialFake(t, greet(), expectNext(1), []fakeserver.Step{
			status(1, "409 Batch Completed"), status(1, "404 No Messages"), fakeserver.WaitClose(),
		})
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err := newFakeConsumer(t).Next(ctx, c)
		if !errors.Is(err, jspull.ErrUnexpectedReply) || !errors.Is(err, jspull.ErrCloseConnection) {
			t.Fatalf("Next() = %v, want an unexpected reply that requires closing", err)
		}
	})
}

// conn.Conn has the Await method through which Next follows a status with
// its message (see jspull.Requester).
var _ interface {
	jspull.Requester
	Await(ctx context.Context, deadline time.Time) (conn.Reply, error)
} = (*conn.Conn)(nil)
