package conformance_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/internal/wire"
	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// TestTriggerTraceLink publishes events through the real broker with and
// without a W3C traceparent header and steps each one to its function: a
// header block with one valid traceparent (under the lower-case name and
// under the "Traceparent" an HTTP header carrier writes) reaches the
// function as Call.Link; none, two, or a malformed one is no link. Every
// Call's Trace is fresh, never the producer's trace-id, and what the
// binding selects (principal, binding, revision, route generation) is the
// same for every event.
func TestTriggerTraceLink(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{tenants: []string{"trace"}, perTenant: []int{1}})
	var (
		mu    sync.Mutex
		calls []refhost.Call
	)
	e.setAction(func(_ context.Context, c refhost.Call) error {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, c)
		return nil
	})
	const (
		tp1 = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		tp2 = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
	)
	header := func(kv ...string) []byte {
		h, err := wire.AppendHeader(nil, kv...)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	events := []struct {
		name   string
		header []byte
		want   string // the link's traceparent form, "none" for no link
	}{
		{"lower-case name beside other fields", header("Nats-Msg-Id", "trace-1", "traceparent", tp1, "tracestate", "k=v"), tp1},
		{"HTTP carrier case", header("Traceparent", tp2), tp2},
		{"no header block", nil, "none"},
		{"other fields only", header("X-Order", "42"), "none"},
		{"two traceparent fields", header("traceparent", tp1, "Traceparent", tp1), "none"},
		{"upper-case hex", header("traceparent", strings.ToUpper(tp1)), "none"},
		{"version 00 with a trailing field", header("traceparent", tp1+"-x"), "none"},
		{"version ff", header("traceparent", "ff"+tp1[2:]), "none"},
	}
	id := e.bindingID(0, 0)
	for _, ev := range events {
		var seq uint64
		if ev.header == nil {
			seq = e.publish(0, 0, argActions)
		} else {
			seq, _ = e.publishHeader(t, 0, 0, ev.header, trigPayload(argActions))
			e.led.Published(id, seq)
		}
		rep := e.stepUntil(t, ev.name, 10, func(r trigger.StepReport) bool { return r.Result == trigger.ResultDelivered })
		if rep.StreamSeq != seq || rep.Outcome != trigger.OutcomeSuccess || rep.Ack != pull.AckVerified {
			t.Fatalf("%s: report %+v, want seq %d run and acknowledged", ev.name, rep, seq)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	if len(calls) != len(events) {
		t.Fatalf("%d calls, want %d", len(calls), len(events))
	}
	traces := map[trigger.TraceID]bool{}
	for i, ev := range events {
		c := calls[i]
		if got := c.Link.String(); got != ev.want {
			t.Errorf("%s: Link %s, want %s", ev.name, got, ev.want)
		}
		if c.Trace == (trigger.TraceID{}) || traces[c.Trace] || c.Trace.String() == tp1[3:35] || c.Trace.String() == tp2[3:35] {
			t.Errorf("%s: Trace %v is not a fresh trace", ev.name, c.Trace)
		}
		traces[c.Trace] = true
		selected := func(c refhost.Call) refhost.Call {
			return refhost.Call{Principal: c.Principal, Binding: c.Binding, Revision: c.Revision, RouteGeneration: c.RouteGeneration}
		}
		if diff := cmp.Diff(selected(calls[0]), selected(c)); diff != "" {
			t.Errorf("%s: the binding's selection differs from the first event's (-first +this):\n%s", ev.name, diff)
		}
	}
	v, _ := e.settle(t)
	checkVerdict(t, v, true)
}
