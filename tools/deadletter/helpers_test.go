package deadletter

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/acksubject"
	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/trigger"
)

// testTimeout bounds one dial or request against the local broker, and
// each wait for the broker to do something it does not announce.
const testTimeout = 5 * time.Second

// testAckWait is the ack wait of the tests' own consumers: the broker
// gives up an unsettled delivery of max_deliver 1 after it.
const testAckWait = 200 * time.Millisecond

// destination is the broker's exact TLS endpoint as a configuration names
// it.
func destination(b *broker.Broker) trigger.Destination {
	return trigger.Destination{Address: b.Addr(), ServerName: b.ServerName(), RootCAsPEM: string(b.CAPEM()), AllowNonPublic: true}
}

// secretOf parses a minted user's .creds file.
func secretOf(t testing.TB, c broker.Creds) *credential.Secret {
	t.Helper()
	file, err := c.File()
	if err != nil {
		t.Fatal(err)
	}
	s, err := credential.ParseCreds(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Wipe)
	return s
}

// adminClient connects as the tenant's administrator.
func adminClient(t testing.TB, b *broker.Broker, tenant string) *Client {
	t.Helper()
	creds, err := b.Admin(tenant)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial(t.Context(), connConfig(b, secretOf(t, creds)), testTimeout)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// connConfig is the connection to b with secret.
func connConfig(b *broker.Broker, secret *credential.Secret) conn.Config {
	return conn.Config{Addr: b.Addr(), AllowNonPublic: b.Addr().Addr(), ServerName: b.ServerName(), Roots: b.RootCAs(), Credential: secret}
}

// raw sends one request and returns a copy of the reply, failing the test
// on a connection error.
func raw(t testing.TB, c *Client, subject string, header, body []byte) conn.Reply {
	t.Helper()
	var out conn.Reply
	err := c.request(t.Context(), subject, header, body, func(r conn.Reply) error {
		out = conn.Reply{Status: r.Status, Header: append([]byte(nil), r.Header...), Payload: append([]byte(nil), r.Payload...)}
		return nil
	})
	if err != nil {
		t.Fatalf("request %s: %v", subject, err)
	}
	return out
}

// api sends a JetStream API request and fails on an error reply.
func api(t testing.TB, c *Client, subject string, req any) map[string]any {
	t.Helper()
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var resp map[string]any
	if err := json.Unmarshal(raw(t, c, subject, nil, body).Payload, &resp); err != nil || resp["error"] != nil {
		t.Fatalf("%s: %v %v", subject, err, resp["error"])
	}
	return resp
}

// publish stores payload (with header) under subject and returns its
// stream sequence.
func publish(t testing.TB, c *Client, subject string, header, payload []byte) uint64 {
	t.Helper()
	var ack pubAckJSON
	if err := json.Unmarshal(raw(t, c, subject, header, payload).Payload, &ack); err != nil || ack.Error != nil || ack.Seq == 0 {
		t.Fatalf("publish to %s: %v %+v", subject, err, ack.Error)
	}
	return ack.Seq
}

// delivery is what a pull delivered: its stream sequence, delivery count
// and acknowledgement subject.
type delivery struct {
	streamSeq, delivered uint64
	ack                  string
}

// pullOne pulls one message from a consumer.
func pullOne(t testing.TB, c *Client, stream, consumer string) delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	defer c.conn.Detach()
	// A pull the profile's max_expires allows; the message is there.
	body := fmt.Sprintf(`{"batch":1,"expires":%d}`, jspull.RequestExpires)
	next := conn.Call{Subject: []byte("$JS.API.CONSUMER.MSG.NEXT." + stream + "." + consumer), Payload: []byte(body), Delivery: true}
	r, err := c.conn.Exchange(ctx, time.Now().Add(testTimeout), next)
	if err != nil || r.Status != 0 {
		t.Fatalf("pull %s/%s: status %d, %v", stream, consumer, r.Status, err)
	}
	info, err := acksubject.Parse(string(r.ReplyTo))
	if err != nil {
		t.Fatalf("ack subject: %v", err)
	}
	return delivery{streamSeq: info.StreamSeq, delivered: info.Delivered, ack: string(r.ReplyTo)}
}

// settle sends an acknowledgement command and waits for its receipt.
func settle(t testing.TB, c *Client, d delivery, cmd string) {
	t.Helper()
	if r := raw(t, c, d.ack, nil, []byte(cmd)); r.Status != 0 {
		t.Fatalf("%s: status %d", cmd, r.Status)
	}
}

// eventually polls cond, a broker round trip, until it holds or
// testTimeout passes.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within %v", what, testTimeout)
}

// connConfigZero is a connection configuration no dial is made with.
func connConfigZero() conn.Config { return conn.Config{} }
