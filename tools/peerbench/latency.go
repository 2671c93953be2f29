package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// Bounds of the latency comparison's flags.
const (
	maxLatRate   = 200
	minLatWindow = time.Second
	maxLatWindow = time.Minute
	// latDrainSlack is added to twice a configuration's lap (bindings times
	// poll interval) to bound the wait for its last activation.
	latDrainSlack = 15 * time.Second
	// latSeed seeds the choice of each event's binding, the same in every
	// configuration and for both clients.
	latSeed = 12
	// latSplit is the number of installations the largest configuration is
	// also split into, side by side.
	latSplit = 4
)

// latencyOptions are the flags of -mode latency.
type latencyOptions struct {
	rate   int
	window time.Duration
}

// latencyFlags registers the flags of -mode latency on fs.
func latencyFlags(fs *flag.FlagSet) *latencyOptions {
	o := &latencyOptions{}
	fs.IntVar(&o.rate, "lat-rate", 50, "latency: events published per second in each configuration")
	fs.DurationVar(&o.window, "lat-time", 4*time.Second, "latency: how long each configuration publishes")
	return o
}

func (o *latencyOptions) validate() error {
	switch {
	case o.rate < 1 || o.rate > maxLatRate:
		return fmt.Errorf("peerbench: -lat-rate must be 1..%d", maxLatRate)
	case o.window < minLatWindow || o.window > maxLatWindow:
		return fmt.Errorf("peerbench: -lat-time must be %v..%v", minLatWindow, maxLatWindow)
	}
	return nil
}

// events records, for each published event, when its publication was sent
// and when it was first activated (by the host function or nats.go's
// handler).
type events struct {
	mu     sync.Mutex
	sent   []time.Time
	lat    []time.Duration // -1 until activated
	done   int
	repeat int // activations of an event already activated
	bad    int // payloads that name no published event
}

func newEvents(n int) *events {
	e := &events{sent: make([]time.Time, n), lat: make([]time.Duration, n)}
	for i := range e.lat {
		e.lat[i] = -1
	}
	return e
}

func (e *events) published(k int, at time.Time) {
	e.mu.Lock()
	e.sent[k] = at
	e.mu.Unlock()
}

// activated records event k's activation now; k comes from the payload.
func (e *events) activated(k string) {
	now := time.Now()
	i, err := strconv.Atoi(k)
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case err != nil || i < 0 || i >= len(e.sent) || e.sent[i].IsZero():
		e.bad++
	case e.lat[i] >= 0:
		e.repeat++
	default:
		e.lat[i] = now.Sub(e.sent[i])
		e.done++
	}
}

func (e *events) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.done
}

// latResult is one configuration's latencies.
type latResult struct {
	label         string
	n             int
	poll          time.Duration // 0 for nats.go
	split         int           // installations (latent)
	events        int
	p50, p99, max time.Duration
	repeat, bad   int
	drain         time.Duration // from the last publication to the last activation
}

// latencyRun is one run of the comparison.
type latencyRun struct {
	o     latencyOptions
	env   *idleEnv
	pools *trigger.Pools
	w     io.Writer
}

// runLatency runs -mode latency and writes its raw lines and table to w.
//
// Event latency from publication to activation on one pinned nats-server
// (R1 memory streams, -mode idle's broker, accounts and consumers): for
// 16, 64 and 256 bindings at poll intervals of 10 and 100 ms (and 256
// bindings split into latSplit installations, each with its own Run),
// then nats.go's Consume() on 16, 64 and 256 consumers of one connection.
// Each configuration publishes o.rate events per second for o.window,
// each to a binding chosen by a seeded generator, each publication
// acknowledged by the stream; an event's latency is from just before its
// publication is sent to the call of the host function (or nats.go's
// handler), both read from this process's monotonic clock. The wait for
// the last activation is bounded by twice the lap (bindings per
// installation times the poll interval) plus latDrainSlack; every event
// must be activated exactly once.
func runLatency(ctx context.Context, o latencyOptions, server string, w io.Writer) (err error) {
	if err := o.validate(); err != nil {
		return err
	}
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\ncpus: %d\ngo: %s\nnats.go: %s\nnats-server: %s\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), nats.Version, broker.ServerVersion)
	fmt.Fprintf(w, "one broker (R1, memory streams); each configuration publishes %d events/s for %v to bindings chosen at random (seed %d)\n",
		o.rate, o.window, latSeed)
	fmt.Fprintf(w, "load average before: %s\n", loadAvg())
	env, err := startIdleEnv(ctx, server)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, env.close()) }()
	pools, err := trigger.NewPools(trigger.PoolConfig{Limits: trigger.DefaultPoolLimits()})
	if err != nil {
		return err
	}
	defer pools.Close()
	r := &latencyRun{o: o, env: env, pools: pools, w: w}
	var results []latResult
	add := func(res latResult, err error) error {
		if err != nil {
			return fmt.Errorf("peerbench: %s: %w", res.label, err)
		}
		fmt.Fprintf(w, "%-40s %4d events p50 %-10v p99 %-10v max %-10v drain %v\n",
			res.label, res.events, ms(res.p50), ms(res.p99), ms(res.max), ms(res.drain))
		results = append(results, res)
		return nil
	}
	for _, poll := range idlePolls() {
		for _, n := range []int{16, 64, trigger.MaxBindings} {
			if err := add(r.latent(ctx, n, poll, 1)); err != nil {
				return err
			}
		}
		if err := add(r.latent(ctx, trigger.MaxBindings, poll, latSplit)); err != nil {
			return err
		}
	}
	for _, n := range []int{16, 64, trigger.MaxBindings} {
		if err := add(r.natsgo(ctx, n)); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "load average after: %s\n", loadAvg())
	printLatencyReport(w, results)
	return nil
}

// ms rounds d to 0.1 ms for printing.
func ms(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }

// latHost is a reference host whose one function records the event its
// argument names.
func latHost(ev *events, slots int) (*refhost.Host, error) {
	h, err := refhost.New(refhost.Config{MaxActivations: slots, MaxInputBytes: slots * idlePayloadCeiling})
	if err != nil {
		return nil, err
	}
	err = h.Register(refhost.Function{
		Service: idleService, Revision: "r1", Contract: idleContract, Name: idleFunction,
		Params: []refhost.Type{refhost.String()},
		Func: func(_ context.Context, c refhost.Call) error {
			s, _ := c.Args[0].(string)
			ev.activated(s)
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	if err := h.Publish(refhost.PublicationKey{Service: idleService, Contract: idleContract, Function: idleFunction}); err != nil {
		return nil, err
	}
	if _, err := h.SetRoute(idleService, "", "r1"); err != nil {
		return nil, err
	}
	return h, nil
}

// publish sends rate events per second for the window to the first n
// consumers' subjects of tenant's stream, each binding chosen at random,
// each publication acknowledged by the stream, and returns when the last
// was sent.
func (r *latencyRun) publish(ctx context.Context, tenant string, n int, ev *events) (time.Time, error) {
	var last time.Time
	err := r.env.withAdmin(ctx, tenant, func(ctx context.Context, a *admin) error {
		rng := rand.New(rand.NewPCG(latSeed, uint64(n)))
		tick := time.NewTicker(time.Second / time.Duration(r.o.rate))
		defer tick.Stop()
		for k := range len(ev.sent) {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-tick.C:
			}
			subject := idleSubjectPrefix + strconv.Itoa(rng.IntN(n))
			payload := []byte(`["` + strconv.Itoa(k) + `"]`)
			last = time.Now()
			ev.published(k, last)
			reply, err := a.request(ctx, subject, payload)
			if err != nil {
				return err
			}
			if len(reply) == 0 {
				return errors.New("peerbench: publish: empty stream acknowledgement")
			}
		}
		return nil
	})
	return last, err
}

// wait waits until every event was activated, at most bound.
func wait(ctx context.Context, ev *events, bound time.Duration) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	tick := time.NewTicker(settleTick)
	defer tick.Stop()
	for ev.count() < len(ev.sent) {
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("peerbench: %d of %d events activated within %v", ev.count(), len(ev.sent), bound)
		case <-tick.C:
		}
	}
	return time.Now(), nil
}

// result summarises ev.
func result(res latResult, ev *events, lastSent, lastDone time.Time) (latResult, error) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	lat := slices.Sorted(slices.Values(ev.lat))
	res.events = len(lat)
	res.p50, res.p99, res.max = percentile(lat, 50), percentile(lat, 99), lat[len(lat)-1]
	res.repeat, res.bad = ev.repeat, ev.bad
	res.drain = lastDone.Sub(lastSent)
	if ev.bad != 0 || ev.repeat != 0 {
		return res, fmt.Errorf("peerbench: %d unknown and %d repeated activations", ev.bad, ev.repeat)
	}
	return res, nil
}

// latent installs n bindings as split installations of n/split bindings
// each, runs each with its own Run, publishes and waits for every
// activation.
func (r *latencyRun) latent(ctx context.Context, n int, poll time.Duration, split int) (res latResult, err error) {
	res = latResult{n: n, poll: poll, split: split}
	res.label = fmt.Sprintf("latent  %3d bindings, poll %v", n, poll)
	if split > 1 {
		res.label = fmt.Sprintf("latent  %3d bindings as %d x %d, poll %v", n, split, n/split, poll)
	}
	ev := newEvents(r.o.rate * int(r.o.window/time.Second))
	host, err := latHost(ev, split)
	if err != nil {
		return res, err
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	runErrs := make([]error, split)
	var trigs []*trigger.Triggers
	defer func() {
		stop()
		wg.Wait()
		for _, t := range trigs {
			t.Close()
		}
		err = errors.Join(append([]error{err}, runErrs...)...)
	}()
	per := n / split
	for i := range split {
		cfg := r.env.cfg.Clone()
		cfg.Bindings = cfg.Bindings[i*per : (i+1)*per]
		cfg.PollIntervalMS = int(poll / time.Millisecond)
		id := fmt.Sprintf("lat-%d-%dms-%d-%d", n, poll.Milliseconds(), split, i)
		trig, mon, err := trigger.Install(r.pools, trigger.Installation{LogicalID: id, Epoch: 1, Config: cfg, Credentials: r.env.creds})
		if err != nil {
			return res, err
		}
		trigs = append(trigs, trig)
		wg.Go(func() { runErrs[i] = trig.Run(runCtx, host) })
		if err := waitUntil(ctx, "first visit", func() (bool, error) { return mon.Snapshot().Steps > 0, nil }); err != nil {
			return res, err
		}
	}
	lastSent, err := r.publish(ctx, idleLatentTenant, n, ev)
	if err != nil {
		return res, err
	}
	lap := time.Duration(per) * poll
	lastDone, err := wait(ctx, ev, 2*lap+latDrainSlack)
	if err != nil {
		return res, err
	}
	return result(res, ev, lastSent, lastDone)
}

// natsgo runs n nats.go consumers with Consume (default options, each
// message acknowledged in the handler) on one connection, publishes and
// waits for every delivery.
func (r *latencyRun) natsgo(ctx context.Context, n int) (res latResult, err error) {
	res = latResult{n: n, label: fmt.Sprintf("nats.go %3d consumers, Consume()", n)}
	ev := newEvents(r.o.rate * int(r.o.window/time.Second))
	var mu sync.Mutex
	var asyncErrs []error
	nc, err := r.env.dialNatsIdle(fmt.Sprintf("peerbench-natsgo-lat-%d", n), func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if len(asyncErrs) < 8 {
			asyncErrs = append(asyncErrs, err)
		}
	})
	if err != nil {
		return res, err
	}
	var ccs []jetstream.ConsumeContext
	defer func() {
		err = errors.Join(err, stopConsumers(ctx, ccs))
		nc.Close()
		mu.Lock()
		err = errors.Join(append([]error{err}, asyncErrs...)...)
		mu.Unlock()
	}()
	js, err := jetstream.New(nc)
	if err != nil {
		return res, err
	}
	handler := func(m jetstream.Msg) {
		data := m.Data()
		if len(data) > 4 {
			ev.activated(string(data[2 : len(data)-2]))
		} else {
			ev.activated("")
		}
		_ = m.Ack()
	}
	for i := range n {
		cctx, cancel := context.WithTimeout(ctx, adminTimeout)
		cons, err := js.Consumer(cctx, idleStream, idleConsumer(i))
		cancel()
		if err != nil {
			return res, err
		}
		cc, err := cons.Consume(handler)
		if err != nil {
			return res, err
		}
		ccs = append(ccs, cc)
	}
	if err := nc.FlushTimeout(adminTimeout); err != nil {
		return res, err
	}
	lastSent, err := r.publish(ctx, idleNatsTenant, n, ev)
	if err != nil {
		return res, err
	}
	lastDone, err := wait(ctx, ev, latDrainSlack)
	if err != nil {
		return res, err
	}
	return result(res, ev, lastSent, lastDone)
}

// printLatencyReport writes the table for docs/BENCHMARKS.md.
func printLatencyReport(w io.Writer, rs []latResult) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "publish (sent) to activation (the host function called, or nats.go's handler); lap = bindings per installation times the poll interval")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| client | bindings | poll | lap | events | p50 | p99 | max |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rs {
		if r.poll == 0 {
			fmt.Fprintf(w, "| nats.go Consume() | %d | - | - | %d | %v | %v | %v |\n", r.n, r.events, ms(r.p50), ms(r.p99), ms(r.max))
			continue
		}
		name := "latent"
		if r.split > 1 {
			name = fmt.Sprintf("latent, %d installations", r.split)
		}
		fmt.Fprintf(w, "| %s | %d | %v | %v | %d | %v | %v | %v |\n", name, r.n, r.poll,
			time.Duration(r.n/r.split)*r.poll, r.events, ms(r.p50), ms(r.p99), ms(r.max))
	}
}
