package conformance_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/trigger"
)

// powerTrials is the number of whole-cluster kills per sync setting, as
// many as TestFaultKillAfterVerifiedAck's trials on one node.
const powerTrials = 5

// killAll kills (SIGKILL) every node of c at once and waits for them.
func killAll(c *broker.Cluster) error {
	errs := make([]error, c.Size())
	var wg sync.WaitGroup
	for i, b := range c.Nodes() {
		wg.Go(func() { errs[i] = b.Kill() })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// restartAll restarts every node of c at once, on its ports and store,
// and waits until the cluster formed again.
func restartAll(t *testing.T, c *broker.Cluster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clusterSoakWait)
	defer cancel()
	errs := make([]error, c.Size())
	var wg sync.WaitGroup
	for i, b := range c.Nodes() {
		wg.Go(func() { errs[i] = b.Restart(ctx) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: Restart: %v", c.Node(i).Name(), err)
		}
	}
	if _, err := c.WaitFormed(ctx); err != nil {
		t.Fatalf("not formed after the restart: %v", err)
	}
}

// TestClusterSoakPowerLoss kills (SIGKILL) all three nodes of an R3
// cluster at once, the instant the runtime reports an acknowledgement
// verified, then restarts all three on their stores and counts the
// events that ran again: re-executions after a verified acknowledgement,
// the cluster having lost an acknowledgement it had confirmed. Limits
// retention (the weaker case on one node, where 5 of 5 ran again), with
// the server's default sync and with sync_interval always, five trials
// each. It reads each node's consumer state file the kill left: on one
// node a restart recovers the consumer from that file alone. Every event
// published before a kill (each acknowledged by the stream, a PubAck) must
// run after the restart.
//
// What nats-server v2.14.6 does (consumer.go updateAcks, addAckReply;
// jetstream_cluster.go processReplicatedAck, createRaftGroup;
// raft.go; filestore.go newFileStoreWithCreated): an R3 consumer's leader
// proposes the acknowledgement to the consumer's Raft group and sends the
// receipt only when the entry is committed and applied, that is once a
// quorum appended it to its Raft log. The Raft log is a file store with
// AsyncFlush false: each append is written to the file before the
// follower answers (and fsynced under sync_interval always). A process
// kill keeps what was written (the page cache belongs to the kernel), so
// the restarted nodes replay the acknowledgement from their logs whatever
// the consumer's lazily written state file says: expected, and asserted,
// no re-execution after a verified acknowledgement in either setting.
//
// What the test cannot show: a power cut also loses the page cache. Under
// the default sync_interval each node fsyncs its logs and blocks every
// two minutes, so a power cut of every node at once can lose up to that
// much committed (acknowledged, published) data on all replicas; only
// sync_interval always fsyncs each append before it counts towards the
// quorum. docs/RELIABILITY.md says how to test a real power cut.
func TestClusterSoakPowerLoss(t *testing.T) {
	for _, tc := range []struct{ name, sync string }{
		{"sync-default", ""},
		{"sync-always", "always"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const tenant = "power"
			c := brokertest.StartCluster(t, broker.Options{Tenants: []string{tenant}, SyncInterval: tc.sync}, broker.DefaultClusterSize)
			ce := clusterInstall(t, c, clusterSpec{tenants: []string{tenant}, pins: []int{0}, admin: 0})
			ce.leaders(t, 0)
			h := newProcHost(ce.trigEnv)
			run := ce.runProc(t, h)
			id := ce.cfg.Bindings[0].ID

			type kill struct {
				r   trigger.StepReport
				at  time.Time
				err error
				// inFiles counts the nodes whose consumer state file held
				// the acknowledgement at the kill.
				inFiles int
			}
			var seqs []uint64
			missing := 0 // trials whose acknowledgement was in no node's state file
			for i := range powerTrials {
				killed := make(chan kill, 1)
				h.armAfterStep(func(r trigger.StepReport) bool {
					if !verifiedAck(r) {
						return false
					}
					k := kill{r: r, err: killAll(c), at: time.Now()}
					for _, b := range c.Nodes() {
						if k.err != nil {
							break
						}
						var d diskState
						d, k.err = ce.consumerOnDiskOf(b, 0, 0)
						k.inFiles += boolInt(d.AckFloor >= r.StreamSeq)
					}
					killed <- k
					return true
				})
				seq := ce.publishReady(t, 0, 0, argOK)
				var k kill
				select {
				case k = <-killed:
				case <-time.After(clusterSettle):
					t.Fatalf("trial %d: no verified acknowledgement within %v", i, clusterSettle)
				}
				if k.err != nil {
					t.Fatalf("trial %d: the kill: %v", i, k.err)
				}
				if k.r.StreamSeq != seq {
					t.Fatalf("trial %d: verified acknowledgement of seq %d, want %d", i, k.r.StreamSeq, seq)
				}
				seqs = append(seqs, seq)
				missing += boolInt(k.inFiles == 0)
				mark := h.mark()
				began := time.Now()
				restartAll(t, c)
				formed := time.Since(began)
				ce.tenants[0].redial(t, c.Node(0))
				ce.leaders(t, 0)
				probe := ce.publishReady(t, 0, 0, argOK)
				r := h.waitReportWithin(t, "the probe's verified acknowledgement", mark, clusterSettle, func(r procReport) bool {
					return r.Report.StreamSeq == probe && verifiedAck(r.Report)
				})
				t.Logf("figures: trial %d: seq %d verified, all three nodes killed %v after the step began, the acknowledgement in the state file of %d of them; restarted and formed in %v; the probe's verified ack %v after the restart began; runs of seq %d: %v",
					i, seq, k.at.Sub(k.r.At).Round(time.Millisecond), k.inFiles, formed.Round(time.Millisecond), r.At.Sub(began).Round(time.Millisecond), seq, runsOf(ce.led, id, seq))
			}

			v, _ := ce.settleVerdict(t)
			// The state files read at the kills are the ones each node
			// writes: they catch up with the last acknowledgement.
			last := ce.led.LastPublished(id)
			for _, b := range c.Nodes() {
				trigEventually(t, b.Name()+"'s consumer state file at the last acknowledgement", clusterSettle, func() bool {
					d, err := ce.consumerOnDiskOf(b, 0, 0)
					if err != nil {
						t.Fatalf("%s: %v", b.Name(), err)
					}
					return d.AckFloor >= last
				})
			}
			if err := run.stop(); err != nil {
				t.Fatalf("Run: %v", err)
			}
			checkVerdict(t, v, true)
			// A probe's acknowledgement may go unanswered while the
			// restarted groups elect (uncertain); nothing else runs again.
			if bad := causesOnly(v, ledger.CauseUncertain); len(bad) > 0 {
				t.Errorf("re-executions %+v: want none but after an uncertain acknowledgement", bad)
			}
			again := 0
			for _, seq := range seqs {
				again += boolInt(len(runsOf(ce.led, id, seq)) > 1)
			}
			t.Logf("figures: %s: %d of %d trials ran their event again after its verified acknowledgement and the kill of every node (the acknowledgement in no node's state file in %d); %d re-executions after a verified acknowledgement; published %d, lost %d",
				tc.name, again, len(seqs), missing, len(v.AfterVerified), ce.led.LastPublished(id), len(v.Lost))
		})
	}
}
