// Command soak soaks the trigger runtime on the pinned broker under random
// faults and prints the ledger's verdict and the figures (package
// tools/soak). It exits 0 when nothing was lost, 1 when the verdict
// failed, 2 on bad flags or a failed setup.
//
//	go run ./tools/soak/cmd/soak -duration 2m
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/latent-systems/latent-nats/tools/soak"
)

func main() {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	var opts soak.Options
	fs.DurationVar(&opts.Duration, "duration", soak.DefaultDuration, "how long faults are injected")
	fs.IntVar(&opts.Tenants, "tenants", 3, "tenants")
	fs.IntVar(&opts.Bindings, "bindings", 2, "bindings per tenant")
	fs.IntVar(&opts.EventsPerRound, "events", 16, "events published each round")
	fs.Uint64Var(&opts.Seed, "seed", 0, "seed of the random choices (0: from the clock)")
	faults := fs.String("faults", "", "comma-separated faults to inject (default all)")
	fs.BoolVar(&opts.Durable, "durable", false, "fail on a re-execution after a verified acknowledgement, a message kept after one, or a dropped retry, even after kills")
	fs.StringVar(&opts.SyncInterval, "sync", "", `the broker's JetStream sync_interval: "always", a duration, or empty for the server's default`)
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *faults != "" {
		for name := range strings.SplitSeq(*faults, ",") {
			f, err := soak.ParseFault(name)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			opts.Faults = append(opts.Faults, f)
		}
	}
	opts.Out = os.Stdout
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, err := soak.Run(ctx, opts)
	switch {
	case err == nil:
		fmt.Println("soak: PASS")
	case errors.Is(err, soak.ErrVerdict), errors.Is(err, soak.ErrRuntime):
		fmt.Fprintln(os.Stderr, "soak: FAIL:", err)
		os.Exit(1)
	default:
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
}
