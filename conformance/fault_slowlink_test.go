package conformance_test

import (
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/faultproxy"
	"github.com/latent-systems/latent-nats/trigger"
)

// slowLinkDelay is the delay of every byte from the broker in
// TestFaultSlowLink.
const slowLinkDelay = 300 * time.Millisecond

// TestFaultSlowLink runs the runtime over a link that delays every byte
// from the broker by 300 ms, slower than a fixed 250 ms pull bound and well
// inside the binding's 2 s operation timeout: every event runs once and is
// acknowledged. Regression: the pull's bound was the 100 ms expiry plus a
// fixed 150 ms, so every pull's answer came after the runtime had closed
// its connection; the broker counted each such delivery against
// max_deliver and gave the events up without one ever running (the ledger
// reported them lost).
func TestFaultSlowLink(t *testing.T) {
	t.Parallel()
	var proxy *faultproxy.Proxy
	e := trigStart(t, trigSpec{
		tenants:   []string{"slow-link"},
		perTenant: []int{2},
		binding: func(_, _ int, b *trigger.Binding) {
			b.OperationTimeoutMS, b.RootBudgetMS, b.AckWaitMS = 2000, 2000, 3000
		},
		dialer: func(t *testing.T, b *broker.Broker) conn.Dialer {
			p, err := faultproxy.Start(b.Addr())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close() })
			if err := p.Set(faultproxy.Down, faultproxy.Fault{Kind: faultproxy.Latency, Delay: slowLinkDelay}); err != nil {
				t.Fatal(err)
			}
			proxy = p
			return p.Dialer()
		},
	})
	for range 3 {
		e.publish(0, 0, argOK)
		e.publish(0, 1, argOK)
	}
	run := e.run(t)
	v, took := e.settle(t)
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkVerdict(t, v, true)
	if v.Executions != v.Published || len(v.Reexecutions) != 0 {
		t.Errorf("verdict %s: want every event run exactly once", v)
	}
	s := e.mon.Snapshot()
	if s.Totals.Acked != uint64(v.Published) || s.Totals.Error(trigger.ClassConnection) != 0 {
		t.Errorf("counts %+v: want every event acknowledged and no exchange lost to the link", s.Totals)
	}
	t.Logf("over a link %v slow from the broker: %d events settled in %v, %d dials; proxy %+v", slowLinkDelay, v.Published, took, s.Dials, proxy.Stats())
}
