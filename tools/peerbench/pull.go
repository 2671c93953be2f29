package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/tools/broker"
)

// Bounds of the pull comparison's flags.
const (
	maxRounds = 20
	maxSteps  = 20000
	maxWarmup = 2000
	maxEmpty  = 200
	maxHost   = 10000
	// maxPerLoop bounds the messages published for one loop (rounds times
	// steps plus warmup): with three loops, about 50 MB of the account's
	// memory store at most.
	maxPerLoop = 40000
	minRound   = time.Second
	maxRound   = 10 * time.Minute
)

// pullOptions are the flags of -mode pull.
type pullOptions struct {
	rounds    int
	steps     int
	warmup    int
	empty     int
	host      int
	roundTime time.Duration
	storage   string
	server    string
	thread    bool
}

// pullFlags registers the flags of -mode pull on fs.
func pullFlags(fs *flag.FlagSet) *pullOptions {
	o := &pullOptions{}
	fs.IntVar(&o.rounds, "rounds", 5, "pull: rounds; each loop runs once per round, in rotated order")
	fs.IntVar(&o.steps, "steps", 2000, "pull: visits per loop per round")
	fs.IntVar(&o.warmup, "warmup", 200, "pull: unmeasured visits per loop before the first round")
	fs.IntVar(&o.empty, "empty", 20, "pull: visits to the empty consumer per round, of each kind")
	fs.IntVar(&o.host, "host", 2000, "pull: visits per message loop, after the rounds, with another goroutine's 1 ms ticker running (its lateness is reported); 0 skips")
	fs.DurationVar(&o.roundTime, "round-time", time.Minute, "pull: time bound of one loop in one round")
	fs.StringVar(&o.storage, "storage", "memory", `pull: stream storage, "memory" or "file"`)
	fs.BoolVar(&o.thread, "thread-socket", false, "pull, idle, cluster: this project's connections use the opt-in thread socket (conn.Config.ThreadSocket) instead of the Go runtime's network poller")
	fs.StringVar(&o.server, "server", "", "pull, idle: nats-server "+broker.ServerVersion+" binary (default: "+broker.EnvServer+" or the user cache)")
	return o
}

func (o *pullOptions) validate() error {
	switch {
	case o.rounds < 1 || o.rounds > maxRounds:
		return fmt.Errorf("peerbench: -rounds must be 1..%d", maxRounds)
	case o.steps < 1 || o.steps > maxSteps:
		return fmt.Errorf("peerbench: -steps must be 1..%d", maxSteps)
	case o.warmup < 0 || o.warmup > maxWarmup:
		return fmt.Errorf("peerbench: -warmup must be 0..%d", maxWarmup)
	case o.empty < 0 || o.empty > maxEmpty:
		return fmt.Errorf("peerbench: -empty must be 0..%d", maxEmpty)
	case o.host < 0 || o.host > maxHost:
		return fmt.Errorf("peerbench: -host must be 0..%d", maxHost)
	case o.rounds*o.steps+o.warmup+o.host > maxPerLoop:
		return fmt.Errorf("peerbench: rounds*steps+warmup+host must be at most %d", maxPerLoop)
	case o.roundTime < minRound || o.roundTime > maxRound:
		return fmt.Errorf("peerbench: -round-time must be %v..%v", minRound, maxRound)
	case o.storage != "memory" && o.storage != "file":
		return errors.New(`peerbench: -storage must be "memory" or "file"`)
	}
	return nil
}

// loop is one measured loop with its samples.
type loop struct {
	name    string
	s       stepper
	n       int // steps per round
	samples []sample
	warm    int               // unmeasured visits before the first round
	host    hostSample        // the visits with another goroutine's ticker running
	lat     [][]time.Duration // one buffer per round, allocated up front
}

func newLoop(name string, s stepper, n, rounds int) *loop {
	l := &loop{name: name, s: s, n: n, lat: make([][]time.Duration, rounds)}
	for i := range l.lat {
		l.lat[i] = make([]time.Duration, n)
	}
	return l
}

// runPull runs the comparison and writes its raw lines and tables to w.
func runPull(ctx context.Context, o pullOptions, w io.Writer) (err error) {
	if err := o.validate(); err != nil {
		return err
	}
	perLoop := o.rounds*o.steps + o.warmup + o.host
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\ncpus: %d\ngo: %s\nnats.go: %s\nnats-server: %s\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), nats.Version, broker.ServerVersion)
	fmt.Fprintf(w, "rounds %d, %d visits per loop per round, %d warmup, %d empty visits of each kind per round, %s storage, %d-byte payloads\n",
		o.rounds, o.steps, o.warmup, o.empty, o.storage, payloadSize)
	fmt.Fprintf(w, "load average before: %s\n", loadAvg())
	fmt.Fprintf(w, "latent socket: %s\n", map[bool]string{false: "the Go runtime's network poller (default)", true: "thread socket (conn.Config.ThreadSocket)"}[o.thread])

	setup := time.Now()
	env, err := startEnv(ctx, o, perLoop)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, env.close()) }()
	fmt.Fprintf(w, "broker started, %d messages published per loop in %v\n", perLoop, time.Since(setup).Round(time.Millisecond))

	latentC, err := jspull.NewConsumer(binding(loopLatent), jspull.Options{})
	if err != nil {
		return err
	}
	emptyC, err := jspull.NewConsumer(binding(loopEmpty), jspull.Options{})
	if err != nil {
		return err
	}
	js, err := newJSLoop(ctx, env.js, binding(loopJetStream))
	if err != nil {
		return err
	}
	loops := []*loop{
		newLoop("latent", &latentLoop{c: env.latent, p: latentC}, o.steps, o.rounds),
		newLoop("core", newCoreLoop(env.core, binding(loopCore), latentC.NextBody()), o.steps, o.rounds),
		newLoop("jetstream", js, o.steps, o.rounds),
	}
	empties := []*loop{
		newLoop("empty/inspect", &emptyInspect{latentLoop{c: env.latent, p: emptyC}}, o.empty, o.rounds),
		newLoop("empty/pull", &emptyPull{latentLoop{c: env.latent, p: emptyC}}, o.empty, o.rounds),
	}

	// The floors run in every round beside the loops, same count, rotated
	// with them; they touch no consumer.
	floors := []*loop{
		newLoop("floor/latent", &latentFloor{c: adminConn(env.admin)}, o.steps, o.rounds),
		newLoop("floor/nats.go", &natsFloor{nc: env.floor}, o.steps, o.rounds),
	}
	all := append(append([]*loop(nil), loops...), floors...)

	if o.warmup > 0 {
		buf := make([]time.Duration, o.warmup)
		for _, l := range all {
			s, err := measureLoop(ctx, l.s, o.warmup, o.roundTime, buf)
			l.warm = s.steps
			if err != nil {
				return fmt.Errorf("peerbench: warmup %s: %w", l.name, err)
			}
		}
	}
	for r := range o.rounds {
		for i := range all {
			l := all[(i+r)%len(all)] // rotate the order every round
			if err := l.run(ctx, w, r, o.roundTime); err != nil {
				return err
			}
		}
		if o.empty == 0 {
			continue
		}
		for _, l := range empties {
			if err := l.run(ctx, w, r, o.roundTime); err != nil {
				return err
			}
		}
	}
	if o.host > 0 {
		for _, l := range loops {
			if l.host, err = measureHost(ctx, l.s, o.host, o.roundTime); err != nil {
				return fmt.Errorf("peerbench: %s with a host goroutine: %w", l.name, err)
			}
		}
	}
	fmt.Fprintf(w, "load average after: %s\n", loadAvg())
	if err := verifyCounters(ctx, env.admin, perLoop, loops); err != nil {
		return err
	}
	fmt.Fprintln(w, "verified: every visit delivered and acknowledged exactly one message; no ack pending, no request waiting")
	printPullReport(w, loops, floors, empties)
	printHostReport(w, loops)
	return nil
}

// run measures round r of l and prints its raw line.
func (l *loop) run(ctx context.Context, w io.Writer, r int, bound time.Duration) error {
	s, err := measureLoop(ctx, l.s, l.n, bound, l.lat[r])
	if err != nil {
		return fmt.Errorf("peerbench: round %d, %s: %w", r+1, l.name, err)
	}
	l.samples = append(l.samples, s)
	one := summarize([]sample{s})
	cut := ""
	if s.cut {
		cut = " (cut by -round-time)"
	}
	fmt.Fprintf(w, "round %d %-13s %5d visits %8v %7.0f/s  p50 %-8v p99 %-8v %6.1f allocs %7.0f B  cpu %v/visit%s\n",
		r+1, l.name, s.steps, s.wall.Round(time.Millisecond), s.rate(), us(one.p50), us(one.p99),
		one.allocs, one.bytes, us(one.cpu), cut)
	return nil
}

// verifyCounters checks with the admin's consumer info that each message
// loop's consumer delivered exactly one message per visit and that every
// delivery was acknowledged.
func verifyCounters(ctx context.Context, a *admin, perLoop int, loops []*loop) error {
	names := map[string]loopName{"latent": loopLatent, "core": loopCore, "jetstream": loopJetStream}
	var errs []error
	for _, l := range loops {
		visits := l.warm + l.host.steps
		for _, s := range l.samples {
			visits += s.steps
		}
		c, err := a.counters(ctx, names[l.name])
		if err != nil {
			return err
		}
		want := uint64(visits)
		if c.NumAckPending != 0 || c.NumWaiting != 0 || c.Delivered.ConsumerSeq != want ||
			c.AckFloor.ConsumerSeq != want || c.NumPending != uint64(perLoop)-want {
			errs = append(errs, fmt.Errorf("peerbench: %s consumer after the run: %+v, want %d delivered and acknowledged", l.name, c, visits))
		}
	}
	return errors.Join(errs...)
}

// us rounds d to the microsecond for printing.
func us(d time.Duration) time.Duration { return d.Round(time.Microsecond) }

// loadAvg is the first three fields of /proc/loadavg, or "n/a".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}
