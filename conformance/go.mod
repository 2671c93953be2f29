module github.com/latent-systems/latent-nats/conformance

go 1.26.0

replace (
	github.com/latent-systems/latent-nats => ../
	github.com/latent-systems/latent-nats/tools => ../tools
)

require (
	github.com/latent-systems/latent-nats v0.0.0-00010101000000-000000000000
	github.com/latent-systems/latent-nats/tools v0.0.0-00010101000000-000000000000
)

require (
	github.com/google/go-cmp v0.7.0
	github.com/nats-io/jwt/v2 v2.8.2
	github.com/nats-io/nkeys v0.4.16
)

require (
	github.com/tetratelabs/wazero v1.12.0 // indirect
	golang.org/x/crypto v0.55.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
