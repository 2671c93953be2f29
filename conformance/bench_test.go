package conformance_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
)

// benchPayload is the size of the stored messages of BenchmarkPullVisit.
const benchPayload = 256

// benchBinding is a binding of the BENCH stream with an ack wait long
// enough that no benchmark step is redelivered.
func benchBinding(consumer string) jspull.Binding {
	return jspull.Binding{
		Stream:         "BENCH",
		Consumer:       consumer,
		FilterSubject:  "bench." + consumer,
		PayloadCeiling: 1024,
		AckWait:        30 * time.Second,
		MaxDeliver:     5,
	}
}

// benchRequest sends one admin request and returns a copy of the reply
// payload; a status or an API error fails the benchmark.
func benchRequest(tb testing.TB, c *conn.Conn, subject string, req any, raw []byte) []byte {
	tb.Helper()
	body := raw
	if req != nil {
		var err error
		if body, err = json.Marshal(req); err != nil {
			tb.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(tb.Context(), pullTimeout)
	defer cancel()
	r, err := c.Request(ctx, subject, nil, body)
	if err != nil || r.Status != 0 {
		tb.Fatalf("admin request %s: status %d, %v", subject, r.Status, err)
	}
	var resp struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(r.Payload, &resp); err != nil || resp.Error != nil {
		tb.Fatalf("admin request %s: %v %v", subject, err, resp.Error)
	}
	return append([]byte(nil), r.Payload...)
}

// BenchmarkPullVisit measures one visit of this project's client to the
// pinned broker over handshake-first TLS, the broker in its own process so
// that the allocations reported are the client's alone:
//
//   - message: Inspect, Next of a stored 256-byte message, verified +ACK;
//   - empty-inspect: the visit to a dormant consumer, one Inspect proving it
//     empty;
//   - empty-pull: what pulling anyway costs, a no-wait pull with the 100 ms
//     expiry that the broker holds until it expires.
//
// tools/peerbench compares the message visit with nats.go in one run.
func BenchmarkPullVisit(b *testing.B) {
	brk := brokertest.Start(b, broker.Options{Tenants: []string{pullTenant}})
	adminCreds, err := brk.Admin(pullTenant)
	if err != nil {
		b.Fatal(err)
	}
	adm := pullDial(b, brk, adminCreds)
	msgs, empty := benchBinding("visit"), benchBinding("dormant")
	benchRequest(b, adm, "$JS.API.STREAM.CREATE.BENCH", map[string]any{
		"name": "BENCH", "subjects": []string{"bench.>"}, "storage": "memory",
	}, nil)
	for _, bind := range []jspull.Binding{msgs, empty} {
		benchRequest(b, adm, "$JS.API.CONSUMER.CREATE.BENCH."+bind.Consumer, map[string]any{
			"stream_name": "BENCH", "config": profileConfig(bind), "action": "create",
		}, nil)
	}
	perms, err := jspull.DerivePermissions(conn.DefaultInboxPrefix, msgs, empty)
	if err != nil {
		b.Fatal(err)
	}
	c := pullDial(b, brk, pullUser(b, brk, perms))
	pm, err := jspull.NewConsumer(msgs, jspull.Options{})
	if err != nil {
		b.Fatal(err)
	}
	pe, err := jspull.NewConsumer(empty, jspull.Options{})
	if err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, benchPayload)

	b.Run("message", func(b *testing.B) {
		for range b.N {
			benchRequest(b, adm, msgs.FilterSubject, nil, payload)
		}
		ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
		defer cancel()
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			if _, err := pm.Inspect(ctx, c); err != nil {
				b.Fatalf("visit %d: inspect: %v", i, err)
			}
			res, err := pm.Next(ctx, c)
			if err != nil || res.Kind != jspull.KindMessage || len(res.Payload) != benchPayload {
				b.Fatalf("visit %d: next: %v, %v", i, res.Kind, err)
			}
			rec, err := pm.Ack(ctx, c, &res.Delivery, jspull.Ack())
			if err != nil || rec.Outcome != pull.AckVerified {
				b.Fatalf("visit %d: ack: %v, %v", i, rec.Outcome, err)
			}
		}
	})
	b.Run("empty-inspect", func(b *testing.B) {
		ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
		defer cancel()
		b.ReportAllocs()
		for b.Loop() {
			pend, err := pe.Inspect(ctx, c)
			if err != nil || !pend.Empty() {
				b.Fatalf("inspect: %+v, %v", pend, err)
			}
		}
	})
	b.Run("empty-pull", func(b *testing.B) {
		ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
		defer cancel()
		b.ReportAllocs()
		for b.Loop() {
			res, err := pe.Next(ctx, c)
			if err != nil || res.Kind != jspull.KindRequestTimeout {
				b.Fatalf("next: %v, %v", res.Kind, err)
			}
		}
	})
}
