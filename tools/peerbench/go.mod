module github.com/latent-systems/latent-nats/tools/peerbench

go 1.26.0

replace (
	github.com/latent-systems/latent-nats => ../..
	github.com/latent-systems/latent-nats/tools => ..
)

require (
	github.com/latent-systems/latent-nats v0.0.0-00010101000000-000000000000
	github.com/latent-systems/latent-nats/tools v0.0.0-00010101000000-000000000000
	github.com/nats-io/nats.go v1.55.0
)

require (
	github.com/klauspost/compress v1.20.0 // indirect
	github.com/nats-io/jwt/v2 v2.8.2 // indirect
	github.com/nats-io/nkeys v0.4.16 // indirect
	github.com/nats-io/nuid v1.0.1 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
