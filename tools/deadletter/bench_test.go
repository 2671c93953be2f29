package deadletter

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
)

// BenchmarkPublishCopies measures what a stream's copies cost a
// producer: one publish and its acknowledgement, one at a time, to a
// work-queue stream (file storage, the broker's default sync interval)
// without and with the republish setting that copies every message into
// the copy capture. It reports the bytes the account stores per message
// (stream and copy capture).
func BenchmarkPublishCopies(b *testing.B) {
	br := brokertest.Start(b, broker.Options{Tenants: []string{"acme"}})
	c := adminClient(b, br, "acme")
	createCaptures(b, c, true)
	createStream(b, c, "PLAIN", "acme.plain", "workqueue", false)
	createStream(b, c, "COPIED", "acme.copied", "workqueue", true)
	payload := bytes.Repeat([]byte("x"), 256)
	for _, bc := range []struct {
		name, stream, subject string
	}{{"copies=off", "PLAIN", "acme.plain"}, {"copies=on", "COPIED", "acme.copied"}} {
		b.Run(bc.name, func(b *testing.B) {
			before := storedBytes(b, c)
			b.ReportAllocs()
			b.SetBytes(int64(len(payload)))
			n := 0
			for b.Loop() {
				publish(b, c, bc.subject, nil, payload)
				n++
			}
			b.StopTimer()
			// The last copies are stored after their acknowledgements:
			// counted once the copy capture holds them all.
			var per float64
			eventually(b, "the copies stored", func() bool {
				per = float64(storedBytes(b, c)-before) / float64(n)
				return bc.stream == "PLAIN" || per > 2*float64(len(payload))
			})
			b.ReportMetric(per, "stored-B/msg")
		})
	}
}

// storedBytes returns the bytes the account's JetStream stores.
func storedBytes(b testing.TB, c *Client) uint64 {
	b.Helper()
	var info struct {
		Storage uint64 `json:"storage"`
	}
	if err := json.Unmarshal(raw(b, c, "$JS.API.INFO", nil, nil).Payload, &info); err != nil {
		b.Fatal(err)
	}
	return info.Storage
}

// BenchmarkMessageFromCopy measures Message for a message its work-queue
// stream no longer holds, found among the copies of 10,000 messages
// (a binary search: at most 2 + 14 requests, one of them to the stream).
func BenchmarkMessageFromCopy(b *testing.B) {
	const n = 10_000
	br := brokertest.Start(b, broker.Options{Tenants: []string{"acme"}})
	c := adminClient(b, br, "acme")
	createCaptures(b, c, true)
	createStream(b, c, "COPIED", "acme.copied", "workqueue", true)
	for range n {
		publish(b, c, "acme.copied", nil, []byte(`["x"]`))
	}
	api(b, c, "$JS.API.STREAM.PURGE.COPIED", nil)
	eventually(b, "every copy stored", func() bool {
		_, err := c.Message(b.Context(), "COPIED", n)
		return err == nil
	})
	seq := uint64(0)
	b.ReportAllocs()
	for b.Loop() {
		seq = seq%n + 1
		if m, err := c.Message(b.Context(), "COPIED", seq); err != nil || m.Holder != HolderCopy {
			b.Fatalf("Message(%d): %+v, %v", seq, m, err)
		}
	}
}
