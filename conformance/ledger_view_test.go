package conformance_test

import (
	"context"
	"slices"
	"testing"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/trigger"
)

// TestLedgerReadViewLeft: against the broker, a work-queue stream's
// messages of a binding that nothing acknowledged are counted as left and
// their stream sequences read one after another; a message removed from
// the middle is skipped, and a message of another subject is not the
// binding's.
func TestLedgerReadViewLeft(t *testing.T) {
	t.Parallel()
	b := brokertest.Start(t, broker.Options{Tenants: []string{pullTenant}})
	a := newAdmin(t, b)
	a.api("$JS.API.STREAM.CREATE.WQ", map[string]any{
		"name": "WQ", "subjects": []string{"wq.>"}, "storage": "memory", "retention": "workqueue",
	})
	bind := testBinding("WQ", "worker", "wq.a")
	a.createConsumer("WQ", "worker", profileConfig(bind))
	for _, subject := range []string{"wq.a", "wq.b", "wq.a", "wq.a"} {
		a.publish(subject, []byte("x"))
	}
	a.api("$JS.API.STREAM.MSG.DELETE.WQ", map[string]any{"seq": 3})

	tb := trigger.Binding{ID: "t.b0", Stream: "WQ", Consumer: "worker", FilterSubject: "wq.a"}
	cv, err := ledger.ReadView(t.Context(), func(ctx context.Context, subject string, body []byte) ([]byte, error) {
		return a.request(subject, body).Payload, nil
	}, tb)
	if err != nil {
		t.Fatal(err)
	}
	if cv.Left != 2 || !slices.Equal(cv.LeftSeqs, []uint64{1, 4}) || cv.NumPending != 2 {
		t.Errorf("view %+v, want 2 left at sequences 1 and 4, 2 pending", cv)
	}
}
