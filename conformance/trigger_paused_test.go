package conformance_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
)

// trigPause sends the JetStream pause request for consumer i of the tenant
// ($JS.API.CONSUMER.PAUSE.<stream>.<consumer>, nats-server 2.14.6
// jsConsumerPauseRequest): a body with pause_until pauses it until then,
// an empty object resumes it. It returns the broker's "paused".
func trigPause(t *testing.T, te *trigTenantEnv, i int, body string) bool {
	t.Helper()
	subject := fmt.Sprintf("$JS.API.CONSUMER.PAUSE.%s.%s-w%d", trigStream, te.id, i)
	var resp struct {
		Type   string `json:"type"`
		Paused bool   `json:"paused"`
		Error  any    `json:"error"`
	}
	if err := json.Unmarshal(te.adm.request(subject, []byte(body)), &resp); err != nil || resp.Error != nil ||
		resp.Type != "io.nats.jetstream.api.v1.consumer_pause_response" {
		t.Fatalf("pause %s: %v %+v", subject, err, resp)
	}
	return resp.Paused
}

// TestTriggerPausedConsumer pauses a binding's consumer through the
// JetStream API with a message stored: each visit ends after consumer info
// as skipped with class paused, one request each as the broker counts
// them (no pull: nothing waits on the consumer and nothing is delivered).
// Resumed, the message is delivered and acknowledged. Before jspull's
// ErrConsumerPaused such a visit sent a pull the broker held for its whole
// 100 ms expiry and counted it as empty.
func TestTriggerPausedConsumer(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{tenants: []string{"paused"}, perTenant: []int{1}})
	te := e.tenant(0)
	sys := newTrigSys(t, e.b)

	until := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
	if !trigPause(t, te, 0, `{"pause_until":"`+until+`"}`) {
		t.Fatal("the broker did not pause the consumer")
	}
	seq := e.publish(0, 0, argOK)

	const visits = 3
	first := e.step(t)
	before := sys.runtimeConns(te.account)
	if len(before) != 1 {
		t.Fatalf("broker sees %d runtime connections, want 1", len(before))
	}
	for i := range visits {
		r := first
		if i > 0 {
			r = e.step(t)
		}
		if r.Result != trigger.ResultSkipped || r.Error != trigger.ClassPaused || r.Delivered != 0 {
			t.Fatalf("visit %d: %+v, want skipped with class paused", i+1, r)
		}
	}
	after := sys.runtimeConns(te.account)
	if len(after) != 1 || after[0].CID != before[0].CID {
		t.Fatalf("broker sees %+v, want the first connection alone", after)
	}
	if got, want := after[0].InMsgs-before[0].InMsgs, int64(visits-1); got != want {
		t.Errorf("broker received %d requests in %d paused visits, want one each (consumer info, no pull)", got, visits-1)
	}
	info := te.info(0)
	if info.NumWaiting != 0 || info.NumPending != 1 || info.NumAckPending != 0 || info.Delivered.StreamSeq != 0 {
		t.Errorf("paused consumer %+v: want the message pending, nothing waiting or delivered", info)
	}
	if calls := e.callLog(); len(calls) != 0 {
		t.Errorf("functions ran while paused: %+v", calls)
	}
	if n := e.mon.Snapshot().Totals.Error(trigger.ClassPaused); n != visits {
		t.Errorf("paused visits counted %d, want %d", n, visits)
	}

	// Resumed by the operator: the next visit delivers the message.
	if trigPause(t, te, 0, `{}`) {
		t.Fatal("the broker did not resume the consumer")
	}
	r := e.stepUntil(t, "delivery after resuming", 4, func(r trigger.StepReport) bool { return r.Result == trigger.ResultDelivered })
	if r.StreamSeq != seq || r.Outcome != trigger.OutcomeSuccess || r.Action != pull.ActionAck || r.Ack != pull.AckVerified {
		t.Errorf("step %+v: want seq %d run and acknowledged", r, seq)
	}
	if c := e.nextCall(t); c.StreamSeq != seq || c.Arg != argOK {
		t.Errorf("call %+v", c)
	}
	trigTerminated(t, te, 0, seq)
	e.trig.CloseIdle()
}
