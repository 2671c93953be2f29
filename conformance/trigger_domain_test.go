package conformance_test

import (
	"testing"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/trigger"
)

// TestTriggerJetStreamDomain runs a binding on a broker with a JetStream
// domain ("hub"). With the v2 ack format (js_ack_fc_v2) the broker's ack
// subjects name the domain ($JS.ACK.hub.<hash>....), which the profile
// does not support: the delivery is a failed visit of class unsupported
// ack subject, the function does not run, nothing is sent and the
// connection is kept for the next visit (the broker sees one runtime
// connection throughout), where it used to be a protocol error that
// closed the connection on every delivery. With the classic ack format
// (the default of 2.14.6) the domain does not show in ack subjects and
// the event runs and is acknowledged as anywhere else.
func TestTriggerJetStreamDomain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, extra string
		supported   bool
	}{
		{"v2 ack format", "feature_flags { js_ack_fc_v2: true }", false},
		{"classic ack format", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := brokertest.Start(t, broker.Options{Tenants: []string{"dom"}, JetStreamDomain: "hub", Extra: tc.extra})
			e := trigInstall(t, b, trigSpec{tenants: []string{"dom"}, perTenant: []int{1}})
			te := e.tenant(0)
			seq := e.publish(0, 0, argOK)
			if tc.supported {
				r := e.stepUntil(t, "delivery", 4, func(r trigger.StepReport) bool { return r.Result == trigger.ResultDelivered })
				if r.StreamSeq != seq || r.Outcome != trigger.OutcomeSuccess || r.Ack != pull.AckVerified {
					t.Errorf("step %+v: want seq %d run and acknowledged", r, seq)
				}
				trigTerminated(t, te, 0, seq)
				e.trig.CloseIdle()
				return
			}

			sys := newTrigSys(t, b)
			r := e.stepUntil(t, "the delivery", 4, func(r trigger.StepReport) bool { return r.Result != trigger.ResultEmpty })
			if r.Result != trigger.ResultFailed || r.Error != trigger.ClassUnsupportedAck || r.Delivered != 0 || r.Ack != pull.AckNone {
				t.Fatalf("step %+v: want a failed visit of class %v", r, trigger.ClassUnsupportedAck)
			}
			before := sys.runtimeConns(te.account)
			if len(before) != 1 {
				t.Fatalf("broker sees %d runtime connections, want the one kept", len(before))
			}
			info := te.info(0)
			if info.Delivered.StreamSeq != seq || info.NumAckPending != 1 || info.AckFloor.StreamSeq != 0 {
				t.Errorf("consumer %+v: want seq %d delivered, unacknowledged", info, seq)
			}
			// The next visit uses the same connection: nothing is pending
			// until the ack wait redelivers the message.
			if r := e.step(t); r.Result != trigger.ResultEmpty && r.Error != trigger.ClassUnsupportedAck {
				t.Errorf("next visit %+v: want empty or the redelivery refused again", r)
			}
			after := sys.runtimeConns(te.account)
			if len(after) != 1 || after[0].CID != before[0].CID {
				t.Errorf("broker sees %+v after the next visit, want connection %d alone", after, before[0].CID)
			}
			if calls := e.callLog(); len(calls) != 0 {
				t.Errorf("functions ran for a delivery of an unsupported ack subject: %+v", calls)
			}
			s := e.mon.Snapshot()
			if s.Dials != 1 || s.Totals.Error(trigger.ClassUnsupportedAck) == 0 || s.Totals.Error(trigger.ClassProtocol) != 0 {
				t.Errorf("snapshot dials %d, unsupported ack %d, protocol %d: want one dial, the class counted, no protocol error",
					s.Dials, s.Totals.Error(trigger.ClassUnsupportedAck), s.Totals.Error(trigger.ClassProtocol))
			}
			e.trig.CloseIdle()
		})
	}
}
