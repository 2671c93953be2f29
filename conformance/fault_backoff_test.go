package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/trigger"
)

// backoffAfter is the longest wait after the n-th consecutive failed dial
// (the schedule PoolLimits documents, before jitter): DialBackoff doubled
// per further failure, up to MaxDialBackoff.
func backoffAfter(lim trigger.PoolLimits, n int) time.Duration {
	d := lim.DialBackoff
	for i := 1; i < n && d < lim.MaxDialBackoff; i++ {
		d *= 2
	}
	return min(d, lim.MaxDialBackoff)
}

// dialsAllowed is the most dials the schedule allows within d from the
// first failure, every wait at its jittered minimum (half the backoff):
// the first dial, then one more each time the waits so far fit in d.
func dialsAllowed(lim trigger.PoolLimits, d time.Duration) int {
	n := 1
	var spent time.Duration
	for f := 1; ; f++ {
		spent += backoffAfter(lim, f) / 2
		if spent > d {
			return n
		}
		n++
	}
}

// TestFaultBrokerDownBackoff kills the broker (file store) and keeps it
// down for longer than the longest dial backoff, with a short schedule
// (DialBackoff 20 ms doubling to MaxDialBackoff 200 ms, each wait jittered
// to between half and all of it). While it is down the runtime keeps
// visiting, and the dials it makes fit the schedule: no more than its
// shortest waits allow in the measured down time, and at least one per
// longest wait (it kept trying). After Restart, an event published to the
// restarted broker runs within one longest backoff, one poll interval and
// a step's time (with a margin for a loaded machine). The kill lands
// while the runtime idles with every acknowledgement stored. Ledger:
// nothing lost, nothing run twice; the runtime back to its baseline.
func TestFaultBrokerDownBackoff(t *testing.T) {
	t.Parallel()
	// failures is the number of failed dials the broker stays down for:
	// the wait reaches MaxDialBackoff after the fifth, so the last three
	// follow the longest backoff.
	const failures = 8
	e := trigStart(t, trigSpec{tenants: []string{"down"}, perTenant: []int{2}, storage: "file"})
	lim := trigger.DefaultPoolLimits()
	lim.DialBackoff, lim.MaxDialBackoff = 20*time.Millisecond, 200*time.Millisecond
	e.reinstall(t, faultPools(t, lim), 1, 0, e.creds)
	host := &faultHost{trigHookHost: e.host}
	ids := []string{e.bindingID(0, 0), e.bindingID(0, 1)}
	health := ledger.NewHealth(e.pools)

	run := runOwner(t, e.trig, host)
	for range 3 {
		e.publish(0, 0, argOK)
		e.publish(0, 1, argOK)
	}
	e.settleBindings(t, ids...)
	// The kill lands while the runtime idles: twenty empty visits, at least
	// twenty poll intervals, longer than the 100 ms within which the
	// broker's file store writes a consumer's state after a change
	// (filestore.go, flushLoop), so every verified acknowledgement has
	// reached the store. (A kill within that interval loses them: the
	// restarted broker delivers those events again, some with their
	// delivery count back at 1.)
	idle := e.mon.Snapshot().Totals.Empty
	trigEventually(t, "the runtime idles", trigWait, func() bool { return e.mon.Snapshot().Totals.Empty >= idle+20 })

	// Down: the runtime's connection is gone and every dial is refused.
	if err := e.b.Kill(); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	atKill := e.mon.Snapshot()
	base := len(host.failures(trigger.ClassDial))
	// The slowest the schedule allows: a visit within a poll interval of
	// each longest wait, and a step's time for each dial.
	const slack = 250 * time.Millisecond
	slowest := time.Duration(failures) * (e.trig.PollInterval() + slack)
	for n := 1; n < failures; n++ {
		slowest += backoffAfter(lim, n)
	}
	trigEventually(t, "failed dials while the broker is down", slowest, func() bool {
		return len(host.failures(trigger.ClassDial))-base >= failures
	})
	downFor := time.Since(down)
	whileDown := e.mon.Snapshot()
	// The monitor's second slot shows why visits stop while down.
	if sk, ok := e.mon.LastSkip(); !ok || sk.Error != trigger.ClassDialBackoff {
		t.Errorf("LastSkip %+v (present %v) while down, want a dial backoff skip", sk, ok)
	}
	fails := host.failures(trigger.ClassDial)[base:]
	dials := int(whileDown.Dials - atKill.Dials)

	ctx, cancel := context.WithTimeout(t.Context(), trigWait)
	defer cancel()
	if err := e.b.Restart(ctx); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	restarted := time.Now()
	e.tenant(0).redial(t, e.b)
	after := []uint64{e.publish(0, 0, argOK), e.publish(0, 1, argOK)}
	e.waitRan(t, ids[0], after[0])
	var resumed time.Duration
	for _, c := range e.callsOf(ids[0]) {
		if c.StreamSeq == after[0] {
			resumed = c.At.Sub(restarted)
		}
	}

	v, took := e.settle(t)
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkVerdict(t, v, true)
	if len(v.Reexecutions) != 0 {
		t.Errorf("re-executions %+v, want none", v.Reexecutions)
	}

	// The dials while down fit the schedule.
	allowed := dialsAllowed(lim, downFor)
	if dials != len(fails) {
		t.Errorf("%d dials while down, %d of them reported failed: every dial to a killed broker fails", dials, len(fails))
	}
	if dials > allowed {
		t.Errorf("%d dials in %v down, the schedule allows at most %d", dials, downFor, allowed)
	}
	gaps := make([]time.Duration, 0, len(fails))
	for i := 1; i < len(fails); i++ {
		gaps = append(gaps, fails[i].Sub(fails[i-1]).Round(time.Millisecond))
	}
	backoffSkips := whileDown.Totals.Error(trigger.ClassDialBackoff) - atKill.Totals.Error(trigger.ClassDialBackoff)

	// Delivery resumes within one longest backoff, one poll interval and a
	// step, plus a margin for a loaded machine.
	const margin = 2 * time.Second
	bound := lim.MaxDialBackoff + e.trig.PollInterval() + margin
	if resumed > bound {
		t.Errorf("the first event published after the restart ran %v after Restart returned, want within %v", resumed, bound)
	}
	t.Logf("figures: down %v; %d dials while down (schedule bound %d); gaps between failed dials %v; %d visits skipped for the backoff; resumed %v after Restart returned (bound %v); settled %v after; %d dials in all",
		downFor.Round(time.Millisecond), dials, allowed, gaps, backoffSkips, resumed, bound, took, e.mon.Snapshot().Dials)

	hctx, hcancel := context.WithTimeout(t.Context(), trigWait)
	defer hcancel()
	if err := health.Wait(hctx, faultTick); err != nil {
		t.Errorf("after the scenario: %v", err)
	}
}
