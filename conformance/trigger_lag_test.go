package conformance_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/metrics"
)

// TestTriggerConsumerLag: with n messages stored for a binding, each
// visit's ConsumerState, in the monitor's snapshot and in the exposition,
// holds exactly the counters the broker gives the tenant's administrator
// just before the visit (the visit's consumer info precedes its pull:
// n, then n-1 once the first delivery was acknowledged), read from the
// consumer's leader (a server outside a cluster), timed within the visit.
func TestTriggerConsumerLag(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{tenants: []string{"lag"}, perTenant: []int{1}})
	te := e.tenant(0)
	const n = 3
	for range n {
		e.publish(0, 0, argOK)
	}
	for visit := range 2 {
		broker := te.info(0)
		if broker.NumPending != n-visit || broker.NumAckPending != 0 {
			t.Fatalf("visit %d: the broker shows %+v, want %d pending and nothing awaiting an acknowledgement", visit+1, broker, n-visit)
		}
		start := time.Now()
		r := e.step(t)
		end := time.Now()
		if r.Result != trigger.ResultDelivered || r.Ack != pull.AckVerified {
			t.Fatalf("visit %d: %+v, want a delivery acknowledged", visit+1, r)
		}
		got := e.mon.Snapshot().Consumers[0]
		want := trigger.ConsumerState{At: got.At, Pending: uint64(broker.NumPending), AckPending: broker.NumAckPending,
			Redelivered: broker.NumRedelivered, Waiting: broker.NumWaiting, Leader: true}
		if got != want {
			t.Errorf("visit %d: snapshot %+v, the broker before the visit %+v", visit+1, got, want)
		}
		if got.At.Before(start) || got.At.After(end) {
			t.Errorf("visit %d: read at %v, outside the visit [%v, %v]", visit+1, got.At, start, end)
		}
		text := string(metrics.Append(nil, e.mon.Snapshot(), trigger.StepReport{}, false))
		line := `latent_nats_trigger_consumer_pending{binding="0"} ` + strconv.Itoa(broker.NumPending) + "\n"
		if !strings.Contains(text, line) {
			t.Errorf("visit %d: the exposition lacks %q", visit+1, line)
		}
	}
	if after := te.info(0); after.NumPending != n-2 || after.NumAckPending != 0 {
		t.Errorf("the broker after two deliveries: %+v, want %d pending", after, n-2)
	}
	e.trig.CloseIdle()
}
