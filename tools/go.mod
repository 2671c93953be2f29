module github.com/latent-systems/latent-nats/tools

go 1.26.0

tool (
	github.com/nats-io/nats-server/v2
	honnef.co/go/tools/cmd/staticcheck
)

replace github.com/latent-systems/latent-nats => ../

require github.com/latent-systems/latent-nats v0.0.0-00010101000000-000000000000

require (
	github.com/google/go-cmp v0.7.0
	github.com/nats-io/jwt/v2 v2.8.2
	github.com/nats-io/nkeys v0.4.16
)

require (
	github.com/BurntSushi/toml v1.4.1-0.20240526193622-a339e1f7089c // indirect
	github.com/antithesishq/antithesis-sdk-go v0.7.2-default-no-op // indirect
	github.com/google/go-tpm v0.9.8 // indirect
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/minio/highwayhash v1.0.4 // indirect
	github.com/nats-io/nats-server/v2 v2.14.6 // indirect
	github.com/nats-io/nuid v1.0.1 // indirect
	github.com/tetratelabs/wazero v1.12.0 // indirect
	golang.org/x/crypto v0.55.0 // indirect
	golang.org/x/exp/typeparams v0.0.0-20231108232855-2478ac86f678 // indirect
	golang.org/x/mod v0.41.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/time v0.15.0 // indirect
	golang.org/x/tools v0.51.0 // indirect
	honnef.co/go/tools v0.8.2 // indirect
)
