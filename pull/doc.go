// Package pull owns the vocabulary of what the runtime did with one
// delivery of the nats-jetstream-pull-v1 profile, as package trigger's
// StepReport reports it: the [Action] sent to the broker (ACK, NAK, TERM, a TERM at the last
// delivery, or nothing) and the [AckState] of its receipt (verified,
// verified late, uncertain, or nothing sent). It is the one vocabulary of
// both: the runtime's pull layer, which sends the commands and verifies
// their receipts, uses these types, and trigger.ActionFor maps an
// activation's outcome to an Action.
//
// The pull layer itself (consumer info checked against the profile, the
// no-wait pull of one, the verified acknowledgement, the permissions a
// binding needs) is the runtime's implementation and not part of the
// library's API; an embedder reaches it through package trigger.
//
// The package imports only the standard library.
package pull
