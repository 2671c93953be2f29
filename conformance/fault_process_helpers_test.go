package conformance_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/broker"
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

// reports returns a copy of the reports from position from on.
func (h *procHost) reports(from int) []procReport {
	h.mu.Lock()
	defer h.mu.Unlock()
	if from > len(h.log) {
		return nil
	}
	return append([]procReport(nil), h.log[from:]...)
}

// waitReport waits, within trigWait, for the first report at position
// from or later for which match holds, and returns it.
func (h *procHost) waitReport(t *testing.T, what string, from int, match func(procReport) bool) procReport {
	t.Helper()
	return h.waitReportWithin(t, what, from, trigWait, match)
}

// waitReportWithin is procHost.waitReport with its own bound.
func (h *procHost) waitReportWithin(t *testing.T, what string, from int, within time.Duration, match func(procReport) bool) procReport {
	t.Helper()
	timer := time.NewTimer(within)
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
			t.Fatalf("%s: no such step report within %v", what, within)
			return procReport{}
		}
	}
}

// verifiedAck matches a delivery whose acknowledgement was verified.
func verifiedAck(r trigger.StepReport) bool {
	return r.Delivered > 0 && r.Ack == pull.AckVerified
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
	return e.consumerOnDiskOf(e.b, k, i)
}

// consumerOnDiskOf is consumerOnDisk in broker b's store (a cluster
// node's replica of the consumer).
func (e *trigEnv) consumerOnDiskOf(b *broker.Broker, k, i int) (diskState, error) {
	te := e.tenants[k]
	bc := e.cfg.Bindings[e.bindingIndex(k, i)]
	path := filepath.Join(b.StoreDir(), "jetstream", te.account, "streams", bc.Stream, "obs", bc.Consumer, "o.dat")
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

// The bounds of procPublisher.
const (
	// procPublishTimeout bounds one publish request.
	procPublishTimeout = time.Second
	// procDialTimeout bounds one dial of a publisher's worker.
	procDialTimeout = time.Second
)

// procPublisher publishes a fixed number of events to one tenant's
// bindings in turn at a bounded rate, while the broker may be draining or
// down. Its workers each own a connection and take every workers-th
// event, one attempt per tick each (workers x tick apart), so that the
// offered rate is one event per tick whatever one round trip costs. Each
// event carries a Nats-Msg-Id: an attempt whose PubAck was lost is sent
// again with the same id and the stream answers with the first copy's
// sequence (duplicate), so every event is recorded in the ledger once,
// with the sequence it was stored at. A connection that was closed or
// announced lame-duck mode is replaced at the worker's next tick.
type procPublisher struct {
	e        *trigEnv
	k        int
	bindings int
	cfg      conn.Config
	n        int
	workers  int
	tick     time.Duration

	mu     sync.Mutex
	stored []time.Time // when each event's PubAck arrived
	failed int         // attempts that stored nothing
	errs   []error
	wg     sync.WaitGroup
}

// newProcPublisher prepares n events for tenant k's first bindings
// bindings, one every tick, published by workers workers.
func newProcPublisher(t *testing.T, e *trigEnv, k, bindings, n, workers int, tick time.Duration) *procPublisher {
	t.Helper()
	creds, err := e.b.Admin(e.tenants[k].id)
	if err != nil {
		t.Fatal(err)
	}
	cfg := connConfig(t, e.b, creds)
	cfg.Name = "conformance-publisher"
	return &procPublisher{e: e, k: k, bindings: bindings, cfg: cfg, n: n, workers: workers, tick: tick}
}

// start runs the workers, each on its own goroutine, until their events
// are stored or ctx ends; wait waits for them.
func (p *procPublisher) start(ctx context.Context) {
	for w := range p.workers {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			if err := p.work(ctx, w); err != nil {
				p.mu.Lock()
				p.errs = append(p.errs, err)
				p.mu.Unlock()
			}
		}()
	}
}

// wait waits for every worker to end and returns their errors.
func (p *procPublisher) wait() error {
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return errors.Join(p.errs...)
}

// storedCount returns how many events are stored.
func (p *procPublisher) storedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.stored)
}

// storedTimes returns when each event was stored, and the number of
// attempts that stored nothing.
func (p *procPublisher) storedTimes() ([]time.Time, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.stored...), p.failed
}

// work publishes events w, w+workers, ... in order.
func (p *procPublisher) work(ctx context.Context, w int) error {
	ticker := time.NewTicker(time.Duration(p.workers) * p.tick)
	defer ticker.Stop()
	var c *conn.Conn
	defer func() {
		if c != nil {
			_ = c.Close()
		}
	}()
	te := p.e.tenants[p.k]
	for i := w; i < p.n; {
		select {
		case <-ctx.Done():
			return fmt.Errorf("publisher %d: event %d of %d not stored: %w", w, i, p.n, ctx.Err())
		case <-ticker.C:
		}
		if c != nil && (c.Closed() || c.LameDuck()) {
			_ = c.Close()
			c = nil
		}
		if c == nil {
			dctx, cancel := context.WithTimeout(ctx, procDialTimeout)
			nc, err := conn.Dial(dctx, p.cfg)
			cancel()
			if err != nil {
				p.fail()
				continue
			}
			c = nc
		}
		b := i % p.bindings
		id := p.e.cfg.Bindings[p.e.bindingIndex(p.k, b)].ID
		hdr := []byte(fmt.Sprintf("NATS/1.0\r\nNats-Msg-Id: %s-%d\r\n\r\n", id, i))
		rctx, cancel := context.WithTimeout(ctx, procPublishTimeout)
		r, err := c.Request(rctx, trigSubject(te.id, b), hdr, trigPayload(argOK))
		cancel()
		if err != nil || r.Status != 0 {
			p.fail()
			continue
		}
		var ack struct {
			Seq   uint64 `json:"seq"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(r.Payload, &ack); err != nil || ack.Error != nil || ack.Seq == 0 {
			p.fail()
			continue
		}
		p.e.led.Published(id, ack.Seq)
		p.mu.Lock()
		p.stored = append(p.stored, time.Now())
		p.mu.Unlock()
		i += p.workers
	}
	return nil
}

func (p *procPublisher) fail() {
	p.mu.Lock()
	p.failed++
	p.mu.Unlock()
}

// rate returns the number of times in [from, to) per second.
func rate(times []time.Time, from, to time.Time) float64 {
	if !to.After(from) {
		return 0
	}
	n := 0
	for _, at := range times {
		if !at.Before(from) && at.Before(to) {
			n++
		}
	}
	return float64(n) / to.Sub(from).Seconds()
}
