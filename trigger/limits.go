package trigger

import (
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
)

// The bounds of the nats-jetstream-pull-v1 profile ("Profile setting /
// Supported bound"). Every one is checked by Validate and ParseConfig, and
// each has a test at the bound and one past it. Durations are integer
// milliseconds, as in the JSON. A bound the profile shares with pull or conn
// is theirs, converted here: a configuration Validate accepts is one they
// accept.
const (
	// ProfileName is the only value of Config.Profile.
	ProfileName = "nats-jetstream-pull-v1"

	// minBindings and MaxBindings bound len(Config.Bindings).
	minBindings = 1
	MaxBindings = 256

	// minTenants and MaxTenants bound len(Config.Tenants): the tenant
	// clients one configuration may create.
	minTenants = 1
	MaxTenants = 8

	// minPayloadBytes and MaxPayloadBytes bound Binding.MaxPayloadBytes, the
	// payload ceiling of one message (headers not counted), 1 to 32,768
	// bytes: the pull layer's bounds of a binding's payload ceiling
	// (internal/jspull's MinPayloadCeiling and MaxPayloadCeiling).
	minPayloadBytes = jspull.MinPayloadCeiling
	MaxPayloadBytes = jspull.MaxPayloadCeiling

	// minControlLineBytes and maxControlLineBytes bound
	// Config.MaxControlLineBytes, the longest protocol line read from the
	// broker, CRLF counted. The floor leaves room for the longest MSG line a
	// valid binding can cause: a 256-byte subject and a v2 acknowledgement
	// subject naming a 255-byte stream and consumer take about 920 bytes.
	// They are conn's bounds of Config.MaxControlLine: conn.MinReadCap and
	// conn.MaxReadLine.
	minControlLineBytes = conn.MinReadCap
	maxControlLineBytes = conn.MaxReadLine

	// minHeaderBytes and maxHeaderBytes bound Config.MaxHeaderBytes, the
	// largest header block of one message, from "NATS/1.0" through the CRLF
	// of its blank line: conn's bounds of Config.MaxHeader, conn.MinReadCap
	// and conn.MaxReadHeader.
	minHeaderBytes = conn.MinReadCap
	maxHeaderBytes = conn.MaxReadHeader

	// minOperationTimeoutMS and maxOperationTimeoutMS bound
	// Binding.OperationTimeoutMS, the one original deadline of a delivery,
	// 100 to 10,000: the pull layer's bounds (internal/jspull's
	// MinOpTimeout and MaxOpTimeout).
	minOperationTimeoutMS = int(jspull.MinOpTimeout / time.Millisecond)
	maxOperationTimeoutMS = int(jspull.MaxOpTimeout / time.Millisecond)

	// minRootBudgetMS is the least Binding.RootBudgetMS (positive); the most
	// is the binding's OperationTimeoutMS.
	minRootBudgetMS = 1

	// MinPollIntervalMS and maxPollIntervalMS bound Config.PollIntervalMS,
	// the one timer of the owner that paces empty visits.
	MinPollIntervalMS = 10
	maxPollIntervalMS = 1_000

	// minMaxDeliver and MaxMaxDeliver bound Binding.MaxDeliver, the
	// consumer's max_deliver, 1 to 16: the pull layer's bounds
	// (internal/jspull's MinMaxDeliver and MaxMaxDeliver).
	minMaxDeliver = jspull.MinMaxDeliver
	MaxMaxDeliver = jspull.MaxMaxDeliver

	// AckWaitMarginMS, 1,000, is how much Binding.AckWaitMS must exceed
	// the binding's OperationTimeoutMS at least; maxAckWaitMS, 60,000, is
	// its most (internal/jspull's AckWaitMargin and MaxAckWait).
	AckWaitMarginMS = int(jspull.AckWaitMargin / time.Millisecond)
	maxAckWaitMS    = int(jspull.MaxAckWait / time.Millisecond)

	// MinNakDelayMS and maxNakDelayMS bound Binding.NakDelayMS, the delay
	// of a negative acknowledgement, 100 to 10,000: the pull layer's bounds
	// (internal/jspull's MinNakDelay and MaxNakDelay).
	MinNakDelayMS = int(jspull.MinNakDelay / time.Millisecond)
	maxNakDelayMS = int(jspull.MaxNakDelay / time.Millisecond)

	// MaxConfigBytes bounds the canonical encoding of a Config (and so the
	// input of ParseConfig, checked before it is decoded).
	MaxConfigBytes = 512 << 10

	// maxIDLen bounds binding, tenant and provider IDs, in bytes.
	maxIDLen = 64

	// MaxTargetNameLen bounds the principal, service, contract, function
	// and route of a binding (the target of its activations), in bytes.
	MaxTargetNameLen = 256

	// maxAssetNameLen bounds stream and consumer names, in bytes: the
	// broker's own limit (JSMaxNameLen), jspull.MaxNameLen.
	maxAssetNameLen = jspull.MaxNameLen

	// maxFilterSubjectLen bounds a filter subject, in bytes:
	// jspull.MaxFilterSubjectLen.
	maxFilterSubjectLen = jspull.MaxFilterSubjectLen

	// maxServerNameLen bounds a TLS server name (a DNS name), in bytes:
	// conn.MaxServerNameLen.
	maxServerNameLen = conn.MaxServerNameLen

	// maxViolations bounds the violations one ConfigError carries; past it
	// ConfigError.Truncated is set.
	maxViolations = 1_000

	// maxDepth bounds the nesting of JSON values ParseConfig decodes. A
	// valid configuration nests four deep.
	maxDepth = 16
)
