package conformance_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/trigger"
)

// TestTriggerRestartFreshProcess kills the runtime's process in the
// middle of an activation, on one broker, and starts a new process that
// restores the persisted configuration (Config.MarshalJSON bytes, then
// ParseConfig) with the tenant's credentials file. The broker redelivers
// the event once its ack wait has passed, and the new process runs and
// acknowledges it. The ledger, fed with both processes' runs and step
// reports: nothing lost, no re-execution after a verified
// acknowledgement, one re-execution, caused by the run no report followed
// (the killed process).
func TestTriggerRestartFreshProcess(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{
		tenants:   []string{"fresh"},
		perTenant: []int{1},
		storage:   "file",
		binding: func(_, _ int, b *trigger.Binding) {
			// Room to kill the first process during its activation.
			b.OperationTimeoutMS, b.RootBudgetMS, b.AckWaitMS = 3000, 3000, 4000
		},
	})
	id := e.cfg.Bindings[0].ID
	first := startChild(t, e, e.files[0], false)
	seq := e.publish(0, 0, argOK)
	want := fmt.Sprintf("run %s %d 1", id, seq)
	if line := first.await(t, "run "); line != want {
		t.Fatalf("the first process ran %q, want %q", line, want)
	}
	ran := time.Now()
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()

	second := startChild(t, e, e.files[0], true)
	want = fmt.Sprintf("run %s %d 2", id, seq)
	if line := second.await(t, "run "); line != want {
		t.Fatalf("the new process ran %q, want %q", line, want)
	}
	rerun := time.Since(ran)
	second.await(t, "step ")
	v, took := e.settle(t)
	checkVerdict(t, v, true)
	wantRe := []ledger.Reexecution{{Key: ledger.Key{Binding: id, Seq: seq}, Delivered: 2, Cause: ledger.CauseUnreported}}
	if diff := cmp.Diff(wantRe, v.Reexecutions); diff != "" {
		t.Errorf("re-executions (-want +got):\n%s", diff)
	}
	ackWait := e.cfg.Bindings[0].AckWait()
	if rerun < ackWait-500*time.Millisecond {
		t.Errorf("the event ran again %v after the killed run, before the ack wait %v", rerun, ackWait)
	}
	t.Logf("figures: the killed process's event ran again in a new process %v after its first run (ack wait %v); settled %v later",
		rerun.Round(time.Millisecond), ackWait, took.Round(time.Millisecond))
}
