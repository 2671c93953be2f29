package conformance_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/internal/wire"
	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/trigger"
)

// faultHeaderBlock returns a header block of exactly size bytes (its
// blank line counted, as max_header_bytes counts it): the fields kv, then
// an X-Pad field whose value fills the rest.
func faultHeaderBlock(t *testing.T, size int, kv ...string) []byte {
	t.Helper()
	base, err := wire.AppendHeader(nil, kv...)
	if err != nil {
		t.Fatal(err)
	}
	const pad = "X-Pad: \r\n"
	n := size - len(base) - len(pad)
	if n < 1 {
		t.Fatalf("a header block of %d bytes cannot hold %d bytes of fields and the pad", size, len(base))
	}
	h, err := wire.AppendHeader(nil, append(kv, "X-Pad", strings.Repeat("p", n))...)
	if err != nil || len(h) != size {
		t.Fatalf("header block of %d bytes, want %d: %v", len(h), size, err)
	}
	return h
}

// publishHeader stores payload with the header block hdr on binding i of
// tenant k, as the administrator, and returns the PubAck's sequence and
// whether the stream found it a duplicate (Nats-Msg-Id). It does not
// record the event in the ledger.
func (e *trigEnv) publishHeader(t *testing.T, k, i int, hdr, payload []byte) (seq uint64, duplicate bool) {
	t.Helper()
	te := e.tenants[k]
	ctx, cancel := context.WithTimeout(t.Context(), pullTimeout)
	defer cancel()
	r, err := te.adm.c.Request(ctx, trigSubject(te.id, i), hdr, payload)
	if err != nil {
		t.Fatalf("publish with a header block of %d bytes: %v", len(hdr), err)
	}
	var ack struct {
		Seq       uint64 `json:"seq"`
		Duplicate bool   `json:"duplicate"`
		Error     any    `json:"error"`
	}
	if err := json.Unmarshal(r.Payload, &ack); err != nil || ack.Seq == 0 || ack.Error != nil {
		t.Fatalf("publish with a header block of %d bytes: %v %v", len(hdr), err, ack.Error)
	}
	return ack.Seq, ack.Duplicate
}

// TestFaultUserHeaders publishes events with user headers to the three
// bindings of one tenant (max_header_bytes 4096):
//
//   - a Nats-Msg-Id with custom fields, published twice: the stream keeps
//     one (the second PubAck says duplicate), the function runs once with
//     the payload;
//   - a header block of exactly max_header_bytes: delivered and run;
//   - a header block one byte over it (well within the broker's limits):
//     the connection refuses the frame before reading it (the parser's
//     ErrHeaderTooLarge closes it, ClassProtocol), nothing is
//     acknowledged, and the broker delivers it again after its ack wait
//     until max_deliver (2 here), then gives it up: the ack floor moves
//     past it, num_redelivered keeps counting it, and the event behind it
//     runs. It held its binding for max_deliver ack waits; the tenant's
//     second binding delivered meanwhile;
//   - on the third binding, a message whose header and payload exceed the
//     pull's max_bytes (payload ceiling + 9216): the broker refuses to
//     deliver it (409 Message Size Exceeds MaxBytes, ClassOversize) on
//     every visit, and the binding stays behind it, as the README says,
//     until an operator deletes it; then the event behind it runs.
//
// Ledger, over every event that should run: nothing lost, nothing run
// twice; the two refused messages are asserted in the broker's exact
// consumer state.
func TestFaultUserHeaders(t *testing.T) {
	t.Parallel()
	const maxDeliver = 2
	e := trigStart(t, trigSpec{
		tenants:   []string{"hdr"},
		perTenant: []int{3},
		binding: func(_, i int, b *trigger.Binding) {
			if i == 0 {
				// A short hold: max_deliver ack waits of 1.5 s.
				b.OperationTimeoutMS, b.RootBudgetMS, b.AckWaitMS, b.MaxDeliver = 500, 500, 1500, maxDeliver
			}
		},
	})
	host := &faultHost{trigHookHost: e.host}
	te := e.tenant(0)
	id0, id1, id2 := e.bindingID(0, 0), e.bindingID(0, 1), e.bindingID(0, 2)
	b0 := e.cfg.Bindings[e.bindingIndex(0, 0)]
	capBytes := e.cfg.MaxHeaderBytes
	health := ledger.NewHealth(e.pools)

	// Binding 0: a message ID with custom fields (twice), a block at the
	// cap, one past it, and an event behind them.
	msgID := faultHeaderBlock(t, 160, "Nats-Msg-Id", "hdr-1", "X-Order", "42", "X-Trace", "4bf92f3577b34da6")
	msgSeq, dup := e.publishHeader(t, 0, 0, msgID, trigPayload("msgid"))
	again, dupAgain := e.publishHeader(t, 0, 0, msgID, trigPayload("msgid"))
	if dup || !dupAgain || again != msgSeq {
		t.Fatalf("Nats-Msg-Id published twice: seq %d (duplicate %v), then %d (duplicate %v); want the second a duplicate of the first", msgSeq, dup, again, dupAgain)
	}
	e.led.Published(id0, msgSeq)
	atCap, _ := e.publishHeader(t, 0, 0, faultHeaderBlock(t, capBytes, "X-Kind", "at-cap"), trigPayload("at-cap"))
	e.led.Published(id0, atCap)
	overCap, _ := e.publishHeader(t, 0, 0, faultHeaderBlock(t, capBytes+1, "X-Kind", "over-cap"), trigPayload("over-cap"))
	behindOverCap := e.publish(0, 0, "behind-over-cap")

	// Binding 2: header and payload together over max_bytes, an event
	// behind it.
	maxBytes := e.cfg.Bindings[e.bindingIndex(0, 2)].MaxPayloadBytes + 9216
	oversizeHdr := faultHeaderBlock(t, 8000, "X-Kind", "oversize")
	oversizeBody := []byte(`["` + strings.Repeat("o", maxBytes-len(oversizeHdr)) + `"]`)
	oversize, _ := e.publishHeader(t, 0, 2, oversizeHdr, oversizeBody)
	behindOversize := e.publish(0, 2, "behind-oversize")

	run := runOwner(t, e.trig, host)
	trigEventually(t, "the over-cap message refused", trigWait, func() bool { return len(host.failures(trigger.ClassProtocol)) > 0 })
	refused := host.failures(trigger.ClassProtocol)[0]
	// Binding 1 delivers while binding 0 is held.
	var during []uint64
	for range 5 {
		during = append(during, e.publish(0, 1, argOK))
	}
	e.waitRan(t, id1, during...)
	e.waitRan(t, id0, behindOverCap)

	// Binding 2 is refused on every visit, with nothing delivered.
	trigEventually(t, "the oversize message refused on several visits", trigWait, func() bool {
		return len(host.failures(trigger.ClassOversize)) >= 3
	})
	if got := te.info(2); got.NumPending != 2 || got.NumAckPending != 0 || got.NumRedelivered != 0 ||
		got.Delivered.ConsumerSeq != 0 || got.AckFloor.StreamSeq != 0 {
		t.Errorf("binding 2 behind the oversize message: %+v; want both messages pending, nothing delivered, the ack floor at 0", got)
	}
	stuck := time.Since(host.failures(trigger.ClassOversize)[0])
	deleted := time.Now()
	te.adm.api("$JS.API.STREAM.MSG.DELETE."+trigStream, map[string]any{"seq": oversize, "no_erase": true})
	e.waitRan(t, id2, behindOversize)

	v, took := e.settle(t)
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkVerdict(t, v, true)
	if len(v.Reexecutions) != 0 {
		t.Errorf("re-executions %+v, want none", v.Reexecutions)
	}

	// The calls: every good event once, with its payload; the refused ones
	// never.
	type run1 struct {
		binding string
		seq     uint64
		arg     string
	}
	var got []run1
	at := map[uint64]time.Time{}
	for _, c := range e.callLog() {
		if c.Delivered != 1 {
			t.Errorf("call %+v: every event runs at its first delivery", c)
		}
		got = append(got, run1{c.Binding, c.StreamSeq, c.Arg})
		if c.Binding == id0 || c.Binding == id1 {
			at[c.StreamSeq] = c.At
		}
	}
	want := []run1{{id0, msgSeq, "msgid"}, {id0, atCap, "at-cap"}, {id0, behindOverCap, "behind-over-cap"}, {id2, behindOversize, "behind-oversize"}}
	for _, seq := range during {
		want = append(want, run1{id1, seq, argOK})
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("no call %+v; calls %+v", w, got)
		}
	}
	for _, c := range got {
		if (c.binding == id0 && c.seq == overCap) || (c.binding == id2 && c.seq == oversize) {
			t.Errorf("call %+v: a refused message ran", c)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d calls %+v, want %d", len(got), got, len(want))
	}

	// The over-cap message: refused at each of its max_deliver deliveries,
	// each refusal closing the connection (one more dial each); then
	// given up by the broker. On a loaded machine a pull can also miss its
	// bound (a connection failure, one more dial); besides binding 2's
	// oversize refusals (which keep the connection), nothing else fails.
	s := e.mon.Snapshot()
	c0 := s.Bindings[e.bindingIndex(0, 0)]
	if c0.Error(trigger.ClassProtocol) != maxDeliver ||
		c0.Failed != maxDeliver+c0.Error(trigger.ClassConnection) ||
		s.Totals.Failed != s.Totals.Error(trigger.ClassProtocol)+s.Totals.Error(trigger.ClassConnection)+s.Totals.Error(trigger.ClassOversize) ||
		s.Dials < 1+maxDeliver || s.Dials > 1+maxDeliver+s.Totals.Error(trigger.ClassConnection)+s.Replaced {
		t.Errorf("binding 0 %+v, %d dials: want %d protocol failures, one dial after each, and no other dial without a failed visit", c0, s.Dials, maxDeliver)
	}
	info := te.info(0)
	if info.AckFloor.StreamSeq != behindOverCap || info.Delivered.ConsumerSeq != 2+maxDeliver+1 ||
		info.NumPending != 0 || info.NumAckPending != 0 || info.NumRedelivered != 1 {
		t.Errorf("binding 0 after the over-cap message was given up: %+v; want the ack floor at %d, %d deliveries, one message counted redelivered",
			info, behindOverCap, 2+maxDeliver+1)
	}
	held := at[behindOverCap].Sub(refused)
	if minHold := time.Duration(maxDeliver-1)*b0.AckWait() + b0.AckWait()/2; held < minHold {
		t.Errorf("the event behind the over-cap message ran %v after its first refusal, want no sooner than the broker's redelivery and give-up (%v)", held, minHold)
	}
	var last time.Time
	for _, seq := range during {
		if at[seq].After(at[behindOverCap]) {
			t.Errorf("binding 1's event %d ran after binding 0 was released: want it delivered during the hold", seq)
		}
		last = laterOf(last, at[seq])
	}
	t.Logf("figures: the over-cap header (%d bytes) held binding 0 for %v (max_deliver %d x ack wait %v), %d dials; binding 1 ran %d events in %v meanwhile; the oversize message (%d bytes of header and payload over max_bytes %d) kept binding 2 behind it for the %v until its deletion, %d refusals; the event behind it ran %v after the delete; settled %v after",
		capBytes+1, held, maxDeliver, b0.AckWait(), s.Dials, len(during), last.Sub(refused), len(oversizeHdr)+len(oversizeBody), maxBytes, stuck,
		len(host.failures(trigger.ClassOversize)), e.callsOf(id2)[0].At.Sub(deleted), took)

	hctx, hcancel := context.WithTimeout(t.Context(), trigWait)
	defer hcancel()
	if err := health.Wait(hctx, faultTick); err != nil {
		t.Errorf("after the scenario: %v", err)
	}
}

// laterOf returns the later of two times.
func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
