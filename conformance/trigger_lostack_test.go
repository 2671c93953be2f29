package conformance_test

import (
	"context"
	"testing"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// trigLostAck starts a case whose runtime reaches the broker through a
// cut proxy (the pools' Dialer), with the suite's operation timeout (a lost
// receipt costs one second; a shorter one would leave a loaded machine too
// little time to dial, pull and verify the other acknowledgements), and
// whose function cuts one direction of the proxy just before the
// acknowledgement is written.
func trigLostAck(t *testing.T, tenant string, cut func(*cutProxy)) (*trigEnv, *cutProxy) {
	t.Helper()
	var proxy *cutProxy
	e := trigStart(t, trigSpec{
		tenants:   []string{tenant},
		perTenant: []int{1},
		dialer: func(t *testing.T, b *broker.Broker) conn.Dialer {
			proxy = startCutProxy(t, b.Addr())
			return trigProxyDialer(proxy)
		},
	})
	e.setAction(func(context.Context, refhost.Call) error {
		cut(proxy)
		return nil
	})
	return e, proxy
}

// trigCheckDials checks that the runtime dialled twice, the second time
// because the lost acknowledgement's connection was given up, plus at most
// one dial for each visit whose exchange with the broker failed and for
// each idle connection found unusable: on a loaded machine a pull can miss
// its bound, which costs the connection and one more dial. No dial is
// without one of those causes.
func trigCheckDials(t *testing.T, s trigger.Snapshot) {
	t.Helper()
	if s.Dials < 2 || s.Dials > 2+s.Totals.Failed+s.Replaced {
		t.Errorf("dials %d with %d failed visits and %d connections replaced: want a second dial, and no other without a cause",
			s.Dials, s.Totals.Failed, s.Replaced)
	}
}

// uncertainStep steps until the delivery and checks that its
// acknowledgement was decided, written and left uncertain.
func uncertainStep(t *testing.T, e *trigEnv, seq uint64) trigger.StepReport {
	t.Helper()
	r := e.stepUntil(t, "delivery", 4, func(r trigger.StepReport) bool { return r.Result == trigger.ResultDelivered })
	if r.StreamSeq != seq || r.Outcome != trigger.OutcomeSuccess || r.Action != pull.ActionAck ||
		r.Ack != pull.AckUncertain || r.Error != trigger.ClassAckUncertain {
		t.Fatalf("step %+v: want seq %d acknowledged without a receipt (uncertain)", r, seq)
	}
	if last, ok := e.mon.LastStep(); !ok || last != r {
		t.Errorf("LastStep %+v, want %+v", last, r)
	}
	return r
}

// TestTriggerLostAckNeverArrived loses the +ACK on its way to the broker:
// the runtime reports it uncertain and does not replay it; the broker,
// which never saw it, keeps the delivery awaiting acknowledgement and
// redelivers it after its ack wait, and that delivery is processed and
// acknowledged.
func TestTriggerLostAckNeverArrived(t *testing.T) {
	t.Parallel()
	e, proxy := trigLostAck(t, "lost-up", func(p *cutProxy) { p.dropUp.Store(true) })
	te := e.tenant(0)
	seq := e.publish(0, 0, argActions)
	uncertainStep(t, e, seq)
	first := e.nextCall(t)
	proxy.dropUp.Store(false)
	e.setAction(nil)

	if got := te.info(0); got.NumAckPending != 1 || got.AckFloor.StreamSeq != 0 {
		t.Errorf("consumer %+v: want the delivery still awaiting acknowledgement", got)
	}
	// Not replayed: the connection the lost command left behind is gone,
	// the next visit dials again, and the broker still waits for the
	// acknowledgement until its ack wait redelivers the message.
	run := e.run(t)
	c := e.nextCall(t)
	if c.StreamSeq != seq || c.Delivered != 2 {
		t.Fatalf("call %+v: want seq %d redelivered", c, seq)
	}
	b := e.cfg.Bindings[0]
	if gap := c.At.Sub(first.At); gap < b.AckWait()-b.OperationTimeout() {
		t.Errorf("redelivered %v after the first delivery, before the ack wait %v", gap, b.AckWait())
	}
	trigEventually(t, "redelivery acknowledged", trigWait, func() bool {
		got := te.info(0)
		return got.NumAckPending == 0 && got.AckFloor.StreamSeq == seq
	})
	// The broker records the acknowledgement before its receipt reaches
	// the runtime; stopping Run before the receipt arrives would interrupt
	// the wait for it (an uncertain ack, as a prompt shutdown should).
	trigEventually(t, "redelivery's receipt verified", trigWait, func() bool {
		last, ok := e.mon.LastStep()
		return ok && last.Delivered == 2 && last.Ack == pull.AckVerified
	})
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	s := e.mon.Snapshot()
	if s.Totals.Delivered != 2 || s.Totals.Acked != 2 || s.Totals.Uncertain != 1 {
		t.Errorf("counts %+v: want two deliveries, one uncertain ack", s.Totals)
	}
	trigCheckDials(t, s)
	if last, _ := e.mon.LastStep(); last.Ack != pull.AckVerified || last.Delivered != 2 {
		t.Errorf("LastStep %+v, want the redelivery acknowledged", last)
	}
}

// TestTriggerLostReceipt loses the broker's receipt of a +ACK it
// committed: the runtime reports the acknowledgement uncertain and does
// not replay it; the broker kept it, so the message is settled and is not
// redelivered.
func TestTriggerLostReceipt(t *testing.T) {
	t.Parallel()
	e, proxy := trigLostAck(t, "lost-down", func(p *cutProxy) { p.dropDown.Store(true) })
	te := e.tenant(0)
	seq := e.publish(0, 0, argActions)
	uncertainStep(t, e, seq)
	e.nextCall(t)
	proxy.dropDown.Store(false)
	e.setAction(nil)

	// The broker committed the acknowledgement: nothing awaits it. The
	// proxy forwarded the +ACK before the runtime gave up on its receipt;
	// the broker applies it on its own schedule.
	trigEventually(t, "the broker records the acknowledgement", trigWait, func() bool {
		got := te.info(0)
		return got.NumAckPending == 0 && got.AckFloor.StreamSeq == seq
	})
	trigTerminated(t, te, 0, seq)
	if got := te.info(0); got.NumRedelivered != 0 || got.Delivered.ConsumerSeq != 1 {
		t.Errorf("consumer %+v: want one delivery, no redelivery", got)
	}
	// The runtime goes on with a new connection; the next message is the
	// next one, not the first again.
	next := e.publish(0, 0, argOK)
	r := e.stepUntil(t, "next delivery", 4, func(r trigger.StepReport) bool { return r.Result == trigger.ResultDelivered })
	if r.StreamSeq != next || r.Delivered != 1 || r.Ack != pull.AckVerified {
		t.Errorf("next delivery %+v, want seq %d acknowledged", r, next)
	}
	if calls := e.callLog(); len(calls) != 2 || calls[1].StreamSeq != next {
		t.Errorf("calls %+v: want the first message once, then the next", calls)
	}
	s := e.mon.Snapshot()
	if s.Totals.Acked != 2 || s.Totals.Uncertain != 1 {
		t.Errorf("counts %+v: want one uncertain ack, one verified", s.Totals)
	}
	trigCheckDials(t, s)
	e.trig.CloseIdle()
}
