package conformance_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/tools/faultproxy"
	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// TestFaultKillDuringPull kills the broker (SIGKILL) while a pull is in
// flight: the runtime dials through a fault proxy, and right before the
// pull the proxy starts dropping everything the broker sends; once the
// pull's bytes have passed to the broker and the broker's answer (the
// message) has been read and dropped, the broker is killed. The broker
// had delivered the message; the runtime never saw it: its pull fails at
// its own bound with no delivery. The broker restarts on the same port
// and file store and the message comes back (redelivered after its ack
// wait when the crash kept the delivery, delivered afresh when it did
// not) and runs once. Ledger: nothing lost, no re-execution, nothing
// after a verified acknowledgement; the runtime back to its baseline.
func TestFaultKillDuringPull(t *testing.T) {
	for _, retention := range []string{"limits", "workqueue"} {
		t.Run(retention, func(t *testing.T) {
			t.Parallel()
			var proxy *faultproxy.Proxy
			e := trigStart(t, trigSpec{
				tenants:   []string{"kill-pull"},
				perTenant: []int{1},
				storage:   "file",
				retention: retention,
				dialer: func(t *testing.T, b *broker.Broker) conn.Dialer {
					p, err := faultproxy.Start(b.Addr())
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { _ = p.Close() })
					proxy = p
					return p.Dialer()
				},
			})
			h := newProcHost(e)
			health := ledger.NewHealth(e.pools)
			target := e.publish(0, 0, argOK)
			e.publish(0, 0, argOK)

			type kill struct {
				pulled, killed time.Time
				dropped        int64 // bytes of the broker's answer dropped
				step           int   // the position of the pull's step report
				err            error
			}
			killed := make(chan kill, 1)
			h.armBeforePull(func(trigger.BindingRef) {
				// On the stepping goroutine: the pull is written when
				// this returns.
				before := proxy.Stats()
				pulled := time.Now()
				step := h.mark()
				if err := proxy.Set(faultproxy.Down, faultproxy.Fault{Kind: faultproxy.Blackhole}); err != nil {
					killed <- kill{err: err}
					return
				}
				go func() {
					ctx, cancel := context.WithTimeout(t.Context(), trigWait)
					defer cancel()
					s, err := proxy.Wait(ctx, func(s faultproxy.Stats) bool {
						return s.Up.Forwarded > before.Up.Forwarded && s.Down.Dropped > before.Down.Dropped
					})
					if err == nil {
						err = e.b.Kill()
					}
					killed <- kill{pulled: pulled, killed: time.Now(), dropped: s.Down.Dropped - before.Down.Dropped, step: step, err: err}
				}()
			})
			run := e.runProc(t, h)
			var k kill
			select {
			case k = <-killed:
			case <-time.After(trigWait):
				t.Fatalf("no pull within %v", trigWait)
			}
			if k.err != nil {
				t.Fatalf("placing the kill: %v", k.err)
			}
			// The pull's step failed at the pull's bound without a
			// delivery.
			step := h.waitReport(t, "the pull's step", k.step, func(procReport) bool { return true })
			if r := step.Report; r.Result != trigger.ResultFailed || r.Delivered != 0 {
				t.Errorf("the pull's step %+v: want a failure without a delivery", r)
			}
			if err := proxy.Clear(faultproxy.Down); err != nil {
				t.Fatal(err)
			}
			restart := e.restartBroker(t)
			e.publish(0, 0, argOK)

			v, _ := e.settle(t)
			if err := run.stop(); err != nil {
				t.Fatalf("Run: %v", err)
			}
			checkVerdict(t, v, true)
			if len(v.Reexecutions) != 0 || v.Executions != v.Published {
				t.Errorf("re-executions %+v, %d executions of %d events: want each event run once", v.Reexecutions, v.Executions, v.Published)
			}
			t.Logf("killed %v after the pull was written, %d bytes of the answer dropped; the pull's step ended %v after it (%v); restart %v; the message ran with delivery counts %v",
				k.killed.Sub(k.pulled), k.dropped, step.At.Sub(k.pulled), step.Report.Error, restart, runsOf(e.led, e.cfg.Bindings[0].ID, target))
			// The link whose broker died under a blackhole stays open in
			// the proxy (its end was dropped): reset it, it is not the
			// runtime's.
			proxy.Sever()
			hctx, hcancel := context.WithTimeout(t.Context(), trigWait)
			defer hcancel()
			if err := health.Wait(hctx, faultTick); err != nil {
				t.Errorf("after the scenario: %v", err)
			}
		})
	}
}

// TestFaultKillAfterVerifiedAck kills the broker (SIGKILL) the moment the
// runtime reports an acknowledgement verified, reads the consumer's state
// file the dead process left, restarts the broker on the same port and
// file store, and counts the events that ran again: re-executions after
// a verified acknowledgement, the broker having lost an acknowledgement
// it had confirmed. For file storage with limits and work-queue
// retention, each with the server's default sync and with sync_interval
// always, five trials each; a trial starts once the state file holds
// every acknowledgement before it, so each trial loses at most its own.
//
// What nats-server v2.14.6 does (server/consumer.go processAck,
// processAckMsgLocked, updateAcks; server/filestore.go
// consumerFileStore.UpdateAcks, kickFlusher, flushLoop, writeState,
// writeAtomicallyWithTemp; fileStore.removeMsgFromBlock,
// msgBlock.writeMsgRecordLocked, flushPendingMsgsLocked; server/stream.go
// ackMsg):
//
//   - limits retention: the ACK changes the consumer's state in memory and
//     kicks its flusher, and the receipt is sent at once. The flusher
//     writes the state file on its own goroutine, at most once per 100 ms
//     per consumer, so the receipt reaches the client before the
//     acknowledgement is in any file. sync_interval always only adds
//     O_SYNC to that write; it stays asynchronous. A kill in that window
//     loses the acknowledgement: the restarted broker delivers the event
//     again.
//   - work-queue retention: the ACK also removes the message from the
//     stream before the receipt is sent, written to the message block on
//     the acknowledging goroutine (a tombstone, or the block removed),
//     and fsynced there under sync_interval always. A process crash after
//     the receipt cannot bring the message back, whatever the consumer's
//     state file says.
//
// Ledger: nothing lost in every setting. Limits retention: an event runs
// again exactly when its acknowledgement was missing from the state file
// the crash left, and every re-execution after a verified acknowledgement
// is such an event; how many trials lose it depends on where the kill
// lands in the flusher's 100 ms, so the count is logged, not asserted.
// Work-queue retention: no re-execution after a verified acknowledgement.
func TestFaultKillAfterVerifiedAck(t *testing.T) {
	const trials = 5
	tests := []struct {
		name      string
		retention string
		sync      string // Options.SyncInterval
		// durable: no re-execution after a verified acknowledgement.
		durable bool
		// byStateFile: an event runs again exactly when its
		// acknowledgement was missing from the state file at the kill.
		byStateFile bool
	}{
		{"limits/sync-default", "limits", "", false, true},
		{"limits/sync-always", "limits", "always", false, true},
		{"workqueue/sync-default", "workqueue", "", true, false},
		{"workqueue/sync-always", "workqueue", "always", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const tenant = "kill-ack"
			b := brokertest.Start(t, broker.Options{Tenants: []string{tenant}, SyncInterval: tc.sync})
			e := trigInstall(t, b, trigSpec{tenants: []string{tenant}, perTenant: []int{1}, storage: "file", retention: tc.retention})
			h := newProcHost(e)
			run := e.runProc(t, h)
			id := e.cfg.Bindings[0].ID

			type kill struct {
				r     trigger.StepReport
				after time.Duration // from the step's start to the process gone
				disk  diskState     // the state file the crash left
				err   error
			}
			type trial struct {
				seq    uint64
				inFile bool // the acknowledgement was in the state file at the kill
			}
			var done []trial
			for i := range trials {
				if len(done) > 0 {
					e.waitOnDisk(t, 0, 0, e.led.LastPublished(id))
				}
				killed := make(chan kill, 1)
				h.armAfterStep(func(r trigger.StepReport) bool {
					if !verifiedAck(r) {
						return false
					}
					err := e.b.Kill()
					k := kill{r: r, after: time.Since(r.At), err: err}
					if err == nil {
						k.disk, k.err = e.consumerOnDisk(0, 0)
					}
					killed <- k
					return true
				})
				seq := e.publish(0, 0, argOK)
				var k kill
				select {
				case k = <-killed:
				case <-time.After(trigWait):
					t.Fatalf("trial %d: no verified acknowledgement within %v", i, trigWait)
				}
				if k.err != nil {
					t.Fatalf("trial %d: the kill: %v", i, k.err)
				}
				if k.r.StreamSeq != seq {
					t.Fatalf("trial %d: verified acknowledgement of seq %d, want %d", i, k.r.StreamSeq, seq)
				}
				inFile := k.disk.AckFloor >= seq
				done = append(done, trial{seq: seq, inFile: inFile})
				restart := e.restartBroker(t)
				// A probe event: a work-queue consumer whose state the
				// crash rolled back shows its old ack floor, with
				// nothing left to deliver, until its next
				// acknowledgement.
				probe := e.publish(0, 0, argOK)
				took := e.settleQuiet(t)
				// The broker applies an acknowledgement before the
				// runtime reads its receipt: wait for the probe's
				// report, so that the next trial's kill follows the
				// next trial's acknowledgement.
				h.waitReport(t, "the probe's acknowledgement", 0, func(r procReport) bool {
					return r.Report.StreamSeq == probe && r.Report.Ack != pull.AckNone
				})
				t.Logf("trial %d: seq %d verified, broker killed %v after the step began; state file at the kill %+v (acknowledgement in it: %v); restarted in %v; settled in %v; runs of seq %d: %v",
					i, seq, k.after, k.disk, inFile, restart, took, seq, runsOf(e.led, id, seq))
			}

			v, _ := e.settle(t)
			if err := run.stop(); err != nil {
				t.Fatalf("Run: %v", err)
			}
			checkVerdict(t, v, tc.durable)
			if bad := causesOnly(v, ledger.CauseAfterVerified); len(bad) > 0 {
				t.Errorf("re-executions %+v: want none but after a verified acknowledgement", bad)
			}
			missing, again := 0, 0
			for _, tr := range done {
				ranAgain := len(runsOf(e.led, id, tr.seq)) > 1
				missing += boolInt(!tr.inFile)
				again += boolInt(ranAgain)
				if tc.byStateFile && ranAgain == tr.inFile {
					t.Errorf("seq %d: acknowledgement in the state file at the kill %v, ran again %v: want it run again exactly when it was missing", tr.seq, tr.inFile, ranAgain)
				}
			}
			if tc.byStateFile && len(v.AfterVerified) != missing {
				t.Errorf("%d re-executions after a verified acknowledgement, want one per acknowledgement missing from the state file (%d)", len(v.AfterVerified), missing)
			}
			t.Logf("%s: %d of %d trials ran their event again after its verified acknowledgement and the kill; the acknowledgement was missing from the state file in %d; %d re-executions after a verified acknowledgement in all",
				tc.name, again, trials, missing, len(v.AfterVerified))
		})
	}
}

// TestFaultPause stops the broker (SIGSTOP) right before the pull and
// right before the acknowledgement (in the activation), and continues it
// (SIGCONT) after a pause shorter than the pull's and the operation's
// bounds (100 ms) and after one longer than both (1.5 s; the operation
// timeout is 1 s, the pull's own bound 100 ms + 150 ms). A long pause
// before the pull fails that pull at its bound with no delivery; a long
// pause before the acknowledgement leaves it uncertain. Ledger: nothing
// lost, nothing after a verified acknowledgement, any re-execution
// explained by an uncertain or unsent acknowledgement. Logged: the pause
// as measured and the time from the resume to the next verified
// acknowledgement.
func TestFaultPause(t *testing.T) {
	const short, long = 100 * time.Millisecond, 1500 * time.Millisecond
	// beforePull and beforeAck place fault right before the pull, or in
	// the activation right before the acknowledgement, and return the
	// argument of the event that meets it.
	beforePull := func(e *trigEnv, h *procHost, fault func()) string {
		h.armBeforePull(func(trigger.BindingRef) { fault() })
		return argOK
	}
	beforeAck := func(e *trigEnv, h *procHost, fault func()) string {
		var once sync.Once
		e.setAction(func(context.Context, refhost.Call) error {
			once.Do(fault)
			return nil
		})
		return argActions
	}
	tests := []struct {
		name  string
		pause time.Duration
		place func(e *trigEnv, h *procHost, fault func()) string
		// step checks the report of the step the pause met; nil where
		// its outcome depends on the scheduler (a short pause).
		step func(r trigger.StepReport, target uint64) bool
		want string
	}{
		{"pull/short", short, beforePull, nil, ""},
		{"pull/long", long, beforePull, func(r trigger.StepReport, _ uint64) bool {
			return r.Result == trigger.ResultFailed && r.Delivered == 0
		}, "a failure at the pull's bound, no delivery"},
		{"ack/short", short, beforeAck, nil, ""},
		{"ack/long", long, beforeAck, func(r trigger.StepReport, target uint64) bool {
			return r.StreamSeq == target && r.Ack == pull.AckUncertain
		}, "the event's acknowledgement uncertain"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := trigStart(t, trigSpec{tenants: []string{"pause"}, perTenant: []int{1}})
			h := newProcHost(e)

			type paused struct {
				at, resumed time.Time
				step        int // the position of the paused step's report
				err         error
			}
			done := make(chan paused, 1)
			// fault runs on the stepping goroutine; the resume runs on
			// the timer's goroutine and reports on done.
			fault := func() {
				step := h.mark()
				if err := e.b.Pause(); err != nil {
					done <- paused{err: err}
					return
				}
				at := time.Now()
				time.AfterFunc(tc.pause, func() {
					// The time is taken before SIGCONT: no acknowledgement
					// can be verified while the broker is stopped, and the
					// runtime may verify two before Resume returns.
					resumed := time.Now()
					err := e.b.Resume()
					done <- paused{at: at, resumed: resumed, step: step, err: err}
				})
			}
			target := e.publish(0, 0, tc.place(e, h, fault))
			e.publish(0, 0, argOK)
			run := e.runProc(t, h)
			var p paused
			select {
			case p = <-done:
			case <-time.After(trigWait):
				t.Fatalf("no pause within %v", trigWait)
			}
			if p.err != nil {
				t.Fatalf("pause: %v", p.err)
			}
			step := h.waitReport(t, "the step of the pause", p.step, func(procReport) bool { return true })
			resumed := h.waitReport(t, "a verified acknowledgement after the resume", p.step, func(r procReport) bool {
				return verifiedAck(r.Report) && r.At.After(p.resumed)
			})
			e.publish(0, 0, argOK)

			v, _ := e.settle(t)
			if err := run.stop(); err != nil {
				t.Fatalf("Run: %v", err)
			}
			checkVerdict(t, v, true)
			if bad := causesOnly(v, ledger.CauseUncertain, ledger.CauseNotSent); len(bad) > 0 {
				t.Errorf("re-executions %+v: want only those of an uncertain or unsent acknowledgement", bad)
			}
			r := step.Report
			if tc.step != nil && !tc.step(r, target) {
				t.Errorf("the step of the pause %+v: want %s", r, tc.want)
			}
			t.Logf("paused %v; the step: %v, delivered %d, ack %v, class %v; next verified acknowledgement %v after the resume; the paused event ran with delivery counts %v; re-executions by cause:%s",
				p.resumed.Sub(p.at), r.Result, r.Delivered, r.Ack, r.Error, resumed.At.Sub(p.resumed), runsOf(e.led, e.cfg.Bindings[0].ID, target), byCause(v))
		})
	}
}

// TestFaultLameDuckRollingRestart drains the broker (lame duck mode with
// a short grace period) and restarts it on the same port and file store,
// twice in a row, while a publisher stores events at a steady bounded
// rate (200/s offered) for two bindings. In lame duck mode nats-server
// v2.14.6 (server/server.go lameDuckMode) closes its listener, shuts
// JetStream down, then tells its clients (INFO "ldm":true), waits the
// grace period and closes them. The step in flight when JetStream stops
// fails (its acknowledgement uncertain, or its request unanswered until
// the connection closes); the runtime drops that connection, its dials
// are refused until the broker is back, and after each restart it
// delivers again on one new connection. Ledger: nothing lost, nothing
// after a verified acknowledgement (a graceful stop writes the
// consumers' state: server/filestore.go consumerFileStore.Stop),
// re-executions counted by cause. Logged: the delivered and stored rates
// before, during and after, the time from each restart to the next
// verified acknowledgement, how long each lame duck took, the runtime's
// dials, replaced connections and failures while the broker drained.
func TestFaultLameDuckRollingRestart(t *testing.T) {
	t.Parallel()
	const (
		tenant  = "ldm"
		grace   = 250 * time.Millisecond
		events  = 1000
		tick    = 5 * time.Millisecond // 200 events/s offered
		workers = 2
		steady  = 200 // events stored before each drain
	)
	b := brokertest.Start(t, broker.Options{Tenants: []string{tenant}, LameDuckGracePeriod: grace})
	e := trigInstall(t, b, trigSpec{tenants: []string{tenant}, perTenant: []int{2}, storage: "file"})
	h := newProcHost(e)
	pub := newProcPublisher(t, e, 0, 2, events, workers, tick)
	pctx, pcancel := context.WithTimeout(t.Context(), 3*trigWait)
	t.Cleanup(func() {
		pcancel()
		_ = pub.wait()
	})
	run := e.runProc(t, h)
	start := time.Now()
	pub.start(pctx)

	var drains, ups []time.Time
	for round := range 2 {
		want := pub.storedCount() + steady
		trigEventually(t, "steady load", trigWait, func() bool { return pub.storedCount() >= want })
		snap := e.mon.Snapshot()
		mark := h.mark()
		for _, te := range e.tenants {
			_ = te.adm.c.Close() // not one more client for the drain to close
		}
		ctx, cancel := context.WithTimeout(t.Context(), trigWait)
		began := time.Now()
		err := e.b.LameDuck(ctx)
		cancel()
		if err != nil {
			t.Fatalf("round %d: LameDuck: %v", round, err)
		}
		drained := time.Since(began)
		restart := e.restartBroker(t)
		up := time.Now()
		next := h.waitReport(t, "a verified acknowledgement after the restart", mark, func(r procReport) bool {
			return verifiedAck(r.Report) && r.At.After(up)
		})
		after := e.mon.Snapshot()
		if after.Dials == snap.Dials {
			t.Errorf("round %d: no dial across the drain and restart", round)
		}
		sys := newTrigSys(t, e.b)
		if conns := sys.runtimeConns(e.tenants[0].account); len(conns) != 1 {
			t.Errorf("round %d: %d runtime connections at the restarted broker, want 1", round, len(conns))
		}
		_ = sys.c.Close() // not a client for the next drain to close
		classes := map[trigger.ErrorClass]int{}
		for _, r := range h.reports(mark) {
			if r.At.Before(up) && r.Report.Error != 0 {
				classes[r.Report.Error]++
			}
		}
		t.Logf("round %d: lame duck took %v, restart %v, next verified acknowledgement %v after it; dials %d, replaced %d; failures until the restart %v",
			round, drained, restart, next.At.Sub(up), after.Dials-snap.Dials, after.Replaced-snap.Replaced, classes)
		drains = append(drains, began)
		ups = append(ups, next.At)
	}
	if err := pub.wait(); err != nil {
		t.Fatal(err)
	}
	published := time.Now()
	v, took := e.settle(t)
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkVerdict(t, v, true)
	var ran []time.Time
	for _, c := range e.callLog() {
		ran = append(ran, c.At)
	}
	stored, failed := pub.storedTimes()
	phases := []struct {
		name     string
		from, to time.Time
	}{
		{"before", start, drains[0]},
		{"first drain to resume", drains[0], ups[0]},
		{"between", ups[0], drains[1]},
		{"second drain to resume", drains[1], ups[1]},
		{"after", ups[1], published},
	}
	var rates string
	for _, ph := range phases {
		rates += fmt.Sprintf(" %s (%v) %.0f run, %.0f stored;", ph.name, ph.to.Sub(ph.from).Round(time.Millisecond), rate(ran, ph.from, ph.to), rate(stored, ph.from, ph.to))
	}
	t.Logf("events/s:%s %d publish attempts stored nothing; publishing took %v, settled %v later; re-executions by cause:%s",
		rates, failed, published.Sub(start), took, byCause(v))
}
