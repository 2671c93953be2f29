package trigger

import (
	"time"

	"github.com/latent-systems/latent-nats/pull"
)

// Action is what the runtime sends to the broker for one delivery, the
// right-hand column of the profile's outcome table. It is pull's Action, so
// the report and the command cannot disagree; its String is "ack", "term",
// "nak", "exhausted" or "none" (for zero too: no delivery, so no action).
type Action = pull.Action

// Actions.
const (
	// ActionAck sends +ACK: processed, never redelivered.
	ActionAck = pull.ActionAck
	// ActionTerm sends +TERM: never redelivered, not processed.
	ActionTerm = pull.ActionTerm
	// ActionNak sends -NAK with the binding's delay: redelivered later.
	ActionNak = pull.ActionNak
	// ActionExhausted sends +TERM for a retryable failure at the
	// configured last delivery, and is reported as exhausted.
	ActionExhausted = pull.ActionExhausted
	// ActionNone sends nothing: the owner stopped (operator shutdown). The
	// delivery stays unacknowledged and the broker redelivers it after its
	// ack wait. A credential check that refuses the acknowledgement keeps
	// the planned action in the report and records AckNone instead.
	ActionNone = pull.ActionNone
)

// Retryable reports whether an outcome may succeed on another delivery:
// timeout, cancellation and platform failure (and, conservatively, any
// value outside the list). Everything the function or its contract decided
// is final.
func (o Outcome) Retryable() bool {
	switch o {
	case OutcomeSuccess,
		OutcomeDeclaredFailure,
		OutcomeInvalidArguments,
		OutcomeIncompatibleContract,
		OutcomeAuthenticationRejected,
		OutcomePermissionRejected:
		return false
	case OutcomeTimeout, OutcomeCancelled, OutcomePlatformFailure:
		return true
	}
	return true
}

// ActionFor maps an activation outcome to the broker action, exactly as the
// profile's table:
//
//	success                                        +ACK
//	declared application failure                   +TERM
//	invalid arguments, incompatible contract,
//	authentication or permission rejection         +TERM
//	timeout, cancellation, platform failure        delayed -NAK while delivered < maxDeliver
//	the same at the last delivery                  +TERM, reported exhausted
//
// delivered is the broker's delivery count of this delivery (1 on the
// first), maxDeliver the consumer's max_deliver. An outcome outside the
// list is treated as a platform failure. Operator shutdown is not an
// outcome: the step sends nothing then (ActionNone).
func ActionFor(o Outcome, delivered uint64, maxDeliver int) Action {
	switch o {
	case OutcomeSuccess:
		return ActionAck
	case OutcomeDeclaredFailure,
		OutcomeInvalidArguments,
		OutcomeIncompatibleContract,
		OutcomeAuthenticationRejected,
		OutcomePermissionRejected:
		return ActionTerm
	}
	// Timeout, cancellation, platform failure and anything unknown.
	if maxDeliver > 0 && delivered >= uint64(maxDeliver) {
		return ActionExhausted
	}
	return ActionNak
}

// termReason is the fixed TERM reason the broker puts in its terminated
// advisory: the outcome's name, never text from the activation.
func termReason(a Action, o Outcome) string {
	if a == ActionExhausted {
		return "exhausted"
	}
	switch o {
	case OutcomeDeclaredFailure:
		return "declared failure"
	case OutcomeInvalidArguments:
		return "invalid arguments"
	case OutcomeIncompatibleContract:
		return "incompatible contract"
	case OutcomeAuthenticationRejected:
		return "authentication rejected"
	case OutcomePermissionRejected:
		return "permission rejected"
	}
	return ""
}

// commandFor returns the acknowledgement of an action, and false for
// ActionNone (and anything outside the list), which sends nothing.
func commandFor(a Action, o Outcome, nakDelay time.Duration) (pull.Command, bool) {
	switch a {
	case ActionAck:
		return pull.Ack(), true
	case ActionTerm, ActionExhausted:
		return pull.Term(termReason(a, o)), true
	case ActionNak:
		return pull.Nak(nakDelay), true
	}
	return pull.Command{}, false
}
