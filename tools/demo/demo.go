package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
	"github.com/latent-systems/latent-nats/trigger/wasmhost"
)

const (
	// DefaultDeadline bounds the runtime phase when -deadline is not
	// given; MinDeadline and MaxDeadline bound the flag.
	DefaultDeadline = 20 * time.Second
	MinDeadline     = time.Second
	MaxDeadline     = 10 * time.Minute

	// setupTimeout bounds finding (or building, about 30 s cold) the pinned
	// broker and starting it.
	setupTimeout = 3 * time.Minute
	// stopTimeout bounds waiting for the reference host's functions to
	// return after the runtime stopped, and closing the guests' engine.
	stopTimeout = 5 * time.Second
)

// options configure one run of the demo.
type options struct {
	// Guest is the path of the guest module, tools/demo/guest built for
	// GOOS=wasip1 (guestBuild); required.
	Guest string
	// GuestCache is the directory of the guest's compilation cache
	// (wasmhost.Config.CacheDir); empty: in memory, compiled every run.
	// The tests share one, since compiling takes seconds under the race
	// detector.
	GuestCache string
	// Keep keeps the broker running after the run, until ctx is done.
	Keep bool
	// Deadline bounds the runtime phase: MinDeadline-MaxDeadline.
	Deadline time.Duration
	// Dir is the parent of the broker's temporary directory; empty means
	// the system temporary directory.
	Dir string
	// Binary is the nats-server to run; empty means broker.ServerBinary
	// (LATENT_NATS_SERVER, as the Makefile sets it).
	Binary string
	// Cluster, when not zero, runs the demo on a cluster of that many
	// nodes (broker.MinClusterSize to broker.MaxClusterSize) instead of
	// one broker; Keep is refused with it.
	Cluster int
	// Verbose writes the runtime's log (trigger.PoolConfig.Logger: state
	// changes such as connections dialled and lost, dial backoff, profile
	// mismatches, uncertain and late acknowledgements, exhaustion) among
	// the progress lines, each line after "  log ".
	Verbose bool
	// KeepReady, when not nil, is called in Keep mode once the broker's
	// access files are written and described, before waiting for ctx.
	KeepReady func(access)
}

// demo runs the whole scenario against a broker it starts itself and
// returns the summary of the run. The error is nil only when every
// expectation held (verify); it matches errInterrupted when ctx ended the
// run. The broker is closed, and its directory removed, before demo
// returns, whatever happened.
func demo(ctx context.Context, w io.Writer, opts options) (sum summary, err error) {
	// The activations' lines come from the reference host's goroutines
	// (and with Verbose the runtime's log from its own) while this one
	// writes: everything goes through one lock, a line at a time.
	lw := &lockedWriter{w: w}
	w = lw
	sc := newScenario()
	tenants := tenantIDs(sc.Bindings)
	fmt.Fprintf(w, "latent-nats demo: %s with %d tenants, %d bindings, %d events\n",
		trigger.ProfileName, len(tenants), len(sc.Bindings), len(sc.Events))
	kept := false
	var keepBroker *broker.Broker
	defer func() {
		// In Keep mode a done ctx is the normal end, not an interruption.
		if err != nil && ctx.Err() != nil && !kept && !isInterrupt(err) {
			err = fmt.Errorf("%w: %w", errInterrupted, err)
		}
	}()

	// The guest first: a missing or refused module stops the demo before
	// anything is started.
	bin, err := readGuest(opts.Guest)
	if err != nil {
		return sum, err
	}
	acts := newActivationLog(w, sc.Bindings)
	host, rt, err := sc.newHost(ctx, bin, wasmhost.Config{OnActivation: acts.record, CacheDir: opts.GuestCache})
	if err != nil {
		return sum, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
		defer cancel()
		if cerr := rt.Close(cctx); cerr != nil && err == nil {
			err = cerr
		}
	}()
	writeGuest(w, opts.Guest, len(bin), sc, rt.Stats())

	var cfg trigger.Config
	var mint minter
	replicas := provisionReplicas
	var cluster *broker.Cluster
	if opts.Cluster > 0 {
		// A cluster: the same accounts on every node, R3 streams and
		// consumers, each tenant pinned to its own node.
		c, err := startCluster(ctx, w, tenants, opts)
		if err != nil {
			return sum, err
		}
		defer func() {
			dir := c.Dir()
			if cerr := c.Close(); cerr != nil {
				fmt.Fprintf(w, "stopping the cluster failed: %v\n", cerr)
				if err == nil {
					err = cerr
				}
				return
			}
			fmt.Fprintf(w, "cluster stopped; %s removed\n", dir)
		}()
		cluster, mint, replicas = c, c, min(c.Size(), clusterReplicas)
		cfg = sc.config(destination(c.Node(0)))
		pinTenants(w, c, &cfg)
	} else {
		// The pinned broker: handshake-first TLS, operator mode, one
		// account per tenant.
		fmt.Fprintf(w, "starting the pinned nats-server v%s (built first if missing: about 30 s cold)\n", broker.ServerVersion)
		sctx, cancel := context.WithTimeout(ctx, setupTimeout)
		b, err := broker.Start(sctx, broker.Options{Tenants: tenants, Dir: opts.Dir, Binary: opts.Binary})
		cancel()
		if err != nil {
			return sum, err
		}
		defer func() {
			dir := b.Dir()
			cerr := b.Close()
			if cerr != nil {
				fmt.Fprintf(w, "stopping the broker failed: %v\n", cerr)
				if err == nil {
					err = cerr
				}
				return
			}
			fmt.Fprintf(w, "broker stopped; %s removed\n", dir)
		}()
		// The version the binary reports: the pinned one, or another
		// under broker.EnvServerVersion (make compat).
		fmt.Fprintf(w, "broker: nats-server v%s (pid %d) on %s, TLS %s, server name %s, operator mode, accounts %s\n",
			b.Version(), b.PID(), b.Addr(), b.Handshake(), b.ServerName(), strings.Join(b.Tenants(), ", "))
		mint, keepBroker = b, b
		cfg = sc.config(destination(b))
	}
	if err := cfg.Validate(); err != nil {
		return sum, err
	}
	users, err := mintUsers(mint, cfg)
	defer func() {
		for i := range users {
			users[i].wipe()
		}
	}()
	if err != nil {
		return sum, err
	}
	admins := adminCredentials(cfg, users)

	fmt.Fprintln(w, "provisioning streams and consumers with each tenant's administrator (tools/provision):")
	if cluster != nil {
		err = provisionCluster(ctx, w, cluster, cfg, admins)
	} else {
		err = provisionAll(ctx, w, cfg, admins, replicas)
	}
	if err != nil {
		return sum, err
	}
	writeUsers(w, users)

	fmt.Fprintln(w, "publishing events as the administrators (verified PubAcks; payloads not shown):")
	pub, err := publishAll(ctx, w, cfg, admins, sc.Events)
	if err != nil {
		return sum, err
	}

	sum, err = runScenario(ctx, lw, host, rt, acts, cfg, users, pub, opts.Deadline, opts.Verbose)
	if err != nil {
		return sum, err
	}
	sum.Consumers = inspectConsumers(ctx, cfg, admins)

	fmt.Fprintln(w, "per binding (the monitor's counts):")
	writeTable(w, sum.Rows)
	writeLastStep(w, cfg.Bindings, sum.Last, sum.HasLast)
	writeBrokerView(w, sum.Consumers)
	fmt.Fprintf(w, "guest: %d activations, %d in a fresh instance; %d ok results, %d of them counting one call\n",
		sum.Guest.Activations, sum.Guest.Fresh, sum.Guest.Counted, sum.Guest.One)
	fmt.Fprintf(w, "reclaimed: pools %d bytes, %d requests, %d clients, %d connections; host %d slots, %d input bytes, %d guest memory bytes, %d running; %d guest instances live\n",
		sum.Usage.Bytes, sum.Usage.Requests, sum.Usage.Clients, sum.Usage.Connections,
		sum.Host.Slots, sum.Host.InputBytes, sum.Host.MemoryBytes, sum.Host.Running, sum.GuestLive)
	verr := verify(sum, expectedRows(cfg.Bindings, sc.Events), expectedActivations(cfg.Bindings, sc.Events))
	var oe *outcomeError
	if errors.As(verr, &oe) {
		fmt.Fprintln(w, "result: NOT as expected")
		for _, p := range oe.Problems {
			fmt.Fprintf(w, "  %s\n", p)
		}
	} else {
		fmt.Fprintln(w, "result: as expected (good events acked; declared failure and invalid payload termed; poison nacked max_deliver-1 times, then termed as exhausted; nothing uncertain; every activation in a fresh instance)")
	}

	if opts.Keep {
		if err := keep(ctx, w, keepBroker, cfg, users, opts.KeepReady); err != nil {
			return sum, err
		}
		kept = true
	}
	return sum, verr
}

// runScenario installs the configuration, runs the runtime with the
// reference host (its functions rt's guests, reported to acts) until the
// events settle or the deadline passes, and stops and closes everything it
// made, returning the counts and what was left held. Everything is written
// through lw; with verbose, the runtime's log too, among the progress
// lines.
func runScenario(ctx context.Context, lw *lockedWriter, host *refhost.Host, rt *wasmhost.Runtime, acts *activationLog,
	cfg trigger.Config, users []tenantCreds, pub []published, limit time.Duration, verbose bool) (summary, error) {
	var sum summary
	var w io.Writer = lw
	pc := trigger.PoolConfig{Limits: trigger.DefaultPoolLimits()}
	if verbose {
		pc.Logger = slog.New(slog.NewTextHandler(&logLines{lw}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	pools, err := trigger.NewPools(pc)
	if err != nil {
		return sum, err
	}
	defer pools.Close()
	creds, err := runtimeCredentials(cfg, users)
	if err != nil {
		return sum, err
	}
	defer wipeCredentials(creds)
	trig, mon, err := trigger.Install(pools, trigger.Installation{LogicalID: logicalID, Epoch: 1, Config: cfg, Credentials: creds})
	if err != nil {
		return sum, err
	}
	defer trig.Close()

	fmt.Fprintf(w, "running the runtime (Run, one goroutine, poll %v, NAK delay %v, max_deliver %d) until every event settles or %v pass:\n",
		cfg.PollInterval(), time.Duration(nakDelayMS)*time.Millisecond, maxDeliver, limit)
	fmt.Fprintf(w, "  (times are when each step started; a pull for a delivery still in its NAK delay is held by the broker up to its %v expiry;\n", jspull.RequestExpires)
	fmt.Fprintln(w, "   an activation's line is written when its instance has closed, before its step's line)")
	start := time.Now()
	o := newObserver(w, start, cfg.Bindings, pub)
	elapsed, runErr := runPhase(ctx, w, trig, host, o, limit)

	// Stop everything, then read what is left held.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	idleErr := host.WaitIdle(wctx)
	cancel()
	trig.Close()
	pools.Close()

	snap := mon.Snapshot()
	for i, b := range cfg.Bindings {
		sum.Rows = append(sum.Rows, rowOf(b, snap.Bindings[i]))
	}
	sum.Events = o.events
	sum.Settled = settledOf(sum.Rows, o.perBinding)
	sum.Elapsed = elapsed
	sum.Last, sum.HasLast = mon.LastStep()
	sum.Usage = pools.Usage()
	sum.Host = host.Stats()
	sum.Guest = acts.totals()
	sum.GuestLive = rt.Stats().Live
	if runErr != nil {
		return sum, runErr
	}
	return sum, idleErr
}

// writeGuest describes the guest module at path (size bytes) and its
// registration: which functions, under which bounds, and how long
// compiling took.
func writeGuest(w io.Writer, path string, size int, sc scenario, st wasmhost.Stats) {
	fmt.Fprintf(w, "guest: %s (%d KiB, tools/demo/guest built for GOOS=wasip1), %d functions in %d modules compiled once in %v\n",
		path, size>>10, len(sc.Functions), st.Modules, st.Compile.Round(time.Millisecond))
	for _, f := range sc.Functions {
		fmt.Fprintf(w, "  %s %s: func(%s) -> %s\n", f.Service, f.Name, strings.Join(f.Params, ", "), f.Result)
	}
	fmt.Fprintf(w, "  each activation in a fresh instance: at most %d pages (%d KiB) of memory, WASI without files or sockets\n",
		guestMemoryPages, guestMemoryPages*wasmhost.PageSize>>10)
}

// writeUsers describes each tenant's runtime user: its permissions, exactly
// those derived from the tenant's bindings and private inbox prefix, and the
// size of its CONNECT.
func writeUsers(w io.Writer, users []tenantCreds) {
	fmt.Fprintln(w, "runtime users (permissions exactly as provision/pull derive them, each tenant's private inbox _INBOX.<tenant>):")
	for _, u := range users {
		p := u.Permissions.Permissions
		n := uint64(len(u.Permissions.Bindings))
		fmt.Fprintf(w, "  %s: %d %s, inbox %s, publish %d subjects, subscribe %s; user JWT %d bytes, CONNECT %d of %d bytes\n",
			u.Tenant, n, plural(n, "binding", "bindings"), u.Permissions.InboxPrefix, len(p.Publish), strings.Join(p.Subscribe, " "),
			len(u.Runtime.JWT), u.ConnectBytes, brokerMaxControlLine)
		for _, s := range p.Publish {
			fmt.Fprintf(w, "    pub %s\n", s)
		}
	}
	fmt.Fprintf(w, "  (a user JWT grows with its bindings and the broker reads at most %d bytes of CONNECT: a tenant with many bindings needs a larger max_control_line)\n",
		brokerMaxControlLine)
}

// writeBrokerView writes what the broker says of each consumer.
func writeBrokerView(w io.Writer, cs []consumerState) {
	fmt.Fprintln(w, "broker view (consumer info as the administrator):")
	for _, c := range cs {
		if !c.Checked {
			fmt.Fprintf(w, "  %-16s not inspected\n", c.Binding)
			continue
		}
		fmt.Fprintf(w, "  %-16s num_pending %d, num_ack_pending %d\n", c.Binding, c.Pending, c.AckPending)
	}
}
