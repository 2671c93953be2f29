package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/trigger"
)

// Bounds of the idle comparison's flags.
const (
	minIdleWindow = time.Second
	maxIdleWindow = 5 * time.Minute
	maxIdleVisits = 4096
	// settleBound bounds every wait for a state the run expects soon: the
	// first visit, the goroutines of a stopped phase returning.
	settleBound = 10 * time.Second
	// settleTick paces those bounded waits.
	settleTick = 5 * time.Millisecond
	// maxCollections bounds the collections of one heap sample.
	maxCollections = 6
)

// The poll intervals this project's phases run with.
const (
	pollFast = 10 * time.Millisecond
	pollSlow = 100 * time.Millisecond
)

// idlePolls are the poll intervals, fastest first.
func idlePolls() [2]time.Duration { return [2]time.Duration{pollFast, pollSlow} }

// idleOptions are the flags of -mode idle.
type idleOptions struct {
	window time.Duration
	small  int
	visits int
}

// idleFlags registers the flags of -mode idle on fs.
func idleFlags(fs *flag.FlagSet) *idleOptions {
	o := &idleOptions{}
	fs.DurationVar(&o.window, "idle-time", 35*time.Second,
		"idle: measured window of each phase (the default spans one 30 s expiry of nats.go's held pulls)")
	fs.IntVar(&o.small, "idle-small", 16, "idle: the smaller number of bindings and consumers, next to 256")
	fs.IntVar(&o.visits, "idle-visits", 512, "idle: timed Steps of the empty-visit measurement")
	return o
}

func (o *idleOptions) validate() error {
	switch {
	case o.window < minIdleWindow || o.window > maxIdleWindow:
		return fmt.Errorf("peerbench: -idle-time must be %v..%v", minIdleWindow, maxIdleWindow)
	case o.small < 1 || o.small >= trigger.MaxBindings:
		return fmt.Errorf("peerbench: -idle-small must be 1..%d", trigger.MaxBindings-1)
	case o.visits < 1 || o.visits > maxIdleVisits:
		return fmt.Errorf("peerbench: -idle-visits must be 1..%d", maxIdleVisits)
	}
	return nil
}

// procSample is what the process holds at one moment.
type procSample struct {
	goroutines int
	fds        int // open file descriptors; -1 when they cannot be counted
	heapAlloc  uint64
	heapInuse  uint64
	stackInuse uint64
	mallocs    uint64
}

// sampleProc samples the process, after full collections when gc is set:
// until the live heap stops falling (an object with a finalizer or a
// cleanup, a closed socket's, is freed a collection after the one that
// found it unreachable), at most maxCollections.
func sampleProc(gc bool) procSample {
	var m runtime.MemStats
	if gc {
		runtime.GC()
		runtime.ReadMemStats(&m)
		for range maxCollections - 1 {
			prev := m.HeapAlloc
			runtime.Gosched() // let the finalizer goroutine run
			runtime.GC()
			runtime.ReadMemStats(&m)
			if m.HeapAlloc >= prev {
				break
			}
		}
	} else {
		runtime.ReadMemStats(&m)
	}
	return procSample{
		goroutines: runtime.NumGoroutine(),
		fds:        countFDs(),
		heapAlloc:  m.HeapAlloc,
		heapInuse:  m.HeapInuse,
		stackInuse: m.StackInuse,
		mallocs:    m.Mallocs,
	}
}

// countFDs counts the entries of /proc/self/fd (the directory's own
// descriptor included, in every sample alike), -1 where there is none.
func countFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// phase is one measured idle window of either client.
type phase struct {
	client string // "latent" or "nats.go"
	n      int    // bindings or consumers
	poll   time.Duration

	install        int64 // latent: HeapAlloc held by the installation alone
	charge         int64 // latent: what the pools charge for the installation
	goroutines     int   // most goroutines above the phase's baseline
	fds            int   // most descriptors above the baseline
	heapAlloc      int64 // after a collection, at the window's end
	heapInuse      int64
	stackInuse     int64
	window         time.Duration
	visits         uint64 // latent: steps in the window, every one empty
	visited        int    // latent: bindings visited at least once by the window's end
	reqs, replies  int64  // broker: messages in from and out to the connection
	varzIn         int64  // broker: every message in, all connections
	clientOut      uint64 // nats.go: messages the client sent (its Stats)
	held           int    // nats.go: pull requests the broker holds (num_waiting)
	cpu            time.Duration
	mallocs        uint64
	afterGoroutine int // goroutines above the baseline once stopped
	afterFDs       int
}

func (p phase) label() string {
	if p.client == "latent" {
		return fmt.Sprintf("latent  %3d bindings, poll %v", p.n, p.poll)
	}
	return fmt.Sprintf("nats.go %3d consumers, Consume()", p.n)
}

func (p phase) perSecond(x float64) float64 { return x / p.window.Seconds() }

// emptyVisits is the Step-driven measurement of one empty visit.
type emptyVisits struct {
	n              int
	steps          int
	p50, p99       time.Duration
	reqs, replies  int64
	mallocs, bytes uint64
	cpu            time.Duration
}

// idleRun is one run of the comparison.
type idleRun struct {
	o     idleOptions
	env   *idleEnv
	pools *trigger.Pools
	w     io.Writer
}

// runIdle runs the comparison and writes its raw lines and tables to w.
func runIdle(ctx context.Context, o idleOptions, server string, thread bool, w io.Writer) (err error) {
	if err := o.validate(); err != nil {
		return err
	}
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\ncpus: %d\ngo: %s\nnats.go: %s\nnats-server: %s\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), nats.Version, broker.ServerVersion)
	fmt.Fprintf(w, "window %v per phase, %d and %d bindings/consumers, all empty; %d timed empty Steps\n",
		o.window, o.small, trigger.MaxBindings, o.visits)
	fmt.Fprintf(w, "latent socket: %s\n", map[bool]string{false: "the Go runtime's network poller (default)", true: "thread socket (PoolConfig.ThreadSocket)"}[thread])
	fmt.Fprintf(w, "load average before: %s\n", loadAvg())
	setup := time.Now()
	env, err := startIdleEnv(ctx, server)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, env.close()) }()
	pools, err := trigger.NewPools(trigger.PoolConfig{Limits: trigger.DefaultPoolLimits(), ThreadSocket: thread})
	if err != nil {
		return err
	}
	defer pools.Close()
	fmt.Fprintf(w, "broker started, %d profile consumers and %d nats.go consumers provisioned in %v\n",
		trigger.MaxBindings, trigger.MaxBindings, time.Since(setup).Round(time.Millisecond))
	r := &idleRun{o: o, env: env, pools: pools, w: w}
	if err := r.warm(ctx); err != nil {
		return fmt.Errorf("peerbench: warm-up: %w", err)
	}

	var phases []phase
	for _, poll := range idlePolls() {
		for _, n := range []int{o.small, trigger.MaxBindings} {
			p, err := r.latent(ctx, n, poll)
			if err != nil {
				return fmt.Errorf("peerbench: latent, %d bindings, poll %v: %w", n, poll, err)
			}
			r.print(p)
			phases = append(phases, p)
		}
	}
	var rates []rateCheck
	for _, poll := range idlePolls() {
		rc, err := r.rates(ctx, poll)
		if err != nil {
			return fmt.Errorf("peerbench: side by side, poll %v: %w", poll, err)
		}
		fmt.Fprintf(w, "side by side, poll %v: %d bindings %d visits, broker in %d; %d bindings %d visits, broker in %d; %v\n",
			poll, o.small, rc.visits[0], rc.reqs[0], trigger.MaxBindings, rc.visits[1], rc.reqs[1], rc.window.Round(time.Millisecond))
		rates = append(rates, rc)
	}
	var visits []emptyVisits
	for _, n := range []int{o.small, trigger.MaxBindings} {
		v, err := r.steps(ctx, n)
		if err != nil {
			return fmt.Errorf("peerbench: empty Steps, %d bindings: %w", n, err)
		}
		fmt.Fprintf(w, "empty Step, %3d bindings: %d steps p50 %v p99 %v, %.2f requests and %.2f replies per step, %.1f allocs %.0f B %v cpu per step\n",
			v.n, v.steps, us(v.p50), us(v.p99), float64(v.reqs)/float64(v.steps), float64(v.replies)/float64(v.steps),
			float64(v.mallocs)/float64(v.steps), float64(v.bytes)/float64(v.steps), us(v.cpu/time.Duration(v.steps)))
		visits = append(visits, v)
	}
	for _, n := range []int{o.small, trigger.MaxBindings} {
		p, err := r.natsgo(ctx, n)
		if err != nil {
			return fmt.Errorf("peerbench: nats.go, %d consumers: %w", n, err)
		}
		r.print(p)
		phases = append(phases, p)
	}
	fmt.Fprintf(w, "load average after: %s\n", loadAvg())
	printIdleReport(w, o, phases, rates, visits)
	return nil
}

func (r *idleRun) print(p phase) {
	fmt.Fprintf(r.w, "%-36s goroutines %+d fds %+d heap %+d B (inuse %+d, stack %+d) install %+d B; %v: %d visits (%d bindings visited), broker in %d out %d (all %d), client out %d, held %d; cpu %v, %d allocs; after stop goroutines %+d fds %+d\n",
		p.label(), p.goroutines, p.fds, p.heapAlloc, p.heapInuse, p.stackInuse, p.install,
		p.window.Round(time.Millisecond), p.visits, p.visited, p.reqs, p.replies, p.varzIn, p.clientOut, p.held,
		p.cpu.Round(time.Millisecond), p.mallocs, p.afterGoroutine, p.afterFDs)
}

// waitUntil polls cond every settleTick until it holds, returns an error
// or bound passes.
func waitUntil(ctx context.Context, what string, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, settleBound)
	defer cancel()
	tick := time.NewTicker(settleTick)
	defer tick.Stop()
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("peerbench: %s: not within %v", what, settleBound)
		case <-tick.C:
		}
	}
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// settle waits until the goroutines are back to base, then records what
// the process holds above base.
func settle(ctx context.Context, p *phase, base procSample) error {
	err := waitUntil(ctx, "goroutines returning", func() (bool, error) {
		return runtime.NumGoroutine() <= base.goroutines, nil
	})
	after := sampleProc(false)
	p.afterGoroutine = after.goroutines - base.goroutines
	p.afterFDs = after.fds - base.fds
	return err
}

// window runs the measured window: goroutines and descriptors sampled at
// its middle and its end, a collection at its end.
func (r *idleRun) window(ctx context.Context, p *phase, base procSample) error {
	half := r.o.window / 2
	var peak procSample
	for _, d := range []time.Duration{half, r.o.window - half} {
		if err := sleep(ctx, d); err != nil {
			return err
		}
		s := sampleProc(false)
		peak.goroutines = max(peak.goroutines, s.goroutines)
		peak.fds = max(peak.fds, s.fds)
	}
	p.goroutines = peak.goroutines - base.goroutines
	p.fds = peak.fds - base.fds
	return nil
}

// held measures the heap and stack above base after a collection.
func held(p *phase, base procSample) {
	s := sampleProc(true)
	p.heapAlloc = int64(s.heapAlloc) - int64(base.heapAlloc)
	p.heapInuse = int64(s.heapInuse) - int64(base.heapInuse)
	p.stackInuse = int64(s.stackInuse) - int64(base.stackInuse)
}

// counts are the parts of a Monitor snapshot a phase checks.
type counts struct {
	steps, empty, dials uint64
	other               uint64 // empty pulls, deliveries, skipped and failed visits
	visited             int    // bindings visited at least once
}

// monCounts reads mon's counts. The snapshot itself, with one Counts per
// binding, is not kept: it would be counted in the phase's heap.
func monCounts(mon *trigger.Monitor) counts {
	s := mon.Snapshot()
	c := counts{
		steps: s.Steps, empty: s.Totals.Empty, dials: s.Dials,
		other: s.Totals.EmptyPulls + s.Totals.Awaiting + s.Totals.Delivered + s.Totals.Skipped + s.Totals.Failed,
	}
	for _, b := range s.Bindings {
		if b.Visits > 0 {
			c.visited++
		}
	}
	return c
}

// install installs the first n bindings polled every poll.
func (r *idleRun) install(n int, poll time.Duration, id string) (*trigger.Triggers, *trigger.Monitor, error) {
	cfg := r.env.cfg.Clone()
	cfg.Bindings = cfg.Bindings[:n]
	cfg.PollIntervalMS = int(poll / time.Millisecond)
	return trigger.Install(r.pools, trigger.Installation{LogicalID: id, Epoch: 1, Config: cfg, Credentials: r.env.creds})
}

// latent installs n bindings and runs them idle for the window.
func (r *idleRun) latent(ctx context.Context, n int, poll time.Duration) (p phase, err error) {
	p = phase{client: "latent", n: n, poll: poll}
	// Everything the phase uses is allocated before the baseline and kept
	// alive past the last sample.
	cfg := r.env.cfg.Clone()
	cfg.Bindings = cfg.Bindings[:n]
	cfg.PollIntervalMS = int(poll / time.Millisecond)
	id := fmt.Sprintf("idle-%d-%dms", n, poll.Milliseconds())
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)

	charged := r.pools.Usage().MetadataBytes
	base := sampleProc(true)
	trig, mon, err := trigger.Install(r.pools, trigger.Installation{LogicalID: id, Epoch: 1, Config: cfg, Credentials: r.env.creds})
	if err != nil {
		return p, err
	}
	defer trig.Close()
	p.install = int64(sampleProc(true).heapAlloc) - int64(base.heapAlloc)
	p.charge = r.pools.Usage().MetadataBytes - charged

	go func() { done <- trig.Run(runCtx, r.env.host) }()
	running := true
	defer func() {
		if running {
			stop()
			err = errors.Join(err, <-done)
		}
	}()
	if err := waitUntil(ctx, "first visit", func() (bool, error) {
		select {
		case err := <-done:
			running = false
			return false, fmt.Errorf("peerbench: Run returned early: %w", err)
		default:
		}
		return mon.Snapshot().Totals.Empty > 0, nil
	}); err != nil {
		return p, err
	}

	s0 := monCounts(mon)
	c0, err := r.env.oneConn(ctx, trigger.ClientName)
	if err != nil {
		return p, err
	}
	v0, err := r.env.varz(ctx)
	if err != nil {
		return p, err
	}
	m0 := sampleProc(false).mallocs
	u0, k0 := cpuTime()
	t0 := time.Now()
	if err := r.window(ctx, &p, base); err != nil {
		return p, err
	}
	s1 := monCounts(mon)
	c1, err := r.env.oneConn(ctx, trigger.ClientName)
	if err != nil {
		return p, err
	}
	v1, err := r.env.varz(ctx)
	if err != nil {
		return p, err
	}
	m1 := sampleProc(false).mallocs
	u1, k1 := cpuTime()
	p.window = time.Since(t0)
	held(&p, base)
	runtime.KeepAlive(cfg) // in the baseline: it must not be freed before this sample

	p.visits = s1.steps - s0.steps
	p.visited = s1.visited
	p.reqs, p.replies = c1.InMsgs-c0.InMsgs, c1.OutMsgs-c0.OutMsgs
	p.varzIn = v1.InMsgs - v0.InMsgs
	p.cpu = u1 - u0 + k1 - k0
	p.mallocs = m1 - m0
	switch {
	case c1.CID != c0.CID:
		return p, errors.New("peerbench: the runtime's connection was replaced during the window")
	case s1.dials != 1:
		return p, fmt.Errorf("peerbench: %d dials, want 1", s1.dials)
	case s1.empty-s0.empty != p.visits || s1.other != 0:
		return p, fmt.Errorf("peerbench: %d of %d visits empty consumer-info visits, %d other results",
			s1.empty-s0.empty, p.visits, s1.other)
	}

	stop()
	running = false
	if err := <-done; err != nil {
		return p, fmt.Errorf("peerbench: Run: %w", err)
	}
	trig.Close()
	return p, settle(ctx, &p, base)
}

// rateCheck is one window in which an installation of the small number
// of bindings and one of trigger.MaxBindings ran side by side, each with
// its own Run and connection, under the same load.
type rateCheck struct {
	poll   time.Duration
	window time.Duration
	visits [2]uint64 // Monitor steps: small, large
	reqs   [2]int64  // broker: messages in from each connection
}

func (c rateCheck) perSecond(i int) float64 { return float64(c.reqs[i]) / c.window.Seconds() }

// rates runs the small and the large installation side by side for the
// window: whatever delays the one timer's wake-ups (the machine's load)
// delays both alike, so their request rates compare directly.
func (r *idleRun) rates(ctx context.Context, poll time.Duration) (c rateCheck, err error) {
	c.poll = poll
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var runErrs [2]error
	var trigs []*trigger.Triggers
	defer func() {
		stop()
		wg.Wait()
		for _, t := range trigs {
			t.Close()
		}
		err = errors.Join(err, runErrs[0], runErrs[1])
	}()
	var mons [2]*trigger.Monitor
	var cids [2]uint64
	for i, n := range []int{r.o.small, trigger.MaxBindings} {
		trig, mon, err := r.install(n, poll, fmt.Sprintf("idle-rate-%d-%dms", n, poll.Milliseconds()))
		if err != nil {
			return c, err
		}
		trigs = append(trigs, trig)
		mons[i] = mon
		wg.Go(func() { runErrs[i] = trig.Run(runCtx, r.env.host) })
		// The connection dialled first is the small installation's.
		if err := waitUntil(ctx, "first visit", func() (bool, error) { return mon.Snapshot().Totals.Empty > 0, nil }); err != nil {
			return c, err
		}
		cs, err := r.env.conns(ctx, trigger.ClientName)
		if err != nil {
			return c, err
		}
		for _, x := range cs {
			if i == 0 || x.CID != cids[0] {
				cids[i] = x.CID
			}
		}
		if len(cs) != i+1 || cids[i] == 0 {
			return c, fmt.Errorf("peerbench: broker sees %d runtime connections, want %d", len(cs), i+1)
		}
	}
	read := func() ([2]uint64, [2]int64, error) {
		var v [2]uint64
		var q [2]int64
		for i, m := range mons {
			v[i] = m.Snapshot().Steps
		}
		cs, err := r.env.conns(ctx, trigger.ClientName)
		if err != nil {
			return v, q, err
		}
		for _, x := range cs {
			for i := range cids {
				if x.CID == cids[i] {
					q[i] = x.InMsgs
				}
			}
		}
		return v, q, nil
	}
	c0 := [2]counts{monCounts(mons[0]), monCounts(mons[1])}
	v0, q0, err := read()
	if err != nil {
		return c, err
	}
	t0 := time.Now()
	if err := sleep(ctx, r.o.window); err != nil {
		return c, err
	}
	v1, q1, err := read()
	if err != nil {
		return c, err
	}
	c.window = time.Since(t0)
	for i := range 2 {
		c.visits[i], c.reqs[i] = v1[i]-v0[i], q1[i]-q0[i]
		c1 := monCounts(mons[i])
		switch {
		case q1[i] == 0 || c1.dials != 1:
			return c, errors.New("peerbench: a runtime connection was replaced during the window")
		case c1.other != 0 || c1.empty-c0[i].empty < c.visits[i]:
			return c, fmt.Errorf("peerbench: not every visit was an empty consumer-info visit (%d other results)", c1.other)
		}
	}
	return c, nil
}

// steps times r.o.visits explicit Steps of an installation of n empty
// bindings after one untimed lap (which dials the connection and builds
// each binding's pull state on its first visit).
func (r *idleRun) steps(ctx context.Context, n int) (emptyVisits, error) {
	v := emptyVisits{n: n, steps: r.o.visits}
	trig, _, err := r.install(n, pollFast, fmt.Sprintf("idle-steps-%d", n))
	if err != nil {
		return v, err
	}
	defer trig.Close()
	defer trig.CloseIdle()
	lat := make([]time.Duration, r.o.visits)
	ctx, cancel := context.WithTimeout(ctx, r.o.window+settleBound)
	defer cancel()
	for i := range n {
		if rep, err := trig.Step(ctx, r.env.host); err != nil || rep.Result != trigger.ResultEmpty {
			return v, fmt.Errorf("peerbench: untimed Step %d: %v, %w", i+1, rep.Result, err)
		}
	}
	c0, err := r.env.oneConn(ctx, trigger.ClientName)
	if err != nil {
		return v, err
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	u0, k0 := cpuTime()
	prev := time.Now()
	for i := range lat {
		rep, err := trig.Step(ctx, r.env.host)
		if err != nil || rep.Result != trigger.ResultEmpty {
			return v, fmt.Errorf("peerbench: Step %d: %v, %w", i+1, rep.Result, err)
		}
		now := time.Now()
		lat[i], prev = now.Sub(prev), now
	}
	u1, k1 := cpuTime()
	runtime.ReadMemStats(&m1)
	c1, err := r.env.oneConn(ctx, trigger.ClientName)
	if err != nil {
		return v, err
	}
	slices.Sort(lat)
	v.p50, v.p99 = percentile(lat, 50), percentile(lat, 99)
	v.reqs, v.replies = c1.InMsgs-c0.InMsgs, c1.OutMsgs-c0.OutMsgs
	v.mallocs, v.bytes = m1.Mallocs-m0.Mallocs, m1.TotalAlloc-m0.TotalAlloc
	v.cpu = u1 - u0 + k1 - k0
	return v, nil
}

// warm runs each client once, untimed, so that what either allocates once
// per process (the TLS and x509 state of a first handshake, tables built
// on first use) is in every phase's baseline: one installation of every
// binding with one Step, and one nats.go connection with one Consume.
func (r *idleRun) warm(ctx context.Context) error {
	trig, _, err := r.install(trigger.MaxBindings, pollFast, "idle-warm")
	if err != nil {
		return err
	}
	rep, err := trig.Step(ctx, r.env.host)
	trig.CloseIdle()
	trig.Close()
	if err != nil || rep.Result != trigger.ResultEmpty {
		return fmt.Errorf("peerbench: Step: %v, %w", rep.Result, err)
	}
	nc, err := r.env.dialNatsIdle("peerbench-natsgo-warm", func(error) {})
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	cons, err := js.Consumer(cctx, idleStream, idleConsumer(0))
	if err != nil {
		return err
	}
	cc, err := cons.Consume(func(jetstream.Msg) {})
	if err != nil {
		return err
	}
	if err := nc.FlushTimeout(adminTimeout); err != nil {
		return err
	}
	return stopConsumers(ctx, []jetstream.ConsumeContext{cc})
}

// natsgo runs n idiomatic nats.go pull consumers idle for the window:
// one connection, jetstream.New, Consumer and Consume with the default
// options for each.
func (r *idleRun) natsgo(ctx context.Context, n int) (p phase, err error) {
	p = phase{client: "nats.go", n: n}
	name := fmt.Sprintf("peerbench-natsgo-%d", n)
	var mu sync.Mutex
	var asyncErrs []error
	record := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if len(asyncErrs) < 8 {
			asyncErrs = append(asyncErrs, err)
		}
	}
	var delivered atomic.Int64
	handler := func(jetstream.Msg) { delivered.Add(1) }
	ccs := make([]jetstream.ConsumeContext, 0, n)

	base := sampleProc(true)
	nc, err := r.env.dialNatsIdle(name, record)
	if err != nil {
		return p, err
	}
	defer func() {
		if nc != nil {
			err = errors.Join(err, stopConsumers(ctx, ccs))
			nc.Close()
		}
	}()
	js, err := jetstream.New(nc)
	if err != nil {
		return p, err
	}
	for i := range n {
		cctx, cancel := context.WithTimeout(ctx, adminTimeout)
		cons, err := js.Consumer(cctx, idleStream, idleConsumer(i))
		cancel()
		if err != nil {
			return p, err
		}
		cc, err := cons.Consume(handler)
		if err != nil {
			return p, err
		}
		ccs = append(ccs, cc)
	}
	// The PING after the pulls returns once the broker has read them.
	if err := nc.FlushTimeout(adminTimeout); err != nil {
		return p, err
	}

	c0, err := r.env.oneConn(ctx, name)
	if err != nil {
		return p, err
	}
	v0, err := r.env.varz(ctx)
	if err != nil {
		return p, err
	}
	st0 := nc.Stats()
	m0 := sampleProc(false).mallocs
	u0, k0 := cpuTime()
	t0 := time.Now()
	if err := r.window(ctx, &p, base); err != nil {
		return p, err
	}
	c1, err := r.env.oneConn(ctx, name)
	if err != nil {
		return p, err
	}
	v1, err := r.env.varz(ctx)
	if err != nil {
		return p, err
	}
	st1 := nc.Stats()
	m1 := sampleProc(false).mallocs
	u1, k1 := cpuTime()
	p.window = time.Since(t0)
	held(&p, base)

	p.reqs, p.replies = c1.InMsgs-c0.InMsgs, c1.OutMsgs-c0.OutMsgs
	p.varzIn = v1.InMsgs - v0.InMsgs
	p.clientOut = st1.OutMsgs - st0.OutMsgs
	p.cpu = u1 - u0 + k1 - k0
	p.mallocs = m1 - m0
	err = r.env.withAdmin(ctx, idleNatsTenant, func(ctx context.Context, a *admin) error {
		for i := range n {
			var c counters
			if err := a.api(ctx, "$JS.API.CONSUMER.INFO."+idleStream+"."+idleConsumer(i), nil, &c); err != nil {
				return err
			}
			p.held += c.NumWaiting
		}
		return nil
	})
	if err != nil {
		return p, err
	}

	err = stopConsumers(ctx, ccs)
	nc.Close()
	nc = nil
	mu.Lock()
	errs := errors.Join(asyncErrs...)
	mu.Unlock()
	switch {
	case err != nil:
		return p, err
	case errs != nil:
		return p, fmt.Errorf("peerbench: nats.go reported: %w", errs)
	case delivered.Load() != 0:
		return p, fmt.Errorf("peerbench: %d messages delivered to empty consumers", delivered.Load())
	}
	return p, settle(ctx, &p, base)
}

// stopConsumers stops every Consume and waits for each to finish.
func stopConsumers(ctx context.Context, ccs []jetstream.ConsumeContext) error {
	for _, cc := range ccs {
		cc.Stop()
	}
	ctx, cancel := context.WithTimeout(ctx, settleBound)
	defer cancel()
	for _, cc := range ccs {
		select {
		case <-cc.Closed():
		case <-ctx.Done():
			return errors.New("peerbench: a nats.go Consume did not stop in time")
		}
	}
	return nil
}
