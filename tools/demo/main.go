package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/latent-systems/latent-nats/tools/broker"
)

// Exit codes of the demo.
const (
	// exitOK: every expectation held.
	exitOK = 0
	// exitFailed: an expectation did not hold, or a step of the demo
	// failed.
	exitFailed = 1
	// exitUsage: bad flags; nothing was started.
	exitUsage = 2
	// exitInterrupted: SIGINT or SIGTERM stopped the demo (128 + SIGINT).
	exitInterrupted = 130
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	if !stopWithParent() {
		// The parent died before the kernel could be asked to tell.
		stop()
		os.Exit(exitInterrupted)
	}
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs the demo command with args (without the program name) and
// returns its exit code. Everything it starts is stopped, and every file it
// writes removed, before it returns.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	_, err = demo(ctx, stdout, opts)
	switch {
	case err == nil:
		return exitOK
	case isInterrupt(err):
		fmt.Fprintln(stderr, err)
		return exitInterrupted
	}
	fmt.Fprintln(stderr, err)
	return exitFailed
}

// parseFlags reads the command line.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: demo -guest PATH [-keep] [-deadline D] [-cluster N] [-v]")
		fmt.Fprintln(stderr, "Starts the pinned broker, provisions it, publishes events, runs the trigger runtime")
		fmt.Fprintln(stderr, "with the reference host, its functions WebAssembly guests, and checks every outcome;")
		fmt.Fprintln(stderr, "exit 0 only if all are as expected.")
		fs.PrintDefaults()
	}
	var opts options
	fs.StringVar(&opts.Guest, "guest", "", "the guest module, tools/demo/guest built for WebAssembly (required; make demo builds it: "+guestBuild+")")
	fs.BoolVar(&opts.Keep, "keep", false, "keep the broker running after the run and print how to reach it, until Ctrl-C")
	fs.DurationVar(&opts.Deadline, "deadline", DefaultDeadline, fmt.Sprintf("bound of the runtime phase, %v to %v", MinDeadline, MaxDeadline))
	fs.IntVar(&opts.Cluster, "cluster", 0, fmt.Sprintf("run on a cluster of N nodes (%d to %d; R3 streams and consumers on 3 or more), each tenant pinned to its own node; 0: one broker",
		broker.MinClusterSize, broker.MaxClusterSize))
	fs.BoolVar(&opts.Verbose, "v", false, "write the runtime's log (its state changes: connections, backoff, mismatches, uncertain acks, exhaustion) among the progress lines")
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	if fs.NArg() > 0 {
		return opts, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if opts.Guest == "" {
		return opts, fmt.Errorf("%w: -guest PATH is required (make demo builds it; by hand: %s)", errUsage, guestBuild)
	}
	if opts.Cluster != 0 && (opts.Cluster < broker.MinClusterSize || opts.Cluster > broker.MaxClusterSize) {
		return opts, fmt.Errorf("%w: -cluster %d outside %d to %d", errUsage, opts.Cluster, broker.MinClusterSize, broker.MaxClusterSize)
	}
	if opts.Cluster != 0 && opts.Keep {
		return opts, fmt.Errorf("%w: -keep runs on one broker only", errUsage)
	}
	if opts.Deadline < MinDeadline || opts.Deadline > MaxDeadline {
		return opts, fmt.Errorf("%w: -deadline %v outside %v to %v", errUsage, opts.Deadline, MinDeadline, MaxDeadline)
	}
	return opts, nil
}
