package conformance_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/trigger"
)

// The cluster scenarios whose elections take 4 to 9 s each are named
// TestClusterSoak: make test leaves them out and make soak-cluster runs
// them.

// clusterSoakWait bounds a restart, a lame duck and the wait for a node's
// health in the soak scenarios.
const clusterSoakWait = 2 * time.Minute

// dialClasses are the classes of a tenant whose node is down.
var dialClasses = []trigger.ErrorClass{trigger.ClassDial, trigger.ClassConnection, trigger.ClassDialBackoff}

// TestClusterSoakKillLeader kills (SIGKILL) the node that leads both
// tenants' streams and consumers, pinned to neither tenant: tenants kl0
// and kl1 run pinned to nodes 0 and 1 under a steady 20 events/s each,
// and node 2 leads every stream and consumer. Delivery resumes on both
// tenants once the survivors elected new leaders, without a new
// connection; the node is restarted and rejoins. Figures: the elections
// and the time from the kill to each tenant's first verified
// acknowledgement of a step that started after it. Every class reported
// is one of a cluster fault; the ledger: nothing lost, no re-execution
// after a verified acknowledgement (the acknowledgements are replicated).
func TestClusterSoakKillLeader(t *testing.T) {
	t.Parallel()
	tenants := []string{"kl0", "kl1"}
	c := brokertest.StartCluster(t, broker.Options{Tenants: tenants}, broker.DefaultClusterSize)
	ce := clusterInstall(t, c, clusterSpec{tenants: tenants, pins: []int{0, 1}, admin: 0})
	leader := c.Node(2)
	for k := range tenants {
		ce.moveLeaders(t, k, leader)
	}
	h := newProcHost(ce.trigEnv)
	start := h.mark()
	run := ce.runProc(t, h)
	pubs := []*clusterPublisher{
		ce.startPublisher(t, t.Context(), 0, clusterMaxEvents, clusterTick),
		ce.startPublisher(t, t.Context(), 1, clusterMaxEvents, clusterTick),
	}
	ce.waitFlowing(t, h, start, pubs...)

	mark := h.mark()
	killed := time.Now()
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	for k := range tenants {
		ctx, cancel := context.WithTimeout(t.Context(), clusterWait)
		req := ce.requester(t, k)
		s, err := c.WaitStreamLeader(ctx, req, trigStream, leader)
		if err != nil {
			cancel()
			t.Fatalf("tenant %s: stream leader after the kill: %v", tenants[k], err)
		}
		sAt := time.Since(killed)
		cl, err := c.WaitConsumerLeader(ctx, req, trigStream, ce.cfg.Bindings[k].Consumer, leader)
		cancel()
		if err != nil {
			t.Fatalf("tenant %s: consumer leader after the kill: %v", tenants[k], err)
		}
		t.Logf("figures: tenant %s: stream leader %s seen %v after the kill, consumer leader %s %v after it",
			tenants[k], s.Name(), sAt.Round(time.Millisecond), cl.Name(), time.Since(killed).Round(time.Millisecond))
	}
	for k := range tenants {
		resume := waitResume(t, h, mark, k, killed)
		t.Logf("figures: tenant %s: first verified ack of a step started after the kill %v after it; classes %s",
			tenants[k], resume.Round(time.Millisecond), formatClasses(classCounts(h, mark, k)))
	}

	ctx, cancel := context.WithTimeout(t.Context(), clusterSoakWait)
	defer cancel()
	restarted := time.Now()
	if err := leader.Restart(ctx); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if err := c.WaitHealthy(ctx, leader); err != nil {
		t.Fatalf("the restarted node: %v", err)
	}
	t.Logf("figures: %s restarted and healthy in %v", leader.Name(), time.Since(restarted).Round(time.Millisecond))

	ce.finish(t, h, run, start, pubs, true)
}

// TestClusterSoakKillPinned kills (SIGKILL) node 1, the node tenant kp1
// is pinned to; tenant kp0 is pinned to node 0 and node 2 leads every
// stream and consumer. kp1's steps report a connection class (dial,
// connection, dial backoff) while its node is down; kp0 delivers every
// event published to it during the outage (its rate logged). Once node 1
// is restarted, kp1 delivers again, the events published to it meanwhile
// (through the other nodes) among them. Figures: kp0's delivery rate
// during the outage, the time from the restart to kp1's first verified
// acknowledgement. Every class reported is one of a cluster fault; the
// ledger: nothing lost, no re-execution after a verified acknowledgement.
func TestClusterSoakKillPinned(t *testing.T) {
	t.Parallel()
	tenants := []string{"kp0", "kp1"}
	c := brokertest.StartCluster(t, broker.Options{Tenants: tenants}, broker.DefaultClusterSize)
	ce := clusterInstall(t, c, clusterSpec{tenants: tenants, pins: []int{0, 1}, admin: 2})
	for k := range tenants {
		ce.moveLeaders(t, k, c.Node(2))
	}
	h := newProcHost(ce.trigEnv)
	start := h.mark()
	run := ce.runProc(t, h)
	pubs := []*clusterPublisher{
		ce.startPublisher(t, t.Context(), 0, clusterMaxEvents, clusterTick),
		ce.startPublisher(t, t.Context(), 1, clusterMaxEvents, clusterTick),
	}
	ce.waitFlowing(t, h, start, pubs...)

	pinned := c.Node(1)
	mark := h.mark()
	killed := time.Now()
	if err := pinned.Kill(); err != nil {
		t.Fatal(err)
	}
	r := h.waitReportWithin(t, "tenant kp1 reporting its node down", mark, clusterSettle, func(r procReport) bool {
		return tenantOf(r.Report) == 1 && slices.Contains(dialClasses, r.Report.Error)
	})
	t.Logf("figures: kp1 reported %s %v after the kill", r.Report.Error, r.At.Sub(killed).Round(time.Millisecond))

	// The outage: kp0 keeps delivering; at least 3 s of its load.
	before := pubs[0].count()
	trigEventually(t, "tenant kp0 delivering during the outage", clusterSettle, func() bool {
		return pubs[0].count() >= before+60 && ce.ranAll(0)
	})
	outage := time.Now()
	acks := 0
	for _, r := range h.reports(mark) {
		if tenantOf(r.Report) == 0 && verifiedAck(r.Report) {
			acks++
		}
	}
	stored, _ := pubs[0].times()
	t.Logf("figures: during the %v outage kp0 had %.1f events/s stored and %.1f verified acks/s, every one of its events run; longest gap between its acks %v; kp1 classes %s",
		outage.Sub(killed).Round(time.Millisecond), rate(stored, killed, outage), float64(acks)/outage.Sub(killed).Seconds(),
		longestGap(h, mark, 0, killed).Round(time.Millisecond), formatClasses(classCounts(h, mark, 1)))
	if s := ce.mon.Snapshot(); s.Bindings[1].Error(trigger.ClassDial)+s.Bindings[1].Error(trigger.ClassConnection) == 0 {
		t.Errorf("kp1's counts show no dial or connection failure: %+v", s.Bindings[1])
	}
	if n := classCounts(h, mark, 0); len(n) != 0 {
		t.Logf("kp0 classes during the outage: %s", formatClasses(n))
	}

	ctx, cancel := context.WithTimeout(t.Context(), clusterSoakWait)
	defer cancel()
	back := h.mark()
	restarted := time.Now()
	if err := pinned.Restart(ctx); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	resume := waitResume(t, h, back, 1, restarted)
	t.Logf("figures: kp1's first verified ack %v after the restart began (%v after the kill)", resume.Round(time.Millisecond), time.Since(killed).Round(time.Millisecond))
	if err := c.WaitHealthy(ctx, pinned); err != nil {
		t.Fatalf("the restarted node: %v", err)
	}
	ce.finish(t, h, run, start, pubs, true)
}

// rollingTick paces each of the three tenants' publishers of
// TestClusterSoakRollingRestart: 10 events/s each leaves a loaded
// two-core machine room to drain the backlog of a tenant whose node was
// down.
const rollingTick = 100 * time.Millisecond

// TestClusterSoakRollingRestart restarts the three nodes one at a time
// under a steady 10 events/s to each of three tenants pinned to nodes 0,
// 1 and 2: each node in lame duck mode with a one-second grace period,
// then Restart, then its health; the next node only once every tenant
// delivered again. Figures per node: the lame duck, the restart, the time
// from the restart to the first verified acknowledgement of the tenant
// pinned to it (its steps until then report the node's dials refused). Every class reported is one of a cluster fault; the
// ledger: nothing lost, no re-execution after a verified acknowledgement.
func TestClusterSoakRollingRestart(t *testing.T) {
	t.Parallel()
	tenants := []string{"rr0", "rr1", "rr2"}
	c := brokertest.StartCluster(t, broker.Options{Tenants: tenants, LameDuckGracePeriod: time.Second}, broker.DefaultClusterSize)
	ce := clusterInstall(t, c, clusterSpec{tenants: tenants, pins: []int{0, 1, 2}, admin: 0})
	for k := range tenants {
		ce.leaders(t, k)
	}
	h := newProcHost(ce.trigEnv)
	start := h.mark()
	run := ce.runProc(t, h)
	var pubs []*clusterPublisher
	for k := range tenants {
		pubs = append(pubs, ce.startPublisher(t, t.Context(), k, clusterMaxEvents, rollingTick))
	}
	ce.waitFlowing(t, h, start, pubs...)

	for i, node := range c.Nodes() {
		ctx, cancel := context.WithTimeout(t.Context(), clusterSoakWait)
		mark := h.mark()
		began := time.Now()
		if err := node.LameDuck(ctx); err != nil {
			cancel()
			t.Fatalf("%s: lame duck: %v", node.Name(), err)
		}
		ducked := time.Since(began)
		if err := node.Restart(ctx); err != nil {
			cancel()
			t.Fatalf("%s: Restart: %v", node.Name(), err)
		}
		restarted := time.Since(began)
		up := time.Now()
		err := c.WaitHealthy(ctx, node)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", node.Name(), err)
		}
		healthy := time.Since(began)
		resume := waitResume(t, h, mark, i, up)
		counts := make([]int, len(pubs))
		for k, p := range pubs {
			counts[k] = p.count()
		}
		ce.waitFlowingFrom(t, h, mark, fmt.Sprintf("every tenant delivering after %s restarted", node.Name()), counts, pubs...)
		t.Logf("figures: %s: lame duck %v, restarted %v and healthy %v after it began; tenant %s's first verified ack of a step started after the restart %v after the restart; classes %s",
			node.Name(), ducked.Round(time.Millisecond), restarted.Round(time.Millisecond), healthy.Round(time.Millisecond),
			tenants[i], resume.Round(time.Millisecond), formatClasses(classCounts(h, mark, -1)))
	}
	ce.finish(t, h, run, start, pubs, true)
}

// finish stops the publishers, waits for the consumers to settle, stops
// Run and checks the verdict (durable: no re-execution after a verified
// acknowledgement) and the classes reported since start; it logs each
// tenant's figures.
func (ce *clusterEnv) finish(t *testing.T, h *procHost, run *trigRun, start int, pubs []*clusterPublisher, durable bool) {
	t.Helper()
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
	checkVerdict(t, v, durable)
	checkClasses(t, seen)
	for _, p := range pubs {
		times, failed := p.times()
		t.Logf("figures: tenant %s: %d events stored (%d failed publish attempts), re-executions by cause:%s; classes %s",
			ce.tenants[p.k].id, len(times), failed, byCause(v), formatClasses(classCounts(h, start, p.k)))
	}
	s := ce.mon.Snapshot()
	t.Logf("figures: %d steps, %d dials, %d replaced, %d delivered, %d uncertain", s.Steps, s.Dials, s.Replaced, s.Totals.Delivered, s.Totals.Uncertain)
}
