package conformance_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/tools/soak"
)

// The rounds of TestClusterSoakRounds.
const (
	// clusterSoakEnv names the duration of the faults (a Go duration,
	// at most clusterSoakMax); clusterSoakDefault when unset.
	clusterSoakEnv     = "LATENT_CLUSTER_SOAK"
	clusterSoakDefault = 45 * time.Second
	clusterSoakMax     = 4 * time.Hour
	// clusterSoakTick paces each tenant's publisher: 4 events/s, well
	// under what the runtime delivers with the race detector on two
	// loaded cores (about 25 a second in all, three round trips each
	// through the cluster), so that each round can ask for every stored
	// event to have run: at 10 a second per tenant the backlog of an
	// outage outgrew that, and a round's wait timed out on a runtime
	// delivering at full speed.
	clusterSoakTick = 250 * time.Millisecond
	// clusterSoakMinPause and clusterSoakMaxPause bound a paused node's
	// pause: from under an election timeout to past it.
	clusterSoakMinPause = time.Second
	clusterSoakMaxPause = 6 * time.Second
)

// TestClusterSoakRounds is the cluster soak for a duration: three tenants
// pinned to the three nodes of an R3 cluster, each publishing 4 events/s
// through its own node, while round after round one node, drawn at random,
// is killed (SIGKILL) and restarted, paused (SIGSTOP) for 1 to 6 s,
// lame-ducked and restarted, or restarted gracefully. Each round waits for
// the node's health and for every tenant to deliver ten more events; its
// figures are logged (the fault, the node, the time to healthy and to
// flowing again). At the end the publishers stop and the ledger's verdict
// must show nothing lost and no re-execution after a verified
// acknowledgement (acknowledgements are replicated); the classes reported
// are a cluster fault's; the process's live heap and goroutines at the
// start and the end are logged. The seed and the duration come from
// LATENT_CLUSTER_SOAK_SEED and LATENT_CLUSTER_SOAK (make soak-cluster
// CLUSTER_SOAK=1h).
func TestClusterSoakRounds(t *testing.T) {
	t.Parallel()
	d := clusterSoakDefault
	if s := os.Getenv(clusterSoakEnv); s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil || d <= 0 || d > clusterSoakMax {
			t.Fatalf("%s=%q: a duration up to %v wanted (%v)", clusterSoakEnv, s, clusterSoakMax, err)
		}
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(clusterSoakEnv + "_SEED"); s != "" {
		if _, err := fmt.Sscan(s, &seed); err != nil {
			t.Fatalf("%s_SEED=%q: %v", clusterSoakEnv, s, err)
		}
	}
	t.Logf("figures: seed %d, faults for %v", seed, d)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	tenants := []string{"sr0", "sr1", "sr2"}
	c := brokertest.StartCluster(t, broker.Options{Tenants: tenants, LameDuckGracePeriod: time.Second}, broker.DefaultClusterSize)
	ce := clusterInstall(t, c, clusterSpec{tenants: tenants, pins: []int{0, 1, 2}, admin: 0})
	for k := range tenants {
		ce.leaders(t, k)
	}
	h := newProcHost(ce.trigEnv)
	start := h.mark()
	run := ce.runProc(t, h)
	startUsage := soak.ReadUsage()
	// Enough events for the duration and the last round's waits.
	n := int((d+clusterSoakWait+clusterSettle)/clusterSoakTick) + 1
	var pubs []*clusterPublisher
	for k := range tenants {
		pubs = append(pubs, ce.startPublisher(t, t.Context(), k, n, clusterSoakTick))
	}
	ce.waitFlowing(t, h, start, pubs...)

	faults := map[string]int{}
	var worst time.Duration
	deadline := time.Now().Add(d)
	for round := 1; time.Now().Before(deadline); round++ {
		node := c.Node(rng.IntN(c.Size()))
		ctx, cancel := context.WithTimeout(t.Context(), clusterSoakWait)
		mark := h.mark()
		began := time.Now()
		kind := [...]string{"kill", "pause", "lame duck", "restart"}[rng.IntN(4)]
		fault := kind
		var err error
		switch kind {
		case "kill":
			if err = node.Kill(); err == nil {
				err = node.Restart(ctx)
			}
		case "pause":
			hold := clusterSoakMinPause + time.Duration(rng.Int64N(int64(clusterSoakMaxPause-clusterSoakMinPause)))
			fault = fmt.Sprintf("pause %v", hold.Round(time.Millisecond))
			if err = node.Pause(); err == nil {
				timer := time.NewTimer(hold)
				select {
				case <-timer.C:
				case <-ctx.Done():
				}
				timer.Stop()
				err = node.Resume()
			}
		case "lame duck":
			if err = node.LameDuck(ctx); err == nil {
				err = node.Restart(ctx)
			}
		default:
			err = node.Restart(ctx)
		}
		if err == nil {
			err = c.WaitHealthy(ctx, node)
		}
		cancel()
		if err != nil {
			t.Fatalf("round %d: %s of %s: %v", round, fault, node.Name(), err)
		}
		healthy := time.Since(began)
		counts := make([]int, len(pubs))
		for k, p := range pubs {
			counts[k] = p.count()
		}
		ce.waitFlowingFrom(t, h, mark, fmt.Sprintf("round %d: every tenant delivering after the %s of %s", round, fault, node.Name()), counts, pubs...)
		flowing := time.Since(began)
		worst = max(worst, flowing)
		faults[kind]++
		t.Logf("figures: round %d: %s of %s: healthy %v, every tenant delivering %v after it began; classes %s",
			round, fault, node.Name(), healthy.Round(time.Millisecond), flowing.Round(time.Millisecond), formatClasses(classCounts(h, mark, -1)))
	}
	ce.finish(t, h, run, start, pubs, true)
	end := soak.ReadUsage()
	t.Logf("figures: faults %v; the longest round to every tenant delivering %v; live heap %d KiB then %d KiB, goroutines %d then %d",
		faults, worst.Round(time.Millisecond), startUsage.HeapBytes>>10, end.HeapBytes>>10, startUsage.Goroutines, end.Goroutines)
}
