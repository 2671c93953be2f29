package conformance_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/trigger"
)

// procReport is one step report with the time the host observed it.
type procReport struct {
	At     time.Time
	Report trigger.StepReport
}

// procHost is the suite's hook host with the two places the process
// faults are put, and a record of every step report:
//
//   - beforePull runs at the second PublicationEligible of a step, the
//     check the runtime makes right before it writes the pull (after the
//     reservation and consumer info: trigger/host.go, call order 5);
//   - afterStep runs after the ledger recorded a step report, on the
//     stepping goroutine, before the next step begins.
//
// Each hook is armed for one use: beforePull is cleared when it runs,
// afterStep when it returns true.
type procHost struct {
	*trigHookHost

	mu sync.Mutex
	// reserved is set by a reservation and cleared by the next
	// eligibility check or the step's report: the check it clears is the
	// one before the pull.
	reserved   bool
	beforePull func(trigger.BindingRef)
	afterStep  func(trigger.StepReport) bool
	stepGen    uint64
	log        []procReport
	// changed is closed and replaced at every report.
	changed chan struct{}
}

// newProcHost wraps the case's hook host; run the case with runProc.
func newProcHost(e *trigEnv) *procHost {
	return &procHost{trigHookHost: e.host, changed: make(chan struct{})}
}

// runProc starts the case's Run with h as its host.
func (e *trigEnv) runProc(t *testing.T, h *procHost) *trigRun {
	t.Helper()
	return runOwner(t, e.trig, h)
}

// armBeforePull sets the hook run right before the next pull.
func (h *procHost) armBeforePull(f func(trigger.BindingRef)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.beforePull = f
}

// armAfterStep sets the hook run after each step report until it returns
// true.
func (h *procHost) armAfterStep(f func(trigger.StepReport) bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.afterStep = f
	h.stepGen++
}

func (h *procHost) ReserveInbound(ctx context.Context, r trigger.InboundRequest) (trigger.Inbound, error) {
	in, err := h.trigHookHost.ReserveInbound(ctx, r)
	if err == nil && in != nil {
		h.mu.Lock()
		h.reserved = true
		h.mu.Unlock()
	}
	return in, err
}

func (h *procHost) PublicationEligible(b trigger.BindingRef) error {
	err := h.trigHookHost.PublicationEligible(b)
	h.mu.Lock()
	var hook func(trigger.BindingRef)
	if h.reserved && err == nil {
		hook, h.beforePull = h.beforePull, nil
	}
	h.reserved = false
	h.mu.Unlock()
	if hook != nil {
		hook(b)
	}
	return err
}

func (h *procHost) ObserveStep(r trigger.StepReport) {
	h.trigHookHost.ObserveStep(r)
	h.mu.Lock()
	h.reserved = false
	h.log = append(h.log, procReport{At: time.Now(), Report: r})
	close(h.changed)
	h.changed = make(chan struct{})
	hook, gen := h.afterStep, h.stepGen
	h.mu.Unlock()
	if hook == nil || !hook(r) {
		return
	}
	h.mu.Lock()
	if h.stepGen == gen {
		h.afterStep = nil
	}
	h.mu.Unlock()
}

// mark returns the position of the next report, for waitReport.
func (h *procHost) mark() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.log)
}

// waitReport waits, within trigWait, for the first report at position
// from or later for which match holds, and returns it.
func (h *procHost) waitReport(t *testing.T, what string, from int, match func(procReport) bool) procReport {
	t.Helper()
	timer := time.NewTimer(trigWait)
	defer timer.Stop()
	for {
		h.mu.Lock()
		for i := from; i < len(h.log); i++ {
			if match(h.log[i]) {
				r := h.log[i]
				h.mu.Unlock()
				return r
			}
		}
		from = len(h.log)
		changed := h.changed
		h.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			t.Fatalf("%s: no such step report within %v", what, trigWait)
			return procReport{}
		}
	}
}

// verifiedAck matches a delivery whose acknowledgement was verified.
func verifiedAck(r trigger.StepReport) bool {
	return r.Delivered > 0 && r.Ack == trigger.AckVerified
}

// settleQuiet waits, within faultSettle, for every consumer of the case
// to settle, without the verdict's log line; it fails the case if they
// do not and returns the time it took.
func (e *trigEnv) settleQuiet(t *testing.T) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), faultSettle)
	defer cancel()
	views, took, err := e.led.WaitSettled(ctx, faultTick, func(ctx context.Context, id string) (ledger.ConsumerView, error) {
		return e.consumerView(t, ctx, id)
	})
	if err != nil {
		t.Fatalf("consumers not settled within %v: %v\n%s", faultSettle, err, e.led.Verdict(views))
	}
	return took
}

// restartBroker restarts the case's broker (after a kill, a lame duck
// or a stop) and dials the tenants' administrators again; it returns how
// long the restart took.
func (e *trigEnv) restartBroker(t *testing.T) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), trigWait)
	defer cancel()
	began := time.Now()
	if err := e.b.Restart(ctx); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	took := time.Since(began)
	for _, te := range e.tenants {
		te.redial(t, e.b)
	}
	return took
}

// diskState is a consumer's state as nats-server v2.14.6 last wrote it to
// its state file: what a restart after a crash recovers.
type diskState struct {
	// AckFloor is the ack floor's stream sequence; Delivered the last
	// stream sequence delivered; Pending counts deliveries awaiting an
	// acknowledgement.
	AckFloor, Delivered, Pending uint64
}

// The layout of a file-backed consumer's state in nats-server v2.14.6
// (server/filestore.go: streamsDir, consumerDir, consumerState, magic;
// server/store.go encodeConsumerState: the magic byte, version 2, then
// uvarints ack floor consumer and stream sequence, delivered consumer and
// stream sequence, and the number pending, before the pending entries).
const (
	stateMagic   = 22
	stateVersion = 2
)

// consumerOnDisk reads binding i of tenant k's consumer state file under
// the broker's store directory (the JetStream store directory holds a
// "jetstream" directory with one directory per account).
func (e *trigEnv) consumerOnDisk(k, i int) (diskState, error) {
	te := e.tenants[k]
	bc := e.cfg.Bindings[e.bindingIndex(k, i)]
	path := filepath.Join(e.b.StoreDir(), "jetstream", te.account, "streams", bc.Stream, "obs", bc.Consumer, "o.dat")
	buf, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return diskState{}, nil // never written: a restart recovers nothing
	}
	if err != nil {
		return diskState{}, err
	}
	if len(buf) < 2 || buf[0] != stateMagic || buf[1] != stateVersion {
		return diskState{}, fmt.Errorf("consumer state file: unknown header % x", buf[:min(len(buf), 2)])
	}
	var v [5]uint64
	rest := buf[2:]
	for n := range v {
		x, w := binary.Uvarint(rest)
		if w <= 0 {
			return diskState{}, fmt.Errorf("consumer state file: field %d malformed", n)
		}
		v[n], rest = x, rest[w:]
	}
	return diskState{AckFloor: v[1], Delivered: v[3], Pending: v[4]}, nil
}

// waitOnDisk waits, within trigWait, until binding i of tenant k's
// consumer state file shows every event up to seq acknowledged.
func (e *trigEnv) waitOnDisk(t *testing.T, k, i int, seq uint64) {
	t.Helper()
	var last diskState
	var lastErr error
	deadline := time.NewTimer(trigWait)
	defer deadline.Stop()
	tick := time.NewTicker(trigPollTick)
	defer tick.Stop()
	for {
		last, lastErr = e.consumerOnDisk(k, i)
		if lastErr == nil && last.AckFloor >= seq && last.Pending == 0 {
			return
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("consumer state file not at seq %d within %v: %+v, %v", seq, trigWait, last, lastErr)
			return
		}
	}
}

// runsOf returns the delivery counts of the runs of one event, in order.
func runsOf(l *ledger.Ledger, binding string, seq uint64) []uint64 {
	var runs []uint64
	for _, d := range l.Deliveries(ledger.Key{Binding: binding, Seq: seq}) {
		if d.Ran {
			runs = append(runs, d.Delivered)
		}
	}
	return runs
}

// boolInt is 1 for true, 0 for false.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// causesOnly reports the re-executions whose cause is not one of allowed.
func causesOnly(v ledger.Verdict, allowed ...ledger.Cause) []ledger.Reexecution {
	var bad []ledger.Reexecution
	for _, re := range v.Reexecutions {
		ok := false
		for _, c := range allowed {
			ok = ok || re.Cause == c
		}
		if !ok {
			bad = append(bad, re)
		}
	}
	return bad
}

// byCause formats the verdict's re-executions by cause.
func byCause(v ledger.Verdict) string {
	s := ""
	for c := ledger.Cause(1); int(c) <= ledger.NumCauses; c++ {
		if n := v.ByCause[c]; n > 0 {
			s += fmt.Sprintf(" %s %d;", c, n)
		}
	}
	if s == "" {
		return " none"
	}
	return s
}
