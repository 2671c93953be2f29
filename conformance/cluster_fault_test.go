package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/trigger"
)

// The publish load of the cluster scenarios: one event every
// clusterTick per tenant, through whichever node runs.
const (
	clusterTick = 50 * time.Millisecond
	// clusterMaxEvents bounds each tenant's publisher; a scenario stops
	// it once its faults are over.
	clusterMaxEvents = 2000
)

// TestClusterStepDown runs two tenants pinned to nodes 0 and 1 of a
// three-node cluster (R3 file streams and consumers, each tenant's
// runtime connection to its own node), publishes a steady 20 events/s to
// each, and makes the leaders step down during Run: tenant 0's consumer
// leader, tenant 1's stream leader, then tenant 1's consumer leader and
// tenant 0's stream leader. Neither tenant's connection is touched: the
// pinned node forwards to the new leaders. For each step-down it logs
// the election and the time to the first verified acknowledgement of a
// step that started after the step-down; every class the steps report is
// one of a cluster fault (no internal, no protocol); the ledger: nothing
// lost, no re-execution after a verified acknowledgement.
func TestClusterStepDown(t *testing.T) {
	// Not parallel: one cluster at a time, before the parallel tests,
	// whose timing bounds three more broker processes would strain.
	tenants := []string{"sd0", "sd1"}
	c := brokertest.StartCluster(t, broker.Options{Tenants: tenants}, broker.DefaultClusterSize)
	ce := clusterInstall(t, c, clusterSpec{tenants: tenants, pins: []int{0, 1}, admin: 2})
	ce.leaders(t, 0)
	ce.leaders(t, 1)

	h := newProcHost(ce.trigEnv)
	start := h.mark()
	run := ce.runProc(t, h)
	pubs := []*clusterPublisher{
		ce.startPublisher(t, t.Context(), 0, clusterMaxEvents, clusterTick),
		ce.startPublisher(t, t.Context(), 1, clusterMaxEvents, clusterTick),
	}
	ce.waitFlowing(t, h, start, pubs...)

	faults := []struct {
		name     string
		k        int
		consumer bool
	}{
		{"consumer leader of sd0", 0, true},
		{"stream leader of sd1", 1, false},
		{"consumer leader of sd1", 1, true},
		{"stream leader of sd0", 0, false},
	}
	for _, f := range faults {
		req := ce.requester(t, f.k)
		ctx, cancel := context.WithTimeout(t.Context(), clusterWait)
		sl, cl := ce.leaders(t, f.k)
		old := sl
		consumer := ce.cfg.Bindings[f.k].Consumer
		mark := h.mark()
		at := time.Now()
		var next *broker.Broker
		var err error
		if f.consumer {
			old = cl
			if err = c.StepDownConsumer(ctx, req, trigStream, consumer, nil); err == nil {
				next, err = c.WaitConsumerLeader(ctx, req, trigStream, consumer, old)
			}
		} else {
			if err = c.StepDownStream(ctx, req, trigStream, nil); err == nil {
				next, err = c.WaitStreamLeader(ctx, req, trigStream, old)
			}
		}
		cancel()
		if err != nil {
			t.Fatalf("%s: step-down: %v", f.name, err)
		}
		elected := time.Since(at)
		resume := waitResume(t, h, mark, f.k, at)
		t.Logf("figures: %s stepped down (%s to %s): new leader seen after %v, first verified ack of a step started after the step-down %v after it; classes %s",
			f.name, old.Name(), next.Name(), elected.Round(time.Millisecond), resume.Round(time.Millisecond), formatClasses(classCounts(h, mark, -1)))
	}

	for _, p := range pubs {
		p.stop(t)
	}
	v, _ := ce.settleVerdict(t)
	// The classes of the scenario, before the stop ends a step with
	// ClassShutdown.
	seen := classCounts(h, start, -1)
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkVerdict(t, v, true)
	checkClasses(t, seen)
	for k, p := range pubs {
		times, failed := p.times()
		t.Logf("figures: tenant %s: %d events stored (%d failed attempts), longest gap between verified acks %v; classes %s",
			tenants[k], len(times), failed, longestGap(h, start, k, times[0]).Round(time.Millisecond), formatClasses(classCounts(h, start, k)))
	}
	s := ce.mon.Snapshot()
	t.Logf("figures: %d steps, %d dials, %d replaced, %d delivered, %d uncertain", s.Steps, s.Dials, s.Replaced, s.Totals.Delivered, s.Totals.Uncertain)
	// A leader change elsewhere leaves each tenant's connection alone,
	// but for a pull the group left unanswered while it elected: its
	// bound closed the connection (ClassConnection), and the next step
	// dialled again. Consumer info and an acknowledgement left unanswered
	// (ClassConnection, ClassAckUncertain) keep it: the bound counts them
	// all.
	if lost := uint64(seen[trigger.ClassConnection] + seen[trigger.ClassAckUncertain]); s.Dials > uint64(len(tenants))+lost || s.Replaced != 0 {
		t.Errorf("%d dials, %d replaced, %d connections lost; want one dial per tenant and one per connection lost", s.Dials, s.Replaced, lost)
	}
}
