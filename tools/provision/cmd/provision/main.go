// Command provision creates, or asserts, the streams and durable pull
// consumers a trigger configuration needs, with an operator's or account
// administrator's credentials, and prints the trigger runtime's minimal
// permissions per tenant. See package
// github.com/latent-systems/latent-nats/tools/provision.
//
//	go run ./tools/provision/cmd/provision -config trigger.json -credentials admin-credentials.json
//
// Exit status: 0 every stream and consumer created or asserted, 1 violations,
// mismatches or failures, 2 usage.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/latent-systems/latent-nats/tools/provision"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := provision.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
