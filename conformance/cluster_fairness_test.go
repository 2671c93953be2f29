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
	// fairBindings is the number of bindings.
	fairBindings = 8
	// fairTimeout is every binding's operation timeout.
	fairTimeout = 5 * time.Second
	// fairPause is how long the faulted binding's consumer leader is
	// paused, and the length of the unfaulted window measured before it.
	fairPause = 10 * time.Second
	// fairBacklog is each binding's backlog, published before Run starts:
	// more than the loop drains in the three windows (with or without the
	// race detector), so that every binding always has work and the
	// windows measure the loop's share.
	fairBacklog = 3000
	// fairShareMin is the least share of its unfaulted throughput each
	// healthy binding keeps during the pause; fairMaxDials the most dials
	// during the pause.
	fairShareMin = 0.5
	fairMaxDials = 2
)

// TestClusterFairness: eight bindings, each with a backlog, on a
// three-node cluster with a 5 s operation timeout, every runtime
// connection pinned to node 0: one binding per tenant, and four per tenant
// (two tenants: the faulted binding shares its tenant's connection with
// three healthy ones). Binding 0's consumer leader is moved to node 1 and
// every other binding's consumer and stream leaders to node 0 (with one
// binding per tenant, binding 0's stream leader goes to node 1 too), then
// node 1 is paused (SIGSTOP) for 10 s. Binding 0's visits go unanswered:
// the request's deadline keeps the connection (conn.Config.KeepUnanswered)
// and the binding is backed off, so each other binding keeps at least half
// of the verified acknowledgements it made in the 10 s before the pause,
// at most two dials are made during the pause, and the ledger finds
// nothing lost and no re-execution after a verified acknowledgement.
// Opt-in (make fairness-cluster): each layout, a cluster and three 10 s
// windows take one to three minutes.
func TestClusterFairness(t *testing.T) {
	for _, perTenant := range []int{1, 4} {
		t.Run(fmt.Sprintf("%d per tenant", perTenant), func(t *testing.T) { clusterFairness(t, perTenant) })
	}
}

// clusterFairness runs TestClusterFairness with perTenant bindings per
// tenant.
func clusterFairness(t *testing.T, perTenant int) {
	n := fairBindings / perTenant
	tenants := make([]string, n)
	pins := make([]int, n)
	per := make([]int, n)
	for k := range tenants {
		tenants[k] = fmt.Sprintf("fair%d", k)
		per[k] = perTenant
	}
	c := brokertest.StartCluster(t, broker.Options{Tenants: tenants}, broker.DefaultClusterSize)
	ce := clusterInstall(t, c, clusterSpec{tenants: tenants, pins: pins, admin: 2, perTenant: per, binding: func(_ int, b *trigger.Binding) {
		b.OperationTimeoutMS = int(fairTimeout / time.Millisecond)
		b.AckWaitMS = int((fairTimeout + 2*time.Second) / time.Millisecond)
		b.MaxDeliver = 5
	}})
	faulted := c.Node(1)
	// Binding 0 first: its siblings' moves take their tenant's stream
	// leader back to node 0.
	ce.moveLeadersOf(t, 0, 0, faulted)
	var pubs []*clusterPublisher
	for b := range fairBindings {
		k, i := b/perTenant, b%perTenant
		if b > 0 {
			ce.moveLeadersOf(t, k, b, c.Node(0))
		}
		pubs = append(pubs, ce.startBindingPublisher(t, t.Context(), k, b, i, fairBacklog, time.Millisecond))
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
	// From the last report before each window, so that a step in flight
	// when the window began counts.
	stall := longestStep(h.reports(pausedAt - 1)[:resumedAt-pausedAt+1])
	stallAfter := longestStep(h.reports(resumedAt - 1)[:recoveredAt-resumedAt+1])
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
	left := time.Duration(float64(fairBindings*fairBacklog-drained) / max(rate, 1) * 2 * float64(time.Second))
	v, took := ce.settleVerdictWithin(t, clusterSettle+left)
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkVerdict(t, v, true)
	least, leastAfter := math.Inf(1), math.Inf(1)
	for k := 1; k < fairBindings; k++ {
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

// ackCounts counts the verified acknowledgements of each binding among
// reports.
func ackCounts(reports []procReport) map[int]int {
	out := make(map[int]int)
	for _, r := range reports {
		if verifiedAck(r.Report) {
			out[r.Report.Binding]++
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
