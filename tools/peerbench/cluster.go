package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/tools/broker"
)

// Bounds of the cluster comparison's own flags.
const (
	maxClusterEmpty = 5000
	maxClusterHeld  = 200
	minClusterIdle  = time.Second
	maxClusterIdle  = time.Minute
)

// clusterOptions are the flags of -mode cluster beside those of -mode
// pull (-rounds, -steps, -warmup, -round-time, -storage, -server,
// -thread-socket), which it shares.
type clusterOptions struct {
	nodes  int
	leader string
	empty  int
	held   int
	idle   time.Duration
}

// clusterFlags registers the flags of -mode cluster on fs.
func clusterFlags(fs *flag.FlagSet) *clusterOptions {
	o := &clusterOptions{}
	fs.IntVar(&o.nodes, "cluster", broker.DefaultClusterSize, "cluster: nodes of the cluster, and the replicas of the stream and every consumer")
	fs.StringVar(&o.leader, "cluster-leader", "remote", `cluster: "remote": the stream and every consumer are led by a node other than the one the connections are pinned to; "local": by that node`)
	fs.IntVar(&o.empty, "cluster-empty", 1000, "cluster: visits per round to each empty consumer that consumer info proves empty")
	fs.IntVar(&o.held, "cluster-held", 0, "cluster: held pulls (100 ms each) per round to an empty consumer, of each client; this project's shares its connection with the other loops, and a held pull answered later than its bound (100 ms and jspull.DefaultNextMargin) closes it")
	fs.DurationVar(&o.idle, "cluster-idle", 5*time.Second, "cluster: window in which nothing runs, before and after the rounds, to read the nodes' background CPU")
	return o
}

func (o *clusterOptions) validate() error {
	switch {
	case o.nodes < broker.MinClusterSize || o.nodes > broker.MaxClusterSize:
		return fmt.Errorf("peerbench: -cluster must be %d..%d", broker.MinClusterSize, broker.MaxClusterSize)
	case o.leader != "remote" && o.leader != "local":
		return errors.New(`peerbench: -cluster-leader must be "remote" or "local"`)
	case o.empty < 1 || o.empty > maxClusterEmpty:
		return fmt.Errorf("peerbench: -cluster-empty must be 1..%d", maxClusterEmpty)
	case o.held < 0 || o.held > maxClusterHeld:
		return fmt.Errorf("peerbench: -cluster-held must be 0..%d", maxClusterHeld)
	case o.idle < minClusterIdle || o.idle > maxClusterIdle:
		return fmt.Errorf("peerbench: -cluster-idle must be %v..%v", minClusterIdle, maxClusterIdle)
	}
	return nil
}

// cpuLoop is a loop with the broker CPU its measured visits cost, per
// node, summed over the rounds.
type cpuLoop struct {
	*loop
	node []time.Duration
	wall time.Duration
}

// run measures round r and reads every node's CPU around it.
func (l *cpuLoop) run(ctx context.Context, w io.Writer, r int, bound time.Duration, pids []int) error {
	b0, err := brokerCPU(pids)
	if err != nil {
		return err
	}
	if err := l.loop.run(ctx, w, r, bound); err != nil {
		return err
	}
	b1, err := brokerCPU(pids)
	if err != nil {
		return err
	}
	s := l.samples[len(l.samples)-1]
	l.wall += s.wall
	if l.node == nil {
		l.node = make([]time.Duration, len(pids))
	}
	var total time.Duration
	for i := range pids {
		l.node[i] += b1[i] - b0[i]
		total += b1[i] - b0[i]
	}
	fmt.Fprintf(w, "        %-13s broker cpu %v over %d visits\n", l.name, total, s.steps)
	return nil
}

// visits is the measured visits over every round.
func (l *cpuLoop) visits() int {
	n := 0
	for _, s := range l.samples {
		n += s.steps
	}
	return n
}

// background is the nodes' CPU per second while nothing runs.
type background struct {
	node   []time.Duration // per node over the windows
	window time.Duration
}

// perSecond is the nodes' total background CPU per second of wall time.
func (b background) perSecond() float64 {
	if b.window <= 0 {
		return 0
	}
	var t time.Duration
	for _, d := range b.node {
		t += d
	}
	return float64(t) / b.window.Seconds()
}

// idleWindow adds one window in which nothing runs to b.
func (b *background) idleWindow(ctx context.Context, d time.Duration, pids []int) error {
	b0, err := brokerCPU(pids)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := sleep(ctx, d); err != nil {
		return err
	}
	b1, err := brokerCPU(pids)
	if err != nil {
		return err
	}
	b.window += time.Since(t0)
	if b.node == nil {
		b.node = make([]time.Duration, len(pids))
	}
	for i := range pids {
		b.node[i] += b1[i] - b0[i]
	}
	return nil
}

// runCluster runs -mode cluster and writes its raw lines and tables to w.
//
// The pull comparison on a cluster of co.nodes pinned nats-servers
// (tools/broker StartCluster: routes on 127.0.0.1, handshake-first TLS,
// operator mode, one tenant), the stream and every consumer with
// co.nodes replicas and file or memory storage. Every measured connection
// is pinned to node 0; the stream and every consumer are led by node 1
// (-cluster-leader remote, so each request crosses a route, as it does for
// a tenant pinned to a node that leads nothing) or by node 0 (local). The
// loops are -mode pull's, adapted to a replicated consumer: latent is
// jspull.Consumer's Inspect, Next and verified +ACK; core answers the
// pull's leading "409 Batch Completed" by reading on until the message
// (coreFollowLoop); jetstream fetches without max_bytes (jsClusterLoop).
// The empty visits are one consumer-info request each, as each client
// makes it. Around every loop of every round it reads each node's CPU
// time (/proc/<pid>/stat), and before and after the rounds it reads the
// nodes' background CPU in a window where nothing runs, so that each
// loop's broker CPU per visit is given raw and net of that background.
// Loops and rounds are bounded as in -mode pull; afterwards the consumers'
// counters are checked, and every node is stopped and its directory
// removed.
func runCluster(ctx context.Context, o pullOptions, co clusterOptions, w io.Writer) (err error) {
	o.host = 0
	if err := o.validate(); err != nil {
		return err
	}
	if err := co.validate(); err != nil {
		return err
	}
	perLoop := o.rounds*o.steps + o.warmup
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\ncpus: %d\ngo: %s\nnats.go: %s\nnats-server: %s\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), nats.Version, broker.ServerVersion)
	fmt.Fprintf(w, "cluster of %d nodes (each GOMAXPROCS=1), stream and consumers R%d, %s storage, leaders %s\n",
		co.nodes, co.nodes, o.storage, co.leader)
	fmt.Fprintf(w, "rounds %d, %d visits per loop per round, %d warmup, %d empty visits and %d held pulls of each kind per round, %d-byte payloads\n",
		o.rounds, o.steps, o.warmup, co.empty, co.held, payloadSize)
	fmt.Fprintf(w, "load average before: %s\n", loadAvg())

	setup := time.Now()
	env, err := startClusterEnv(ctx, o, co, perLoop)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, env.close()) }()
	fmt.Fprintf(w, "cluster started, leaders placed, %d messages published per loop in %v\n", perLoop, time.Since(setup).Round(time.Millisecond))
	fmt.Fprintf(w, "connections pinned to %s; stream and consumers led by %s; broker pids %v\n", env.pin.Name(), env.lead.Name(), env.pids)

	// The pull gets the bound nats.go's loops give every operation
	// (opBound): on a loaded cluster a delivering pull's answer can take
	// longer than the 100 ms expiry and jspull.DefaultNextMargin, and the
	// connection is closed when its deadline passes.
	popts := jspull.Options{NextMargin: opBound - jspull.RequestExpires}
	fmt.Fprintf(w, "this project's pull bound: %v (jspull.Options.NextMargin %v; the default is %v)\n",
		opBound, popts.NextMargin, jspull.DefaultNextMargin)
	latentC, err := jspull.NewConsumer(binding(loopLatent), popts)
	if err != nil {
		return err
	}
	emptyC, err := jspull.NewConsumer(binding(loopEmpty), popts)
	if err != nil {
		return err
	}
	core, err := newCoreFollowLoop(env.core, binding(loopCore), latentC.NextBody())
	if err != nil {
		return err
	}
	js, err := newJSLoop(ctx, env.js, binding(loopJetStream))
	if err != nil {
		return err
	}
	jsEmpty, err := newJSLoop(ctx, env.js, binding(loopEmptyJS))
	if err != nil {
		return err
	}
	wrap := func(l *loop) *cpuLoop { return &cpuLoop{loop: l} }
	latent := &latentRetryLoop{latentLoop: latentLoop{c: env.latent, p: latentC}}
	jsl := &jsClusterLoop{jsLoop: *js}
	loops := []*cpuLoop{
		wrap(newLoop("latent", latent, o.steps, o.rounds)),
		wrap(newLoop("core", core, o.steps, o.rounds)),
		wrap(newLoop("jetstream", jsl, o.steps, o.rounds)),
	}
	empties := []*cpuLoop{
		wrap(newLoop("empty/latent", &emptyInspect{latentLoop{c: env.latent, p: emptyC}}, co.empty, o.rounds)),
		wrap(newLoop("empty/core", &emptyCoreInfo{*newCoreLoop(env.core, binding(loopEmptyCore), nil)}, co.empty, o.rounds)),
		wrap(newLoop("empty/js", &emptyJSInfo{*jsEmpty}, co.empty, o.rounds)),
	}
	var held []*cpuLoop
	if co.held > 0 {
		held = []*cpuLoop{
			wrap(newLoop("held/latent", &emptyPull{latentLoop{c: env.latent, p: emptyC}}, co.held, o.rounds)),
			wrap(newLoop("held/js", &emptyJSFetch{*jsEmpty}, co.held, o.rounds)),
		}
	}

	if o.warmup > 0 {
		buf := make([]time.Duration, o.warmup)
		for _, l := range append(append([]*cpuLoop(nil), loops...), empties...) {
			s, err := measureLoop(ctx, l.s, o.warmup, o.roundTime, buf)
			l.warm = s.steps // counted by verifyCounters for the message loops
			if err != nil {
				return fmt.Errorf("peerbench: warmup %s: %w", l.name, err)
			}
		}
	}
	var bg background
	if err := bg.idleWindow(ctx, co.idle, env.pids); err != nil {
		return err
	}
	for r := range o.rounds {
		for _, group := range [][]*cpuLoop{loops, empties, held} {
			for i := range group {
				l := group[(i+r)%len(group)]
				if err := l.run(ctx, w, r, o.roundTime, env.pids); err != nil {
					return err
				}
			}
		}
	}
	if err := bg.idleWindow(ctx, co.idle, env.pids); err != nil {
		return err
	}
	fmt.Fprintf(w, "load average after: %s\n", loadAvg())
	fmt.Fprintf(w, "pulls that expired empty although consumer info counted a message, pulled again in the same visit: latent %d, core %d, jetstream %d\n",
		latent.expired, core.expired, jsl.expired)
	plain := make([]*loop, len(loops))
	for i, l := range loops {
		plain[i] = l.loop
	}
	if err := verifyCounters(ctx, env.admin, perLoop, plain); err != nil {
		return err
	}
	if err := verifyEmpty(ctx, env.admin); err != nil {
		return err
	}
	fmt.Fprintln(w, "verified: every visit delivered and acknowledged exactly one message; the empty consumers delivered nothing; no ack pending, no request waiting")
	printClusterReport(w, env, bg, loops, empties, held)
	return nil
}

// verifyEmpty checks that the empty consumers delivered nothing and hold
// no request.
func verifyEmpty(ctx context.Context, a *admin) error {
	var errs []error
	for _, n := range []loopName{loopEmpty, loopEmptyCore, loopEmptyJS} {
		c, err := a.counters(ctx, n)
		if err != nil {
			return err
		}
		if c.Delivered.ConsumerSeq != 0 || c.NumAckPending != 0 || c.NumPending != 0 {
			errs = append(errs, fmt.Errorf("peerbench: empty consumer %s after the run: %+v", n, c))
		}
	}
	return errors.Join(errs...)
}

// brokerPerVisit is l's broker CPU per visit over every node, raw and net
// of the background rate over its wall time.
func brokerPerVisit(l *cpuLoop, bg background) (raw, net time.Duration) {
	v := l.visits()
	if v == 0 {
		return 0, 0
	}
	var t time.Duration
	for _, d := range l.node {
		t += d
	}
	bgPart := time.Duration(bg.perSecond() * l.wall.Seconds())
	return t / time.Duration(v), (t - bgPart) / time.Duration(v)
}

// nodeShares is l's broker CPU per visit on each node, raw.
func nodeShares(l *cpuLoop, names []string) string {
	v := l.visits()
	parts := make([]string, len(l.node))
	for i, d := range l.node {
		parts[i] = fmt.Sprintf("%s %v", names[i], us(d/time.Duration(max(v, 1))))
	}
	return strings.Join(parts, ", ")
}

// printClusterReport writes the summary tables in the form
// docs/BENCHMARKS.md uses.
func printClusterReport(w io.Writer, env *clusterEnv, bg background, loops, empties, held []*cpuLoop) {
	names := make([]string, env.cl.Size())
	for i, b := range env.cl.Nodes() {
		role := "follower"
		switch {
		case b == env.pin && b == env.lead:
			role = "pinned, leader"
		case b == env.pin:
			role = "pinned"
		case b == env.lead:
			role = "leader"
		}
		names[i] = fmt.Sprintf("n%d (%s)", i, role)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "broker background while nothing runs: %.1f ms CPU per second over the %d nodes (%v of windows); broker CPU is read from /proc/<pid>/stat utime+stime (10 ms ticks) of every node around each loop\n",
		bg.perSecond()/float64(time.Millisecond), len(env.pids), bg.window.Round(time.Millisecond))
	table := func(title string, ls []*cpuLoop) {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "| %s | visits | steps/s | p50 | p99 | client CPU/visit | broker CPU/visit, all nodes | net of background |\n", title)
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
		for _, l := range ls {
			s := summarize(l.samples)
			raw, net := brokerPerVisit(l, bg)
			fmt.Fprintf(w, "| %s | %d | %.0f | %v | %v | %v | %v | %v |\n",
				l.name, s.steps, s.rate, us(s.p50), us(s.p99), us(s.cpu), us(raw), us(net))
		}
		fmt.Fprintln(w)
		for _, l := range ls {
			fmt.Fprintf(w, "%s broker CPU per visit by node: %s\n", l.name, nodeShares(l, names))
		}
	}
	table("R3 loop, one delivering visit", loops)
	lat, core, js := loops[0].loop, loops[1].loop, loops[2].loop
	fmt.Fprintf(w, "\nsteps/s ratios, median of the rounds' ratios: latent/core %.2fx (rounds %s), latent/jetstream %.2fx (rounds %s)\n",
		medianFloat(roundRatios(lat, core)), joinFloats(roundRatios(lat, core), 2),
		medianFloat(roundRatios(lat, js)), joinFloats(roundRatios(lat, js), 2))
	ratio := func(a, b *cpuLoop) string {
		ra, na := brokerPerVisit(a, bg)
		rb, nb := brokerPerVisit(b, bg)
		if ra <= 0 || rb <= 0 || na <= 0 || nb <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.2fx raw, %.2fx net", float64(rb)/float64(ra), float64(nb)/float64(na))
	}
	fmt.Fprintf(w, "broker CPU per delivering visit, other/latent: core %s, jetstream %s\n", ratio(loops[0], loops[1]), ratio(loops[0], loops[2]))
	table("R3 empty consumer, one visit that consumer info proves empty", empties)
	fmt.Fprintf(w, "\nbroker CPU per empty visit, other/latent: core %s, jetstream %s\n", ratio(empties[0], empties[1]), ratio(empties[0], empties[2]))
	if len(held) == 2 {
		table("R3 empty consumer, one held pull (100 ms expiry)", held)
		fmt.Fprintf(w, "\nbroker CPU per held pull, held/latent-inspect: latent pull %s, jetstream Fetch %s\n", ratio(empties[0], held[0]), ratio(empties[0], held[1]))
	}
}
