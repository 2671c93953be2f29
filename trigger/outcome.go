package trigger

import (
	"time"

	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/pull"
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
// outcome: the step sends nothing then (pull.ActionNone).
func ActionFor(o Outcome, delivered uint64, maxDeliver int) pull.Action {
	switch o {
	case OutcomeSuccess:
		return pull.ActionAck
	case OutcomeDeclaredFailure,
		OutcomeInvalidArguments,
		OutcomeIncompatibleContract,
		OutcomeAuthenticationRejected,
		OutcomePermissionRejected:
		return pull.ActionTerm
	}
	// Timeout, cancellation, platform failure and anything unknown.
	if maxDeliver > 0 && delivered >= uint64(maxDeliver) {
		return pull.ActionExhausted
	}
	return pull.ActionNak
}

// termReason is the fixed TERM reason the broker puts in its terminated
// advisory: the outcome's name, never text from the activation.
func termReason(a pull.Action, o Outcome) string {
	if a == pull.ActionExhausted {
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
// pull.ActionNone (and anything outside the list), which sends nothing.
func commandFor(a pull.Action, o Outcome, nakDelay time.Duration) (jspull.Command, bool) {
	switch a {
	case pull.ActionAck:
		return jspull.Ack(), true
	case pull.ActionTerm, pull.ActionExhausted:
		return jspull.Term(termReason(a, o)), true
	case pull.ActionNak:
		return jspull.Nak(nakDelay), true
	}
	return jspull.Command{}, false
}
