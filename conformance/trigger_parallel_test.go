package conformance_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// parHold is how long the function of the parallel cases takes.
const parHold = 200 * time.Millisecond

// parSpan is one call of the parallel cases' function: its binding, when
// it started and ended, and what the pools held when it started.
type parSpan struct {
	binding    string
	start, end time.Time
	use        trigger.Usage
}

// parRecorder is the parallel cases' function: it holds each call for a
// fixed time on a timer and reports its span once it ends.
type parRecorder struct {
	pools *trigger.Pools
	hold  time.Duration
	spans chan parSpan
}

func (r *parRecorder) call(ctx context.Context, c refhost.Call) error {
	s := parSpan{binding: c.Binding.ID, start: time.Now(), use: r.pools.Usage()}
	timer := time.NewTimer(r.hold)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.end = time.Now()
	r.spans <- s
	return nil
}

// collect waits for n spans, in the order they ended.
func (r *parRecorder) collect(t *testing.T, n int) []parSpan {
	t.Helper()
	timer := time.NewTimer(trigWait)
	defer timer.Stop()
	var out []parSpan
	for len(out) < n {
		select {
		case s := <-r.spans:
			out = append(out, s)
		case <-timer.C:
			t.Fatalf("%d of %d calls ended within %v", len(out), n, trigWait)
		}
	}
	return out
}

// overlaps reports whether two spans share an instant.
func overlaps(a, b parSpan) bool { return a.start.Before(b.end) && b.start.Before(a.end) }

// TestTriggerParallelInstallations: one installation runs one activation
// at a time across all its bindings; its configuration split in two
// (trigger.Split) and installed twice on the same pools, each part with
// its own Run, activates both bindings' messages at once. The function
// holds each call 200 ms on a timer; the overlap is read from its own
// timestamps and from the pools, which hold two ingress requests while
// both run. Within one binding calls never overlap (the consumer's
// max_ack_pending is 1).
func TestTriggerParallelInstallations(t *testing.T) {
	e := trigStart(t, trigSpec{tenants: []string{"par"}, perTenant: []int{2}})
	rec := &parRecorder{pools: e.pools, hold: parHold, spans: make(chan parSpan, 16)}
	e.setAction(rec.call)
	const perBinding = 2

	t.Run("one installation", func(t *testing.T) {
		for range perBinding {
			e.publish(0, 0, argActions)
			e.publish(0, 1, argActions)
		}
		run := e.run(t)
		spans := rec.collect(t, 2*perBinding)
		trigEventually(t, "every message acknowledged", trigWait, func() bool {
			return e.mon.Snapshot().Totals.Acked == 2*perBinding
		})
		if err := run.stop(); err != nil {
			t.Fatalf("Run: %v", err)
		}
		for i := range spans {
			for j := range i {
				if overlaps(spans[i], spans[j]) {
					t.Errorf("calls overlap in one installation: %s %v-%v and %s %v-%v", spans[j].binding,
						spans[j].start.Format(time.StampMicro), spans[j].end.Format(time.StampMicro),
						spans[i].binding, spans[i].start.Format(time.StampMicro), spans[i].end.Format(time.StampMicro))
				}
			}
			if spans[i].use.Requests != 1 {
				t.Errorf("call %d: the pools held %d ingress requests, want 1", i, spans[i].use.Requests)
			}
		}
	})
	e.trig.Close()

	t.Run("two installations", func(t *testing.T) {
		parts, err := trigger.Split(e.cfg, e.creds, 2)
		if err != nil {
			t.Fatal(err)
		}
		var trigs []*trigger.Triggers
		var mons []*trigger.Monitor
		for k, p := range parts {
			trig, mon, err := trigger.Install(e.pools, trigger.Installation{LogicalID: fmt.Sprintf("conformance.%d", k), Epoch: 1, Config: p.Config, Credentials: p.Credentials})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(trig.Close)
			// One empty visit each: the part's own connection is dialled
			// before the events are stored.
			if r, err := trig.Step(t.Context(), e.ref); err != nil || r.Result != trigger.ResultEmpty {
				t.Fatalf("part %d's first step: %+v, %v", k, r, err)
			}
			trigs, mons = append(trigs, trig), append(mons, mon)
		}
		if got := e.pools.Usage(); got.Installations != 2 || got.Connections != 2 {
			t.Fatalf("pools hold %+v, want two installations with a connection each", got)
		}
		for range perBinding {
			e.publish(0, 0, argActions)
			e.publish(0, 1, argActions)
		}
		var runs []*trigRun
		for _, trig := range trigs {
			runs = append(runs, runOwner(t, trig, e.ref))
		}
		spans := rec.collect(t, 2*perBinding)
		trigEventually(t, "every message acknowledged", trigWait, func() bool {
			return mons[0].Snapshot().Totals.Acked == perBinding && mons[1].Snapshot().Totals.Acked == perBinding
		})
		for k, run := range runs {
			if err := run.stop(); err != nil {
				t.Fatalf("Run of part %d: %v", k, err)
			}
		}
		overlapped := 0
		for i := range spans {
			for j := range i {
				switch {
				case spans[i].binding == spans[j].binding && overlaps(spans[i], spans[j]):
					t.Errorf("two calls of %s overlap", spans[i].binding)
				case overlaps(spans[i], spans[j]):
					overlapped++
				}
			}
		}
		if overlapped == 0 {
			t.Errorf("no two calls overlapped: %+v", spans)
		}
		most := slices.MaxFunc(spans, func(a, b parSpan) int { return a.use.Requests - b.use.Requests })
		if most.use.Requests != 2 {
			t.Errorf("the pools held at most %d ingress requests while a call started, want 2", most.use.Requests)
		}
	})
}

// BenchmarkTriggerParallel: one tenant, four bindings, a function that
// takes 50 ms (a timer), parBenchPerBinding messages published per
// binding, then the configuration split into 1, 2 and 4 installations on
// one Pools, each with its own Run, until every message is acknowledged.
// msgs/s is measured from the Runs' start to the last acknowledgement;
// peak-B, peak-requests and peak-conns are the most the pools held when an
// activation started, metadata-B the installations' charges, and
// activations the most functions running at once, idle-steps the steps
// that delivered nothing (the first empty visits of each iteration
// included).
func BenchmarkTriggerParallel(b *testing.B) {
	const bindings = 4
	br := brokertest.Start(b, broker.Options{Tenants: []string{trigTenant}})
	adm, cfg, creds := trigSetup(b, br, bindings)
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("installs=%d", n), func(b *testing.B) {
			pools, err := trigger.NewPools(trigger.PoolConfig{Limits: trigger.DefaultPoolLimits()})
			if err != nil {
				b.Fatal(err)
			}
			defer pools.Close()
			parts, err := trigger.Split(cfg, creds, n)
			if err != nil {
				b.Fatal(err)
			}
			var trigs []*trigger.Triggers
			for k, p := range parts {
				trig, _, err := trigger.Install(pools, trigger.Installation{LogicalID: fmt.Sprintf("bench.%d", k), Epoch: 1, Config: p.Config, Credentials: p.Credentials})
				if err != nil {
					b.Fatal(err)
				}
				trigs = append(trigs, trig)
			}
			metadata := pools.Usage().MetadataBytes
			host := newParBenchHost(b, pools, bindings*parBenchPerBinding)
			var elapsed time.Duration
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				for _, trig := range trigs {
					// One empty visit each dials the installation's
					// connection before the events are stored.
					if r, err := trig.Step(b.Context(), host); err != nil || r.Result != trigger.ResultEmpty {
						b.Fatalf("first step: %+v, %v", r, err)
					}
				}
				for range parBenchPerBinding {
					for i := range bindings {
						adm.publish(fmt.Sprintf("trig.in.%d", i), []byte(`["ok"]`))
					}
				}
				b.StartTimer()
				elapsed += host.runAll(b, trigs)
			}
			b.ReportMetric(float64(b.N*bindings*parBenchPerBinding)/elapsed.Seconds(), "msgs/s")
			b.ReportMetric(float64(metadata), "metadata-B")
			b.ReportMetric(float64(host.peak.Bytes), "peak-B")
			b.ReportMetric(float64(host.peak.Requests), "peak-requests")
			b.ReportMetric(float64(host.peak.Connections), "peak-conns")
			b.ReportMetric(float64(host.most), "activations")
			b.ReportMetric(float64(host.idle)/float64(b.N), "idle-steps")
		})
	}
}

// parBenchPerBinding is the messages BenchmarkTriggerParallel publishes
// per binding and iteration.
const parBenchPerBinding = 20

// parBenchHold is the time the benchmark's function takes.
const parBenchHold = 50 * time.Millisecond

// parBenchHost is the reference host with the benchmark's function, a
// step observer counting verified acknowledgements, and the peaks of the
// pools' usage and of concurrent activations.
type parBenchHost struct {
	*refhost.Host
	pools *trigger.Pools
	acked chan struct{}

	mu      sync.Mutex
	failed  int // delivered steps not a verified acknowledgement of a success
	idle    int // steps that delivered nothing
	running int
	most    int
	peak    trigger.Usage
}

func newParBenchHost(b *testing.B, pools *trigger.Pools, messages int) *parBenchHost {
	b.Helper()
	ref, err := refhost.New(refhost.Config{MaxActivations: 4, MaxInputBytes: 4 << 10})
	if err != nil {
		b.Fatal(err)
	}
	h := &parBenchHost{Host: ref, pools: pools, acked: make(chan struct{}, messages)}
	const service, contract = "events", "latent:events/handler@1.0.0"
	err = ref.Register(refhost.Function{
		Service: service, Revision: "r1", Contract: contract, Name: "handle",
		Params: []refhost.Type{refhost.String()},
		Func:   h.call,
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := ref.Publish(refhost.PublicationKey{Service: service, Contract: contract, Function: "handle"}); err != nil {
		b.Fatal(err)
	}
	if _, err := ref.SetRoute(service, "", "r1"); err != nil {
		b.Fatal(err)
	}
	return h
}

// call takes parBenchHold on a timer and records the peaks as it starts.
func (h *parBenchHost) call(ctx context.Context, _ refhost.Call) error {
	use := h.pools.Usage()
	h.mu.Lock()
	h.running++
	h.most = max(h.most, h.running)
	h.peak.Bytes = max(h.peak.Bytes, use.Bytes)
	h.peak.Requests = max(h.peak.Requests, use.Requests)
	h.peak.Connections = max(h.peak.Connections, use.Connections)
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.running--
		h.mu.Unlock()
	}()
	timer := time.NewTimer(parBenchHold)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ObserveStep counts the verified acknowledgements of successes and every
// other delivered step.
func (h *parBenchHost) ObserveStep(r trigger.StepReport) {
	if r.Delivered == 0 {
		h.mu.Lock()
		h.idle++
		h.mu.Unlock()
		return
	}
	if r.Outcome == trigger.OutcomeSuccess && r.Ack == pull.AckVerified {
		h.acked <- struct{}{}
		return
	}
	h.mu.Lock()
	h.failed++
	h.mu.Unlock()
}

// runAll runs every installation on its own goroutine until the host saw
// one verified acknowledgement per published message, stops them and
// returns the time from their start to the last acknowledgement.
func (h *parBenchHost) runAll(b *testing.B, trigs []*trigger.Triggers) time.Duration {
	b.Helper()
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	done := make(chan error, len(trigs))
	start := time.Now()
	for _, trig := range trigs {
		go func() { done <- trig.Run(ctx, h) }()
	}
	timer := time.NewTimer(trigWait)
	defer timer.Stop()
	for range cap(h.acked) {
		select {
		case <-h.acked:
		case <-timer.C:
			b.Fatalf("not every message acknowledged within %v", trigWait)
		}
	}
	elapsed := time.Since(start)
	cancel()
	for range trigs {
		if err := <-done; err != nil {
			b.Fatalf("Run: %v", err)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed != 0 {
		b.Fatalf("%d deliveries not acknowledged as a success", h.failed)
	}
	return elapsed
}
