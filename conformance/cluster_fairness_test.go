package conformance_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/trigger"
)

// The fairness scenario's figures (docs/BENCHMARKS.md, Fairness under a
// paused consumer leader).
const (
	// fairTenants is the number of bindings, one per tenant.
	fairTenants = 8
	// fairTimeout is every binding's operation timeout.
	fairTimeout = 5 * time.Second
	// fairPause is how long the faulted binding's consumer leader is
	// paused, and the length of the unfaulted window measured before it.
	fairPause = 10 * time.Second
	// fairBacklog is each binding's backlog, published before Run starts:
	// more than the loop drains in both windows, so that every binding
	// always has work and the windows measure the loop's share.
	fairBacklog = 1500
	// fairShareMin is the least share of its unfaulted throughput each
	// healthy binding keeps during the pause; fairMaxDials the most dials
	// during the pause.
	fairShareMin = 0.5
	fairMaxDials = 2
)

// TestClusterFairness: eight bindings (one per tenant, each with a
// backlog, every runtime connection pinned to node 0) on a three-node
// cluster with a 5 s operation timeout; binding 0's stream and consumer
// leaders are moved to node 1 and every other binding's to node 0, then
// node 1 is paused (SIGSTOP) for 10 s. Binding 0's visits go unanswered:
// the request's deadline keeps the connection (conn.Config.KeepUnanswered)
// and the binding is backed off, so each other binding keeps at least half
// of the verified acknowledgements it made in the 10 s before the pause,
// at most two dials are made during the pause, and the ledger finds
// nothing lost and no re-execution after a verified acknowledgement.
// Opt-in (make fairness-cluster): a cluster, eight R3 tenants and two
// 10 s windows take about a minute.
func TestClusterFairness(t *testing.T) {
	tenants := make([]string, fairTenants)
	pins := make([]int, fairTenants)
	for k := range tenants {
		tenants[k] = fmt.Sprintf("fair%d", k)
	}
	c := brokertest.StartCluster(t, broker.Options{Tenants: tenants}, broker.DefaultClusterSize)
	ce := clusterInstall(t, c, clusterSpec{tenants: tenants, pins: pins, admin: 2, binding: func(_ int, b *trigger.Binding) {
		b.OperationTimeoutMS = int(fairTimeout / time.Millisecond)
		b.AckWaitMS = int((fairTimeout + 2*time.Second) / time.Millisecond)
		b.MaxDeliver = 5
	}})
	faulted := c.Node(1)
	ce.moveLeaders(t, 0, faulted)
	for k := 1; k < fairTenants; k++ {
		ce.moveLeaders(t, k, c.Node(0))
	}
	var pubs []*clusterPublisher
	for k := range tenants {
		pubs = append(pubs, ce.startPublisher(t, t.Context(), k, fairBacklog, time.Millisecond))
	}
	for _, p := range pubs {
		p.wait(t)
	}

	h := newProcHost(ce.trigEnv)
	start := h.mark()
	run := ce.runProc(t, h)
	h.waitReportWithin(t, "first delivery", start, clusterSettle, func(r procReport) bool { return verifiedAck(r.Report) })

	before := h.mark()
	time.Sleep(fairPause) // the unfaulted window
	pausedAt := h.mark()
	dials := ce.mon.Snapshot().Dials
	if err := faulted.Pause(); err != nil {
		t.Fatalf("pause %s: %v", faulted.Name(), err)
	}
	time.Sleep(fairPause) // the faulted window
	resumedAt := h.mark()
	dialsPaused := ce.mon.Snapshot().Dials - dials
	if err := faulted.Resume(); err != nil {
		t.Fatalf("resume %s: %v", faulted.Name(), err)
	}
	dials = ce.mon.Snapshot().Dials
	time.Sleep(fairPause) // the window after the resume: elections
	recoveredAt := h.mark()
	dialsResumed := ce.mon.Snapshot().Dials - dials

	unfaulted := ackCounts(h.reports(before)[:pausedAt-before])
	paused := ackCounts(h.reports(pausedAt)[:resumedAt-pausedAt])
	resumed := ackCounts(h.reports(resumedAt)[:recoveredAt-resumedAt])
	stall := longestStep(h.reports(pausedAt)[:resumedAt-pausedAt])
	stallAfter := longestStep(h.reports(resumedAt)[:recoveredAt-resumedAt])
	classesAfter := classCounts(h, resumedAt, -1)
	classes := classCounts(h, pausedAt, -1)
	for c, n := range classesAfter {
		classes[c] -= n
		if classes[c] == 0 {
			delete(classes, c)
		}
	}
	// The rest of the backlog drains at about the unfaulted rate (slower
	// under the race detector and a loaded machine): the settle's bound
	// follows it.
	drained := 0
	for _, r := range h.reports(start) {
		if verifiedAck(r.Report) {
			drained++
		}
	}
	rate := float64(sum(unfaulted)) / fairPause.Seconds()
	left := time.Duration(float64(fairTenants*fairBacklog-drained) / max(rate, 1) * 2 * float64(time.Second))
	v, took := ce.settleVerdictWithin(t, clusterSettle+left)
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkVerdict(t, v, true)
	least, leastAfter := math.Inf(1), math.Inf(1)
	for k := 1; k < fairTenants; k++ {
		share := float64(paused[k]) / float64(max(unfaulted[k], 1))
		after := float64(resumed[k]) / float64(max(unfaulted[k], 1))
		least, leastAfter = min(least, share), min(leastAfter, after)
		t.Logf("figures: binding %d: %d verified acks in the %v before the pause, %d during it (%.2fx), %d in the %v after it (%.2fx)",
			k, unfaulted[k], fairPause, paused[k], share, resumed[k], fairPause, after)
		if share < fairShareMin {
			t.Errorf("binding %d kept %.2fx of its unfaulted throughput during the pause, want at least %.2fx", k, share, fairShareMin)
		}
		if unfaulted[k]+paused[k]+resumed[k] >= fairBacklog {
			t.Errorf("binding %d ran out of backlog: raise fairBacklog", k)
		}
	}
	s := ce.mon.Snapshot()
	t.Logf("figures: during the pause: least share %.2fx, longest step %v, %d dials, classes %s; faulted binding %d verified acks before, %d during",
		least, stall.Round(time.Millisecond), dialsPaused, formatClasses(classes), unfaulted[0], paused[0])
	t.Logf("figures: in the %v after the resume: least share %.2fx, longest step %v, %d dials, classes %s; faulted binding %d verified acks",
		fairPause, leastAfter, stallAfter.Round(time.Millisecond), dialsResumed, formatClasses(classesAfter), resumed[0])
	t.Logf("figures: settled %v after; %d steps, %d dials, %d uncertain in all", took.Round(time.Millisecond), s.Steps, s.Dials, s.Totals.Uncertain)
	if dialsPaused > fairMaxDials {
		t.Errorf("%d dials during the pause, want at most %d", dialsPaused, fairMaxDials)
	}
}

// ackCounts counts the verified acknowledgements of each tenant's one
// binding among reports.
func ackCounts(reports []procReport) map[int]int {
	out := make(map[int]int)
	for _, r := range reports {
		if verifiedAck(r.Report) {
			out[tenantOf(r.Report)]++
		}
	}
	return out
}


// longestStep returns the longest time between two consecutive reports:
// the longest the owner's loop spent on one step.
func longestStep(reports []procReport) time.Duration {
	var d time.Duration
	for i := 1; i < len(reports); i++ {
		d = max(d, reports[i].At.Sub(reports[i-1].At))
	}
	return d
}

// sum adds the counts.
func sum(m map[int]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
