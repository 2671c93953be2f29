// Command validate checks a trigger configuration and, optionally, a
// credentials file before deployment, and reports every violation with its
// JSON path. See package github.com/latent-systems/latent-nats/tools/validate.
//
//	go run ./tools/validate/cmd/validate -config trigger.json -credentials credentials.json
//
// Exit status: 0 valid, 1 violations, 2 usage.
package main

import (
	"os"

	"github.com/latent-systems/latent-nats/tools/validate"
)

func main() {
	os.Exit(validate.Main(os.Args[1:], os.Stdout, os.Stderr))
}
