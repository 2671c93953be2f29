package conformance_test

import (
	"testing"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
)

// TestTriggerMaxDeliverLowered: a delivery negatively acknowledged under
// max_deliver 3, then the operator lowers max_deliver to 1 on the consumer
// and in the binding (a new epoch). The runtime never runs the function
// for a delivery counted past the binding's max_deliver (it would
// terminate it as exhausted, see trigger's TestDeliveryPastMaxDeliver);
// the pinned broker does not even deliver it: at the redelivery its count
// (2) is past max_deliver, and the broker gives the message up itself:
// nothing pending, nothing awaiting an acknowledgement. Either way the
// function ran once.
func TestTriggerMaxDeliverLowered(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{
		tenants:   []string{"lowered"},
		perTenant: []int{1},
		binding: func(_, _ int, b *trigger.Binding) {
			b.MaxDeliver, b.NakDelayMS = 3, 200
		},
	})
	te := e.tenant(0)
	seq := e.publish(0, 0, argRetry)
	r := e.stepUntil(t, "first delivery", 4, func(r trigger.StepReport) bool { return r.Result == trigger.ResultDelivered })
	if r.StreamSeq != seq || r.Delivered != 1 || r.Action != pull.ActionNak || r.Ack != pull.AckVerified {
		t.Fatalf("step %+v: want delivery 1 of seq %d negatively acknowledged", r, seq)
	}

	// The operator lowers max_deliver: the consumer first, then the
	// binding, installed as epoch 2.
	pb := trigPullBinding(e.cfg.Bindings[0])
	pb.MaxDeliver = 1
	te.adm.api("$JS.API.CONSUMER.CREATE."+trigStream+"."+pb.Consumer, map[string]any{
		"stream_name": trigStream, "config": profileConfig(pb), "action": "update",
	})
	e.cfg.Bindings[0].MaxDeliver = 1
	e.reinstall(t, e.pools, 2, 1, e.creds)

	// Visits until the broker gave the message up (after the NAK delay a
	// pull makes the broker try the redelivery).
	trigEventually(t, "the message given up", trigWait, func() bool {
		r := e.step(t)
		if r.Delivered != 0 {
			t.Fatalf("step %+v: a delivery past the lowered max_deliver", r)
		}
		if r.Result != trigger.ResultEmpty {
			t.Fatalf("step %+v: want empty visits", r)
		}
		info := te.info(0)
		return info.NumPending == 0 && info.NumAckPending == 0
	})
	// Given up, it stays so: more visits find nothing.
	for range 3 {
		if r := e.step(t); r.Result != trigger.ResultEmpty {
			t.Errorf("step %+v after the give-up: want empty", r)
		}
	}
	// 2.14.6 reports the ack floor unmoved (0) after such a give-up; the
	// message is neither pending nor awaiting an acknowledgement.
	t.Logf("consumer after the give-up: %+v", te.info(0))
	if calls := e.callLog(); len(calls) != 1 || calls[0].StreamSeq != seq || calls[0].Delivered != 1 {
		t.Errorf("calls %+v: want the first delivery only", calls)
	}
	if s := e.mon.Snapshot().Totals; s.Delivered != 0 || s.Exhausted != 0 {
		t.Errorf("epoch 2 counts %+v: want nothing delivered", s)
	}
	e.trig.CloseIdle()
}
