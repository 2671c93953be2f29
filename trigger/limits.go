package trigger

import (
	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/pull"
)

// The bounds of the nats-jetstream-pull-v1 profile ("Profile setting /
// Supported bound"). Every one is checked by Validate and ParseConfig, and
// each has a test at the bound and one past it. Durations are integer
// milliseconds, as in the JSON.
const (
	// ProfileName is the only value of Config.Profile.
	ProfileName = "nats-jetstream-pull-v1"

	// MinBindings and MaxBindings bound len(Config.Bindings).
	MinBindings = 1
	MaxBindings = 256

	// MinTenants and MaxTenants bound len(Config.Tenants): the tenant
	// clients one configuration may create.
	MinTenants = 1
	MaxTenants = 8

	// MinPayloadBytes and MaxPayloadBytes bound Binding.MaxPayloadBytes, the
	// payload ceiling of one message (headers not counted).
	MinPayloadBytes = 1
	MaxPayloadBytes = 32 << 10

	// MinControlLineBytes and MaxControlLineBytes bound
	// Config.MaxControlLineBytes, the longest protocol line read from the
	// broker, CRLF counted. The floor leaves room for the longest MSG line a
	// valid binding can cause: a 256-byte subject and a v2 acknowledgement
	// subject naming a 255-byte stream and consumer take about 920 bytes.
	MinControlLineBytes = 1 << 10
	MaxControlLineBytes = 8 << 10

	// MinHeaderBytes and MaxHeaderBytes bound Config.MaxHeaderBytes, the
	// largest header block of one message, from "NATS/1.0" through the CRLF
	// of its blank line.
	MinHeaderBytes = 1 << 10
	MaxHeaderBytes = 8 << 10

	// MinOperationTimeoutMS and MaxOperationTimeoutMS bound
	// Binding.OperationTimeoutMS, the one original deadline of a delivery.
	MinOperationTimeoutMS = 100
	MaxOperationTimeoutMS = 10_000

	// MinRootBudgetMS is the least Binding.RootBudgetMS (positive); the most
	// is the binding's OperationTimeoutMS.
	MinRootBudgetMS = 1

	// MinPollIntervalMS and MaxPollIntervalMS bound Config.PollIntervalMS,
	// the one timer of the owner that paces empty visits.
	MinPollIntervalMS = 10
	MaxPollIntervalMS = 1_000

	// MinMaxDeliver and MaxMaxDeliver bound Binding.MaxDeliver, the
	// consumer's max_deliver.
	MinMaxDeliver = 1
	MaxMaxDeliver = 16

	// AckWaitMarginMS is how much Binding.AckWaitMS must exceed the
	// binding's OperationTimeoutMS at least; MaxAckWaitMS is its most.
	AckWaitMarginMS = 1_000
	MaxAckWaitMS    = 60_000

	// MinNakDelayMS and MaxNakDelayMS bound Binding.NakDelayMS, the delay
	// of a negative acknowledgement.
	MinNakDelayMS = 100
	MaxNakDelayMS = 10_000

	// MaxConfigBytes bounds the canonical encoding of a Config (and so the
	// input of ParseConfig, checked before it is decoded).
	MaxConfigBytes = 512 << 10

	// MaxIDLen bounds binding, tenant and provider IDs, in bytes.
	MaxIDLen = 64

	// MaxTargetNameLen bounds the principal, service, contract, function
	// and route of a binding (the target of its activations), in bytes.
	MaxTargetNameLen = 256

	// MaxAssetNameLen bounds stream and consumer names, in bytes: the
	// broker's own limit (JSMaxNameLen), pull.MaxNameLen.
	MaxAssetNameLen = pull.MaxNameLen

	// MaxFilterSubjectLen bounds a filter subject, in bytes:
	// pull.MaxFilterSubjectLen.
	MaxFilterSubjectLen = pull.MaxFilterSubjectLen

	// MaxServerNameLen bounds a TLS server name (a DNS name), in bytes:
	// conn.MaxServerNameLen.
	MaxServerNameLen = conn.MaxServerNameLen

	// MaxViolations bounds the violations one ConfigError carries; past it
	// ConfigError.Truncated is set.
	MaxViolations = 1_000

	// maxDepth bounds the nesting of JSON values ParseConfig decodes. A
	// valid configuration nests four deep.
	maxDepth = 16
)
