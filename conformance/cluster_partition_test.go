package conformance_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/tools/faultproxy"
	"github.com/latent-systems/latent-nats/trigger"
)

// The partition scenarios cut the routes between nodes (broker.Options
// ProxyRoutes, a fault proxy per ordered pair of nodes) while the clients'
// connections stay: a cut resets the routes of a link at once and every
// reconnection as soon as it is made, until the heal.
//
// What nats-server v2.14.6 does (raft.go, jetstream_cluster.go,
// consumer.go):
//
//   - An R3 consumer's leader answers an acknowledgement only once the
//     acknowledgement is committed: updateAcks proposes it to the
//     consumer's Raft group and keeps the reply (addAckReply);
//     processReplicatedAck sends it when the entry is applied, after a
//     quorum stored it. A leader cut off in a minority commits nothing, so
//     it verifies no acknowledgement, though it stays leader until it
//     notices the lost quorum (lostQuorumInterval, 10 s).
//   - A message goes one hop over the routes: a node cut from the leader
//     of a group does not reach it through a third node. Its clients' API
//     requests and acknowledgements go unanswered (503, or the deadline).
//   - A follower that hears no leader for its election timeout (4 to 9 s)
//     campaigns, with a higher term.
var routeCut = faultproxy.Fault{Kind: faultproxy.CutRST}

// partitionHold is how long a partition lasts past the majority's first
// verified acknowledgement: past the minority leader's lost-quorum
// interval (10 s from the cut), so that the minority's old leaders have
// stepped down before the heal.
const partitionHold = 4 * time.Second

// partitionTick paces each tenant's publisher: 10 events/s each leaves a
// loaded two-core machine room for three tenants and an election.
const partitionTick = 100 * time.Millisecond

// verifiedAcks counts tenant k's verified acknowledgements among the
// reports from from on, of steps that started at or after since.
func verifiedAcks(h *procHost, from, k int, since time.Time) int {
	n := 0
	for _, r := range h.reports(from) {
		if tenantOf(r.Report) == k && verifiedAck(r.Report) && !r.Report.At.Before(since) {
			n++
		}
	}
	return n
}

// stepResults formats the results of tenant k's steps among the reports
// from from on ("delivered 3, empty 40").
func stepResults(h *procHost, from, k int) string {
	counts := make(map[trigger.StepResult]int)
	for _, r := range h.reports(from) {
		if tenantOf(r.Report) == k {
			counts[r.Report.Result]++
		}
	}
	var parts []string
	for res := trigger.ResultSkipped; res <= trigger.ResultShutdown; res++ {
		if n := counts[res]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", res, n))
		}
	}
	return strings.Join(parts, ", ")
}

// stepsBack returns the time from since to tenant k's first step that
// succeeded (empty or delivered, no error class) after its first failed
// step among the reports from from on; 0 when no step failed or none
// succeeded since.
func stepsBack(h *procHost, from, k int, since time.Time) time.Duration {
	failed := false
	for _, r := range h.reports(from) {
		switch {
		case tenantOf(r.Report) != k || r.Report.At.Before(since):
		case r.Report.Error != 0:
			failed = true
		case failed && (r.Report.Result == trigger.ResultEmpty || r.Report.Result == trigger.ResultDelivered):
			return r.Report.At.Sub(since)
		}
	}
	return 0
}

// firstStored returns the time from since to the first event p stored
// after it (0: none yet).
func firstStored(p *clusterPublisher, since time.Time) time.Duration {
	times, _ := p.times()
	for _, at := range times {
		if at.After(since) {
			return at.Sub(since)
		}
	}
	return 0
}

// startPartitioned starts a three-node cluster with proxied routes,
// installs tenants pinned to pins (administrators on node 0), moves each
// tenant's stream and consumer leaders to leaders[k], starts Run and one
// publisher per tenant, and returns once events flow.
func startPartitioned(t *testing.T, tenants []string, pins, leaders []int) (*clusterEnv, *procHost, *trigRun, int, []*clusterPublisher) {
	t.Helper()
	c := brokertest.StartCluster(t, broker.Options{Tenants: tenants, ProxyRoutes: true}, broker.DefaultClusterSize)
	ce := clusterInstall(t, c, clusterSpec{tenants: tenants, pins: pins, admin: 0})
	for k := range tenants {
		ce.moveLeaders(t, k, c.Node(leaders[k]))
	}
	h := newProcHost(ce.trigEnv)
	start := h.mark()
	run := ce.runProc(t, h)
	var pubs []*clusterPublisher
	for k := range tenants {
		pubs = append(pubs, ce.startPublisher(t, t.Context(), k, clusterMaxEvents, partitionTick))
	}
	ce.waitFlowing(t, h, start, pubs...)
	return ce, h, run, start, pubs
}

// heal heals every link, logs how long the mesh took to form again, and
// returns when the heal began.
func (ce *clusterEnv) heal(t *testing.T) time.Time {
	t.Helper()
	at := time.Now()
	if err := ce.c.Heal(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), clusterSoakWait)
	defer cancel()
	if _, err := ce.c.WaitFormed(ctx); err != nil {
		t.Fatalf("not formed again after the heal: %v", err)
	}
	t.Logf("figures: healed; formed again %v after the heal", time.Since(at).Round(time.Millisecond))
	return at
}

// TestClusterSoakPartitionMinority cuts node 2 off from nodes 0 and 1
// (every route of both links reset, reconnections refused) with three
// tenants, each publishing 10 events/s through the nodes:
//
//   - pm0 pinned to node 2, which leads its stream and consumer: the
//     leader is isolated in the minority with the runtime;
//   - pm1 pinned to node 0, its leaders on node 2: the leader is
//     isolated, the runtime in the majority;
//   - pm2 pinned to node 2, its leaders on node 0: the runtime's node is
//     isolated from its leaders.
//
// pm1 delivers again once the majority elected new leaders. pm0 and pm2
// get no verified acknowledgement while the partition lasts (their node
// reaches no quorum: the minority leader commits nothing, the majority's
// leaders are a hop away). The partition holds until pm1 delivers and
// partitionHold more, then heals; every tenant delivers again. Figures:
// the majority's election, each tenant's time to resume (pm1 from the
// cut, pm0 and pm2 from the heal; for pm1 also when its steps succeed
// again and when the stream stores an event again), the classes. The
// ledger: nothing lost, no re-execution after a verified acknowledgement.
//
// Two partitions, each on a cluster of its own: "cut" resets the routes
// (a link refusing connections), "stall" holds every byte of them until
// the heal and then delivers it (a link dropping packets, which TCP
// retransmits once it is back): the nodes see no error, only silence.
func TestClusterSoakPartitionMinority(t *testing.T) {
	// Not parallel: its times to resume are the figures.
	for _, tc := range []struct {
		name  string
		fault faultproxy.Fault
	}{
		{"cut", routeCut},
		{"stall", faultproxy.Fault{Kind: faultproxy.Stall}},
	} {
		t.Run(tc.name, func(t *testing.T) { partitionMinority(t, tc.fault) })
	}
}

// partitionMinority is one case of TestClusterSoakPartitionMinority.
func partitionMinority(t *testing.T, fault faultproxy.Fault) {
	tenants := []string{"pm0", "pm1", "pm2"}
	ce, h, run, start, pubs := startPartitioned(t, tenants, []int{2, 0, 2}, []int{2, 2, 0})
	c := ce.c

	mark := h.mark()
	cut := time.Now()
	if err := c.Partition(fault, []int{2}, []int{0, 1}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), clusterWait)
	defer cancel()
	req := ce.requester(t, 1) // through node 0, in the majority
	s, err := c.WaitStreamLeader(ctx, req, trigStream, c.Node(2))
	if err != nil {
		t.Fatalf("pm1: stream leader after the cut: %v", err)
	}
	cl, err := c.WaitConsumerLeader(ctx, req, trigStream, ce.cfg.Bindings[1].Consumer, c.Node(2))
	if err != nil {
		t.Fatalf("pm1: consumer leader after the cut: %v", err)
	}
	elected := time.Since(cut)
	resume := waitResume(t, h, mark, 1, cut)
	t.Logf("figures: pm1 (runtime in the majority, leaders isolated): stream leader %s, consumer leader %s seen %v after the cut; steps succeed again (empty or delivered) %v after it, the first event stored after the cut %v after it; first verified ack %v after it",
		s.Name(), cl.Name(), elected.Round(time.Millisecond), stepsBack(h, mark, 1, cut).Round(time.Millisecond),
		firstStored(pubs[1], cut).Round(time.Millisecond), resume.Round(time.Millisecond))

	// Hold the partition past the minority's lost-quorum interval.
	hold := time.NewTimer(max(partitionHold, 10*time.Second+partitionHold-time.Since(cut)))
	<-hold.C
	healMark := h.mark()
	for _, k := range []int{0, 2} {
		n := verifiedAcks(h, mark, k, cut)
		t.Logf("figures: %s during the %v partition: %d verified acks of steps started after the cut; classes %s",
			tenants[k], time.Since(cut).Round(time.Millisecond), n, formatClasses(classCounts(h, mark, k)))
		if n != 0 {
			t.Errorf("%s: %d verified acknowledgements while its node was cut off from a quorum", tenants[k], n)
		}
	}
	healed := ce.heal(t)
	for _, k := range []int{0, 2} {
		r := waitResume(t, h, healMark, k, healed)
		t.Logf("figures: %s: first verified ack %v after the heal (%v after the cut)", tenants[k], r.Round(time.Millisecond), time.Since(cut).Round(time.Millisecond))
	}
	ce.finish(t, h, run, start, pubs, true)
}

// TestClusterSoakPartitionBridge cuts one link, between nodes 0 and 1,
// and leaves node 2 routed to both: a partial partition, the one split of
// three nodes with a node on each side (a symmetric split of the nodes
// needs four, and then no side of an R3 group holds a majority without
// the bridge). Tenant pb0 is pinned to node 0 with its leaders on node 1,
// on the other side of the cut; tenant pb1 is pinned to node 2, the
// bridge, with its leaders on node 0. Node 0 hears no heartbeat from
// pb0's leaders and the groups elect again; a leader node 0 reaches
// (itself or node 2) lets pb0 deliver again during the cut. pb1 keeps
// delivering throughout. The cut lasts until pb0
// delivers and partitionHold more. Figures: pb0's time to resume during
// the cut and its leaders then, pb1's longest gap, the time to form
// again after the heal. The ledger: nothing lost, no re-execution after a
// verified acknowledgement.
func TestClusterSoakPartitionBridge(t *testing.T) {
	// Not parallel: its times to resume are the figures.
	tenants := []string{"pb0", "pb1"}
	ce, h, run, start, pubs := startPartitioned(t, tenants, []int{0, 2}, []int{1, 0})
	c := ce.c

	mark := h.mark()
	cut := time.Now()
	if err := c.SetLink(0, 1, routeCut); err != nil {
		t.Fatal(err)
	}
	resume := waitResume(t, h, mark, 0, cut)
	ctx, cancel := context.WithTimeout(t.Context(), clusterWait)
	defer cancel()
	req := ce.requester(t, 0)
	// With a node bridging the cut, the groups may be electing again when
	// asked: wait for a leader, as the runtime does.
	s, err := c.WaitStreamLeader(ctx, req, trigStream, nil)
	if err != nil {
		t.Fatalf("pb0: stream leader: %v", err)
	}
	cl, err := c.WaitConsumerLeader(ctx, req, trigStream, ce.cfg.Bindings[0].Consumer, nil)
	if err != nil {
		t.Fatalf("pb0: consumer leader: %v", err)
	}
	t.Logf("figures: pb0 (runtime on node 0, leaders on node 1, cut from node 0): steps succeed again %v after the cut, the first event stored after the cut %v after it, first verified ack %v after it, stream leader then %s, consumer leader %s; classes %s",
		stepsBack(h, mark, 0, cut).Round(time.Millisecond), firstStored(pubs[0], cut).Round(time.Millisecond),
		resume.Round(time.Millisecond), s.Name(), cl.Name(), formatClasses(classCounts(h, mark, 0)))
	if cl == c.Node(1) {
		t.Errorf("pb0 delivered again through node 0 with its consumer leader still on node 1, cut from node 0")
	}
	hold := time.NewTimer(partitionHold)
	<-hold.C
	t.Logf("figures: pb1 (on the bridge) during the %v cut: %d verified acks, longest gap %v; classes %s",
		time.Since(cut).Round(time.Millisecond), verifiedAcks(h, mark, 1, cut), longestGap(h, mark, 1, cut).Round(time.Millisecond),
		formatClasses(classCounts(h, mark, 1)))
	ce.heal(t)
	ce.finish(t, h, run, start, pubs, true)
}

// flapCycles and flapPeriod make the flapping link: cut for half a
// period, healed for the other half, flapCycles times.
const (
	flapCycles = 6
	flapPeriod = 2 * time.Second
	// routeDelay is the latency of every route in the delay phase.
	routeDelay = 100 * time.Millisecond
	// delayPhase is how long the routes are delayed.
	delayPhase = 5 * time.Second
)

// TestClusterSoakPartitionFlapping flaps the link between node 0 and
// node 1 (cut 1 s, healed 1 s, six times) with tenant pf0 pinned to
// node 0 and its leaders on node 1, and tenant pf1 pinned to node 2 with
// its leaders on node 0; then delays every route by 100 ms for 5 s.
// Figures: each tenant's verified acknowledgements and longest gap during
// the flapping and during the delay, the time from the last heal to
// pf0's next verified acknowledgement. The ledger: nothing lost, no
// re-execution after a verified acknowledgement.
func TestClusterSoakPartitionFlapping(t *testing.T) {
	// Not parallel: its times to resume are the figures.
	tenants := []string{"pf0", "pf1"}
	ce, h, run, start, pubs := startPartitioned(t, tenants, []int{0, 2}, []int{1, 0})
	c := ce.c

	mark := h.mark()
	began := time.Now()
	ticker := time.NewTicker(flapPeriod / 2)
	defer ticker.Stop()
	pass := faultproxy.Fault{Kind: faultproxy.Pass}
	for i := range 2 * flapCycles {
		f := routeCut
		if i%2 == 1 {
			f = pass
		}
		if err := c.SetLink(0, 1, f); err != nil {
			t.Fatal(err)
		}
		<-ticker.C
	}
	healMark := h.mark()
	for k := range tenants {
		t.Logf("figures: %s during %v of flapping: %d verified acks, longest gap %v; classes %s",
			tenants[k], time.Since(began).Round(time.Millisecond), verifiedAcks(h, mark, k, began),
			longestGap(h, mark, k, began).Round(time.Millisecond), formatClasses(classCounts(h, mark, k)))
	}
	ctx, cancel := context.WithTimeout(t.Context(), clusterSoakWait)
	defer cancel()
	if _, err := c.WaitFormed(ctx); err != nil {
		t.Fatalf("not formed after the flapping: %v", err)
	}
	r := waitResume(t, h, healMark, 0, time.Now())
	t.Logf("figures: pf0 delivering: a verified ack %v after the flapping ended (the last heal %v before its end)",
		r.Round(time.Millisecond), flapPeriod/2)

	delayMark := h.mark()
	delayed := time.Now()
	stored := make([]int, len(pubs))
	for k, p := range pubs {
		stored[k] = p.count()
	}
	for i := range c.Size() {
		for j := i + 1; j < c.Size(); j++ {
			if err := c.SetLink(i, j, faultproxy.Fault{Kind: faultproxy.Latency, Delay: routeDelay}); err != nil {
				t.Fatal(err)
			}
		}
	}
	phase := time.NewTimer(delayPhase)
	<-phase.C
	for k := range tenants {
		t.Logf("figures: %s with every route delayed %v for %v: %d events stored, %d verified acks, longest gap %v; steps %s; classes %s",
			tenants[k], routeDelay, time.Since(delayed).Round(time.Millisecond), pubs[k].count()-stored[k], verifiedAcks(h, delayMark, k, delayed),
			longestGap(h, delayMark, k, delayed).Round(time.Millisecond), stepResults(h, delayMark, k), formatClasses(classCounts(h, delayMark, k)))
	}
	ce.heal(t)
	ce.finish(t, h, run, start, pubs, true)
}
