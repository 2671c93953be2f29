// Command deadletter lists the deliveries the broker gave up on for each
// binding of a trigger configuration, shows their messages where a stream
// still holds them, and replays them after a fix, with the account
// administrator's credentials. See package
// github.com/latent-systems/latent-nats/tools/deadletter.
//
//	go run ./tools/deadletter/cmd/deadletter list -config trigger.json -credentials admin-credentials.json
//
// Exit status: 0 done, 1 violations or a failed request, 2 usage.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/latent-systems/latent-nats/tools/deadletter"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := deadletter.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
