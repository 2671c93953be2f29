package refhost

import (
	"math"

	"github.com/latent-systems/latent-nats/trigger"
)

// MediaType names the payload encoding this package reads and writes.
const MediaType = "application/vnd.latent.wit-values.v1+json"

// Bounds of the codec. Each has a test at the bound and one past it.
const (
	// maxPayloadBytes bounds one payload, the whole argument array with its
	// whitespace: the profile's largest payload ceiling,
	// trigger.MaxPayloadBytes. Decode refuses a longer input before
	// reading it; Append refuses to write a longer one.
	maxPayloadBytes = trigger.MaxPayloadBytes

	// maxParams bounds the parameters of one function.
	maxParams = 32

	// MaxTypeDepth bounds the nesting of a type: a scalar has depth 1 and
	// each constructor (list, option, tuple, record, variant, result) adds
	// one to the deepest of its parts. An enum has depth 1. A payload's
	// JSON nesting, the argument array included, is at most MaxTypeDepth.
	MaxTypeDepth = 32

	// MaxTypeNodes bounds the size of one signature: the number of types
	// in all its parameters, each field and case counted as one more.
	MaxTypeNodes = 1024

	// maxFieldNameLen bounds a field or case name, and a declared failure code,
	// in bytes.
	maxFieldNameLen = 64

	// maxTypeTextBytes bounds the input of ParseType.
	maxTypeTextBytes = 64 << 10
)

// Bounds of the host. Each has a test at the bound and one past it.
const (
	// MaxAdmission bounds Config.MaxActivations, the admission slots: the
	// reservations (and so activations) that may exist at once.
	MaxAdmission = 1024

	// MaxInputAllocation bounds Config.MaxInputBytes, the input allocation
	// all held reservations may share, in bytes.
	MaxInputAllocation = MaxAdmission * maxPayloadBytes

	// maxIdentifierLen bounds service, contract, function, revision, route,
	// tenant and principal names given to the host, in bytes: the bound of
	// a binding's target names, trigger.MaxTargetNameLen (a tenant ID is
	// shorter: trigger's TestUnexportedBoundsAgree).
	maxIdentifierLen = trigger.MaxTargetNameLen

	// maxDeclaredFailures bounds Function.Failures.
	maxDeclaredFailures = 64

	// MaxMemoryAllocation bounds Config.MaxMemoryBytes, the guest memory
	// all held reservations may share, in bytes: 64 GiB (64 activations at
	// wasmhost's largest ceiling), or the largest int on a 32-bit platform.
	MaxMemoryAllocation = min(64<<30, math.MaxInt)

	// maxContractFunctions bounds the functions of one Contract.
	maxContractFunctions = 256
)
