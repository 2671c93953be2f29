package soak

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/faultproxy"
	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/tools/provision"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// The publication every binding delivers to.
const (
	service  = "events"
	contract = "latent:events/handler@1.0.0"
	function = "handle"
	declared = "rejected"
)

// Event arguments: what the function does with each.
const (
	argOK    = "ok"    // success: +ACK
	argFail  = "fail"  // the declared failure: +TERM
	argRetry = "retry" // a platform failure: -NAK until exhausted
	argSlow  = "slow"  // success after slowFor, so that faults land in activations
)

// Timing of a round.
const (
	setupTimeout = 2 * time.Minute // a cold build of the pinned broker included
	healBound    = 30 * time.Second
	maxFaultWait = 400 * time.Millisecond // from the batch to the fault, every other round
	busyWait     = 30 * time.Millisecond  // from the batch to the fault, the other rounds
	slowFor      = 20 * time.Millisecond
	// minHold and maxHold bound how long a pause, stall or blackhole
	// lasts: from shorter than a pull to longer than the operation
	// timeout.
	minHold      = 50 * time.Millisecond
	maxHold      = 1500 * time.Millisecond
	maxAfterWait = 800 * time.Millisecond // from the heal to the next batch
	// settleLogBytes is how much of the broker's log a failed settle
	// phase prints.
	settleLogBytes = 8 << 10
	// stacksWait bounds the broker's goroutine dump after a failed settle.
	stacksWait = 10 * time.Second
	// apiWorker names the function of nats-server v2.14.6's JetStream API
	// workers (jetstream_api.go); with the broker's one processor there is
	// one, and every API request waits for it.
	apiWorker = "processJSAPIRoutedRequests"
)

// Result is what a run measured.
type Result struct {
	Seed   uint64
	Rounds int
	// Faults counts the faults injected, indexed by Fault (index 0
	// unused).
	Faults [NumFaults + 1]int
	// Verdict is the ledger's; Settle how long the consumers took to
	// settle after the last fault.
	Verdict ledger.Verdict
	Settle  time.Duration
	// Rule is the rule the verdict was held to (see Options.Durable).
	Rule string
	// Snapshot is the runtime's monitor at the end.
	Snapshot trigger.Snapshot
	// Start and End are the process's live heap and goroutines once the
	// runtime was installed, before any fault, and once it stopped and
	// closed its idle connections after settling.
	Start, End Usage
}

// Usage is the process's live heap (after a collection) and goroutine
// count at one moment.
type Usage struct {
	HeapBytes  uint64
	Goroutines int
}

// ReadUsage collects garbage and reads the process's Usage.
func ReadUsage() Usage {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return Usage{HeapBytes: ms.HeapAlloc, Goroutines: runtime.NumGoroutine()}
}

// Run starts the pinned broker, provisions and installs opts' tenants and
// bindings, and soaks the runtime under faults for opts.Duration (see the
// package documentation). It returns the figures, and an error matching
// ErrVerdict when the verdict failed; the broker and everything else it
// started are gone when it returns.
func Run(ctx context.Context, opts Options) (res Result, err error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return res, err
	}
	res.Seed = opts.Seed
	if res.Seed == 0 {
		res.Seed = uint64(time.Now().UnixNano())
	}
	rng := rand.New(rand.NewPCG(res.Seed, res.Seed^0x9e3779b97f4a7c15))
	out := opts.Out
	sync := opts.SyncInterval
	if sync == "" {
		sync = "default"
	}
	fmt.Fprintf(out, "soak: seed %d, %v, %d tenants x %d bindings, faults %v, sync %s\n", res.Seed, opts.Duration, opts.Tenants, opts.Bindings, opts.Faults, sync)

	tenants := make([]string, opts.Tenants)
	for i := range tenants {
		tenants[i] = fmt.Sprintf("t%d", i)
	}
	sctx, cancel := context.WithTimeout(ctx, setupTimeout)
	b, err := broker.Start(sctx, broker.Options{
		Tenants: tenants, Binary: opts.Binary, SyncInterval: opts.SyncInterval,
		// The shortest lame duck the server allows: its clients are
		// closed once the grace period has passed.
		LameDuckDuration: broker.MinLameDuckDuration, LameDuckGracePeriod: time.Second,
	})
	cancel()
	if err != nil {
		return res, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	defer b.Close()
	// The runtime reaches the broker through a link it can break.
	proxy, err := faultproxy.Start(b.Addr())
	if err != nil {
		return res, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	defer proxy.Close()
	cfg := config(b, opts)
	if err := cfg.Validate(); err != nil {
		return res, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	admins, creds, err := credentials(b, cfg)
	defer wipe(admins)
	defer wipe(creds)
	if err != nil {
		return res, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	if err := provisionAll(ctx, cfg, admins); err != nil {
		return res, fmt.Errorf("%w: %w", ErrSetup, err)
	}

	led := ledger.New(cfg)
	host, err := newHost(led)
	if err != nil {
		return res, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	lim := trigger.DefaultPoolLimits()
	lim.DialBackoff, lim.MaxDialBackoff = 20*time.Millisecond, 500*time.Millisecond
	pools, err := trigger.NewPools(trigger.PoolConfig{Limits: lim, Dialer: proxy.Dialer()})
	if err != nil {
		return res, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	defer pools.Close()
	trig, mon, err := trigger.Install(pools, trigger.Installation{LogicalID: "soak", Epoch: 1, Config: cfg, Credentials: creds})
	if err != nil {
		return res, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	defer trig.Close()
	health := ledger.NewHealth(pools) // the installation's charge held, nothing else
	res.Start = ReadUsage()

	rctx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	runDone := make(chan error, 1)
	go func() { runDone <- trig.Run(rctx, led.Host(host)) }()

	pub := &publisher{cfg: cfg, admins: admins, led: led}
	defer pub.close()
	deadline := time.Now().Add(opts.Duration)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		res.Rounds++
		if err := pub.batch(ctx, rng, opts.EventsPerRound); err != nil {
			return res, err
		}
		// Half the faults land while the batch is worked on, half later.
		wait := maxFaultWait
		if res.Rounds%2 == 0 {
			wait = busyWait
		}
		if err := sleep(ctx, time.Duration(rng.Int64N(int64(wait)))); err != nil {
			break
		}
		f := opts.Faults[rng.IntN(len(opts.Faults))]
		if f == FaultKill {
			led.Killing()
		}
		if err := inject(ctx, b, proxy, rng, f); err != nil {
			return res, fmt.Errorf("soak: injecting %s: %w", f, err)
		}
		res.Faults[f]++
		pub.close() // the administrators' connections did not survive the fault
		if err := sleep(ctx, time.Duration(rng.Int64N(int64(maxAfterWait)))); err != nil {
			break
		}
		select {
		case err := <-runDone:
			return res, fmt.Errorf("%w: %w", ErrRuntime, err)
		default:
		}
	}
	fmt.Fprintf(out, "soak: %d rounds, faults %s; settling\n", res.Rounds, faultCounts(res.Faults))
	if err := healed(b, proxy); err != nil {
		return res, err
	}

	settleCtx, cancelSettle := context.WithTimeout(ctx, SettleBound)
	views, took, serr := led.WaitSettled(settleCtx, 50*time.Millisecond, pub.view)
	cancelSettle()
	res.Settle = took
	if serr != nil {
		// The broker as the settle phase left it, the runtime still
		// stepping: the same probes after the runtime stopped (below)
		// tell a broker the runtime kept busy from one that stopped
		// answering.
		pub.probes(ctx, out, "the runtime running")
	}
	stopRun()
	if rerr := <-runDone; rerr != nil {
		return res, fmt.Errorf("%w: %w", ErrRuntime, rerr)
	}
	trig.CloseIdle()
	pub.close()
	res.Verdict = led.Verdict(views)
	res.Rule = rule(opts, res.Faults)
	res.Snapshot = mon.Snapshot()
	res.End = ReadUsage()
	report(out, &res)
	if serr != nil {
		// Which side failed: the broker's state and the link's, read
		// after the settle phase, say whether a fault came back.
		after := "the broker running, not paused, and the link passing"
		if herr := healed(b, proxy); herr != nil {
			after = herr.Error()
		}
		logs := b.Logs()
		fmt.Fprintf(out, "soak: the broker's log, last %d bytes at most:\n%s\n", settleLogBytes, logs[max(0, len(logs)-settleLogBytes):])
		pub.probes(ctx, out, "the runtime stopped")
		dumpStacks(ctx, out, b)
		return res, fmt.Errorf("%w: %w; after settling: %s", ErrVerdict, serr, after)
	}
	verr := res.Verdict.ErrNoLoss()
	if durable(opts, res.Faults) {
		verr = res.Verdict.Err()
	}
	if verr != nil {
		return res, fmt.Errorf("%w: %w", ErrVerdict, verr)
	}
	// The proxy's goroutines and sockets are the test's, not the
	// runtime's: a link whose FIN a blackhole dropped stays open on the
	// proxy until the broker's next PING fails, minutes later. The
	// runtime's own sockets are its descriptors and are counted after
	// this as before.
	_ = proxy.Close()
	hctx, hcancel := context.WithTimeout(ctx, 10*time.Second)
	defer hcancel()
	if err := health.Wait(hctx, 20*time.Millisecond); err != nil {
		return res, fmt.Errorf("%w: %w", ErrVerdict, err)
	}
	return res, nil
}

// newHost returns the reference host with the run's function, which
// records every run in led.
func newHost(led *ledger.Ledger) (*refhost.Host, error) {
	h, err := refhost.New(refhost.Config{MaxActivations: 16, MaxInputBytes: 16 * payloadMax})
	if err != nil {
		return nil, err
	}
	err = h.Register(refhost.Function{
		Service: service, Revision: "r1", Contract: contract, Name: function,
		Params:   []refhost.Type{refhost.String()},
		Failures: []string{declared},
		Func: func(ctx context.Context, c refhost.Call) error {
			led.Activated(c.Binding.ID, c.StreamSeq, c.Delivered)
			switch arg, _ := c.Args[0].(string); arg {
			case argFail:
				return &refhost.ApplicationError{Code: declared}
			case argRetry:
				return errRetry
			case argSlow:
				return sleep(ctx, slowFor)
			}
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	if err := h.Publish(refhost.PublicationKey{Service: service, Contract: contract, Function: function}); err != nil {
		return nil, err
	}
	if _, err := h.SetRoute(service, "", "r1"); err != nil {
		return nil, err
	}
	return h, nil
}

var errRetry = errors.New("soak: transient failure")

// healed checks that every fault is gone: the broker runs and is not
// paused, and the link passes both ways. Else the error matches
// ErrHarness and says which.
func healed(b *broker.Broker, p *faultproxy.Proxy) error {
	var errs []error
	switch {
	case !b.Running():
		errs = append(errs, errors.New("the broker is not running"))
	case b.Paused():
		errs = append(errs, errors.New("the broker is paused"))
	}
	for _, d := range []faultproxy.Direction{faultproxy.Up, faultproxy.Down} {
		if f := p.Fault(d); f.Kind != faultproxy.Pass {
			errs = append(errs, fmt.Errorf("the link %v holds %v", d, f.Kind))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrHarness, errors.Join(errs...))
	}
	return nil
}

// inject applies one fault to b or its link and heals it.
func inject(ctx context.Context, b *broker.Broker, p *faultproxy.Proxy, rng *rand.Rand, f Fault) error {
	hctx, cancel := context.WithTimeout(ctx, healBound)
	defer cancel()
	hold := minHold + time.Duration(rng.Int64N(int64(maxHold-minHold)))
	switch f {
	case FaultKill:
		if err := b.Kill(); err != nil {
			return err
		}
		return b.Restart(hctx)
	case FaultRestart:
		return b.Restart(hctx)
	case FaultPause:
		if err := b.Pause(); err != nil {
			return err
		}
		serr := sleep(ctx, hold)
		return errors.Join(b.Resume(), serr)
	case FaultLameDuck:
		if err := b.LameDuck(hctx); err != nil {
			return err
		}
		return b.Restart(hctx)
	case FaultSever:
		p.Sever()
		return nil
	case FaultStall, FaultBlackhole:
		d, k := faultproxy.Down, faultproxy.Stall
		if f == FaultBlackhole {
			d, k = faultproxy.Up, faultproxy.Blackhole
		}
		if err := p.Set(d, faultproxy.Fault{Kind: k}); err != nil {
			return err
		}
		serr := sleep(ctx, hold)
		return errors.Join(p.Clear(d), serr)
	}
	return fmt.Errorf("%w: fault %d", ErrInvalidOptions, f)
}

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

// publisher publishes batches as the tenants' administrators and reads
// the consumers for the verdict.
type publisher struct {
	cfg     trigger.Config
	admins  []trigger.Credential
	led     *ledger.Ledger
	clients []*provision.Client
	conns   []*conn.Conn
}

// client returns tenant ti's administrator, dialling it when needed.
func (p *publisher) client(ctx context.Context, ti int) (*provision.Client, *conn.Conn, error) {
	if p.clients == nil {
		p.clients = make([]*provision.Client, len(p.cfg.Tenants))
		p.conns = make([]*conn.Conn, len(p.cfg.Tenants))
	}
	if p.clients[ti] == nil {
		cc, err := provision.ConnConfig(p.cfg.Tenants[ti].Destination, p.admins[ti].Secret)
		if err != nil {
			return nil, nil, err
		}
		if p.clients[ti], err = provision.Dial(ctx, cc, requestBudget); err != nil {
			return nil, nil, fmt.Errorf("soak: dialling tenant %s's administrator: %w", p.cfg.Tenants[ti].ID, err)
		}
		// A second connection for consumer info: the provisioning client
		// keeps its own to itself.
		dctx, cancel := context.WithTimeout(ctx, requestBudget)
		defer cancel()
		if p.conns[ti], err = conn.Dial(dctx, cc); err != nil {
			return nil, nil, fmt.Errorf("soak: dialling tenant %s's administrator for consumer info: %w", p.cfg.Tenants[ti].ID, err)
		}
	}
	return p.clients[ti], p.conns[ti], nil
}

func (p *publisher) close() {
	for i := range p.clients {
		if p.clients[i] != nil {
			_ = p.clients[i].Close()
			p.clients[i] = nil
		}
		if p.conns[i] != nil {
			_ = p.conns[i].Close()
			p.conns[i] = nil
		}
	}
}

// batch publishes n events to random bindings: seven in ten succeed at
// once, one after slowFor, one fails as declared, one fails until
// exhausted.
func (p *publisher) batch(ctx context.Context, rng *rand.Rand, n int) error {
	for range n {
		bi := rng.IntN(len(p.cfg.Bindings))
		b := p.cfg.Bindings[bi]
		arg := argOK
		switch rng.IntN(10) {
		case 0:
			arg = argFail
		case 1:
			arg = argRetry
		case 2:
			arg = argSlow
		}
		c, _, err := p.client(ctx, p.cfg.TenantIndex(b.Tenant))
		if err != nil {
			return fmt.Errorf("soak: publisher: %w", err)
		}
		ack, err := c.Publish(ctx, b.FilterSubject, []byte(`["`+arg+`"]`))
		if err != nil {
			return fmt.Errorf("soak: publishing to %s: %w", b.FilterSubject, err)
		}
		p.led.Published(b.ID, ack.Seq)
	}
	return nil
}

// view reads one binding's consumer (a ledger.ViewFunc). A connection a
// fault closed is dropped and dialled again at the next read.
func (p *publisher) view(ctx context.Context, id string) (ledger.ConsumerView, error) {
	var b trigger.Binding
	for _, x := range p.cfg.Bindings {
		if x.ID == id {
			b = x
		}
	}
	_, c, err := p.client(ctx, p.cfg.TenantIndex(b.Tenant))
	if err != nil {
		p.close()
		return ledger.ConsumerView{}, err
	}
	cv, err := ledger.ReadView(ctx, func(ctx context.Context, subject string, body []byte) ([]byte, error) {
		rctx, cancel := context.WithTimeout(ctx, requestBudget)
		defer cancel()
		r, err := c.Request(rctx, subject, nil, body)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("soak: %s: %w", subject, err)
		}
		return r.Payload, nil
	}, b)
	return cv, err
}

// dumpStacks ends the broker with SIGQUIT after a failed settle phase,
// writes every goroutine's stack to a file whose path it prints, and
// prints the stacks of the JetStream API's workers: a server that runs
// but answers no API request shows there what its workers wait on.
func dumpStacks(ctx context.Context, out io.Writer, b *broker.Broker) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stacksWait)
	defer cancel()
	stacks, err := b.Stacks(sctx)
	if err != nil {
		fmt.Fprintf(out, "soak: the broker's stacks: %v\n", err)
	}
	if len(stacks) == 0 {
		return
	}
	f, err := os.CreateTemp("", "soak-broker-stacks-*.txt")
	if err == nil {
		_, err = f.Write(stacks)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		fmt.Fprintf(out, "soak: writing the broker's stacks: %v\n", err)
	} else {
		fmt.Fprintf(out, "soak: the broker's stacks (%d bytes) are in %s\n", len(stacks), f.Name())
	}
	for g := range bytes.SplitSeq(stacks, []byte("\n\n")) {
		if bytes.Contains(g, []byte(apiWorker)) {
			fmt.Fprintf(out, "soak: a JetStream API worker of the broker:\n%s\n", g)
		}
	}
}
