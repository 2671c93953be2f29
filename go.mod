module github.com/latent-systems/latent-nats

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/nats-io/jwt/v2 v2.8.2
	github.com/nats-io/nkeys v0.4.16
	github.com/tetratelabs/wazero v1.12.0
	golang.org/x/sys v0.48.0
	pgregory.net/rapid v1.3.0
)

require golang.org/x/crypto v0.55.0 // indirect
