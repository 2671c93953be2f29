package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/tools/broker/clustertest"
)

// statusTrials is the number of raw pulls of
// TestClusterPullStatusBeforeMessage, and of pulls through jspull.Next.
const statusTrials = 3

// TestClusterPullStatusBeforeMessage pins what a three-node 2.14.6
// cluster answers to the profile's pull (batch 1, no_wait, 100 ms
// expiry, max_bytes) on an R3 consumer with a message pending: the
// consumer leader sends "409 Batch Completed" to the request at once and
// the message itself only after its delivered state reached a quorum
// (consumer.go deliverMsg: replicateDeliveries, addReplicatedQueuedMsg;
// the status goes straight to the send queue). On a single broker the
// message comes first. Raw pulls through conn.Conn, one per node, see the
// status as the first reply at least once, and conn.Conn.Await then reads
// the message. jspull.Consumer.Next, given the connection (a Requester with
// Await), returns the message whatever the order: every event is delivered once
// and acknowledged, and the consumer ends with nothing pending.
//
// Before Next followed the status, the runtime's steps on an R3 consumer
// reported the status as an empty pull, met the message during the next
// request (a foreign frame, the connection closed) and delivered nothing
// until max_deliver ran out.
func TestClusterPullStatusBeforeMessage(t *testing.T) {
	// Not parallel: one cluster at a time, before the parallel tests,
	// whose timing bounds three more broker processes would strain.
	c := brokertest.StartCluster(t, broker.Options{Tenants: []string{pullTenant}}, broker.DefaultClusterSize)
	bind := testBinding("ORDERS", "worker", "orders.new")
	a := newAdmin(t, c.Node(0))
	a.api("$JS.API.STREAM.CREATE.ORDERS", map[string]any{
		"name": "ORDERS", "subjects": []string{"orders.>"}, "storage": "file", "num_replicas": 3,
	})
	cfg := profileConfig(bind)
	cfg["num_replicas"] = 3
	a.createConsumer("ORDERS", "worker", cfg)
	for range 2 * statusTrials {
		a.publish("orders.new", []byte("one"))
	}
	perms := derive(t, bind)

	statusFirst := 0
	for trial := range statusTrials {
		node := c.Node(trial % c.Size())
		p := newPuller(t, node, bind, perms, jspull.Options{})
		ctx, cancel := context.WithTimeout(t.Context(), pullTimeout)
		// A consumer just created may not yet have its interest at every
		// node: the node answers 503 (no responders) and nothing was
		// delivered. Pull again, within pullTimeout and 1,000 requests.
		deadline, _ := ctx.Deadline()
		next := conn.Call{Subject: []byte(bind.NextSubject()), Payload: p.p.NextBody(), Delivery: true}
		r, err := p.c.Exchange(ctx, deadline, next)
		for again := 0; err == nil && r.Status == 503 && ctx.Err() == nil && again < 1000; again++ {
			r, err = p.c.Exchange(ctx, deadline, next)
		}
		if err != nil {
			cancel()
			t.Fatalf("trial %d: pull: %v", trial, err)
		}
		first := "the message"
		if r.Status != 0 {
			if r.Status != 409 || string(r.Description) != "Batch Completed" {
				cancel()
				t.Fatalf("trial %d: pull answered %d %q, want a message or 409 Batch Completed", trial, r.Status, r.Description)
			}
			statusFirst++
			first = "409 Batch Completed"
			at := time.Now()
			if r, err = p.c.Await(ctx, time.Now().Add(bind.AckWait)); err != nil || !r.Forwarded || len(r.ReplyTo) == 0 {
				cancel()
				t.Fatalf("trial %d: Await after the status: forwarded %v, %v; want the delivered message", trial, r.Forwarded, err)
			}
			first += ", the message " + time.Since(at).Round(time.Millisecond).String() + " later"
		}
		ack, err := p.c.Exchange(ctx, deadline, conn.Call{Subject: append([]byte(nil), r.ReplyTo...), Payload: []byte("+ACK")})
		cancel()
		if err != nil || ack.Status != 0 || len(ack.Payload) != 0 {
			t.Fatalf("trial %d: ack: status %d, %v", trial, ack.Status, err)
		}
		t.Logf("trial %d through %s: %s", trial, node.Name(), first)
	}
	t.Logf("figures: %d of %d raw pulls of the R3 consumer answered by 409 Batch Completed before the message", statusFirst, statusTrials)
	if statusFirst == 0 {
		t.Errorf("none of %d pulls of an R3 consumer was answered by 409 Batch Completed before its message", statusTrials)
	}

	// jspull.Next follows the status.
	for trial := range statusTrials {
		p := newPuller(t, c.Node(trial%c.Size()), bind, perms, jspull.Options{})
		res := p.mustMessage()
		p.mustAck(&res.Delivery, jspull.Ack())
		if p.c.Closed() {
			t.Errorf("Next through %s closed the connection", c.Node(trial%c.Size()).Name())
		}
	}
	if pending, ackPending, _ := a.consumerInfo("ORDERS", "worker"); pending != 0 || ackPending != 0 {
		t.Errorf("consumer after every event: num_pending %d, num_ack_pending %d; want 0 and 0", pending, ackPending)
	}
}

// electionObserve bounds TestClusterStatusesDuringElection's observation
// after the new leader is seen.
const electionObserve = time.Second

// TestClusterStatusesDuringElection observes, on a real three-node
// cluster, what the profile's exchanges get while an R3 consumer changes
// leader: one connection pulls the empty consumer in a loop (each pull
// held by the leader for its 100 ms expiry), another inspects it in a
// loop, while the consumer's leader steps down, until a second after the
// new leader is seen. Every answer is one pull and the runtime name: a
// Kind with a class (409 Leadership Change among them when a held pull
// meets the step-down), a JetStream API error (*jspull.APIError), 503 no
// responders, or a deadline that closes the connection (replaced for the
// next attempt); never an unknown status or a reply that breaks the
// grammar (jspull.ErrCloseConnection). The figures log what was seen.
func TestClusterStatusesDuringElection(t *testing.T) {
	// Not parallel: one cluster at a time, before the parallel tests,
	// whose timing bounds three more broker processes would strain.
	c := brokertest.StartCluster(t, broker.Options{Tenants: []string{pullTenant}}, broker.DefaultClusterSize)
	bind := testBinding("ORDERS", "worker", "orders.new")
	a := newAdmin(t, c.Node(0))
	a.api("$JS.API.STREAM.CREATE.ORDERS", map[string]any{
		"name": "ORDERS", "subjects": []string{"orders.>"}, "storage": "file", "num_replicas": 3,
	})
	cfg := profileConfig(bind)
	cfg["num_replicas"] = 3
	a.createConsumer("ORDERS", "worker", cfg)
	creds, err := c.Admin(pullTenant)
	if err != nil {
		t.Fatal(err)
	}
	req := clustertest.Requester(c, creds)
	ctx, cancel := context.WithTimeout(t.Context(), clusterWait)
	defer cancel()
	old, err := c.WaitConsumerLeader(ctx, req, "ORDERS", "worker", nil)
	if err != nil {
		t.Fatal(err)
	}
	perms := derive(t, bind)
	// Pinned to a node that does not lead the consumer.
	node := c.Node((c.Index(old) + 1) % c.Size())

	user := pullUser(t, node, perms)
	observe := func(stop <-chan struct{}, op func(p *puller) string) chan map[string]int {
		pc, err := jspull.NewConsumer(bind, pullOptions(jspull.Options{}))
		if err != nil {
			t.Fatal(err)
		}
		out := make(chan map[string]int, 1)
		go func() {
			got := make(map[string]int)
			p := &puller{t: t, p: pc}
			for i := 0; i < 10000; i++ {
				select {
				case <-stop:
					out <- got
					return
				default:
				}
				if p.c == nil || p.c.Closed() {
					c, err := pullDialErr(t, node, user)
					if err != nil {
						got["dial: "+err.Error()]++
						continue
					}
					p.c = c
				}
				got[op(p)]++
			}
			out <- got
		}()
		return out
	}
	classify := func(err error) string {
		var ae *jspull.APIError
		switch {
		case errors.As(err, &ae):
			return fmt.Sprintf("api error %d/%d", ae.Code, ae.ErrCode)
		case errors.Is(err, jspull.ErrNoResponders):
			return "503 no responders"
		case errors.Is(err, jspull.ErrCloseConnection):
			return "close connection: " + err.Error()
		case errors.Is(err, context.DeadlineExceeded):
			return "deadline"
		}
		return "other: " + err.Error()
	}
	stop := make(chan struct{})
	pulls := observe(stop, func(p *puller) string {
		res, err := p.next()
		if err != nil {
			return classify(err)
		}
		return fmt.Sprintf("%v (%v)", res.Kind, res.Kind.Class())
	})
	inspects := observe(stop, func(p *puller) string {
		if _, err := p.inspect(); err != nil {
			return classify(err)
		}
		return "info"
	})
	at := time.Now()
	if err := c.StepDownConsumer(ctx, req, "ORDERS", "worker", nil); err != nil {
		close(stop)
		t.Fatal(err)
	}
	next, err := c.WaitConsumerLeader(ctx, req, "ORDERS", "worker", old)
	elected := time.Since(at)
	if err == nil {
		timer := time.NewTimer(electionObserve)
		<-timer.C
	}
	close(stop)
	gotPulls, gotInspects := <-pulls, <-inspects
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("figures: consumer leader %s stepped down, %s seen %v later; through %s: pulls %v; consumer info %v",
		old.Name(), next.Name(), elected.Round(time.Millisecond), node.Name(), gotPulls, gotInspects)
	for _, m := range []map[string]int{gotPulls, gotInspects} {
		for what, n := range m {
			if strings.HasPrefix(what, "close connection") || strings.HasPrefix(what, "other") || strings.HasPrefix(what, "dial") || strings.Contains(what, "Kind(") || strings.Contains(what, "Class(") {
				t.Errorf("%d answers %q: not a documented status", n, what)
			}
		}
	}
}
