package ledger

import (
	"strconv"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
)

// Cause is why an event was activated again: what the runtime knew of the
// settlement of the activation before.
type Cause uint8

// Causes of a re-execution. Every one but CauseAfterVerified explains it.
const (
	// CauseNak: the previous activation's retryable failure was answered
	// with a negative acknowledgement, which asks for the redelivery.
	CauseNak Cause = iota + 1
	// CauseUncertain: the previous acknowledgement may have been written
	// but its receipt never came (pull.AckUncertain).
	CauseUncertain
	// CauseNotSent: nothing was sent for the previous delivery (a check
	// said no, or the connection was gone before the command was written).
	CauseNotSent
	// CauseRefused: the broker refused the previous acknowledgement.
	CauseRefused
	// CauseShutdown: the owner stopped during the previous step; nothing
	// was sent.
	CauseShutdown
	// CauseLate: the previous receipt was verified after the ack wait, by
	// which time the broker may have redelivered.
	CauseLate
	// CauseUnreported: the previous activation ran but no step report
	// followed: the runtime's process died during the step.
	CauseUnreported
	// CauseAfterVerified: the previous acknowledgement (ACK or TERM) was
	// verified within the ack wait and the event still came back: the
	// broker lost a committed acknowledgement. The critical figure.
	CauseAfterVerified
)

// NumCauses is the number of causes; Cause values run from 1 to it.
const NumCauses = int(CauseAfterVerified)

// String returns the cause's name, or "Cause(n)" outside the list.
func (c Cause) String() string {
	switch c {
	case CauseNak:
		return "nak"
	case CauseUncertain:
		return "uncertain"
	case CauseNotSent:
		return "not sent"
	case CauseRefused:
		return "refused"
	case CauseShutdown:
		return "shutdown"
	case CauseLate:
		return "verified late"
	case CauseUnreported:
		return "unreported"
	case CauseAfterVerified:
		return "after verified"
	}
	return "Cause(" + strconv.Itoa(int(c)) + ")"
}

// causeOf returns the cause a settled activation gives the next activation
// of its event.
func causeOf(s *Settlement) Cause {
	switch {
	case s == nil:
		return CauseUnreported
	case s.Result == trigger.ResultShutdown:
		return CauseShutdown
	case s.Ack == pull.AckUncertain:
		return CauseUncertain
	case s.Ack == pull.AckVerifiedLate:
		return CauseLate
	case s.Ack == pull.AckVerified && s.Action == pull.ActionNak:
		return CauseNak
	case s.Ack == pull.AckVerified:
		return CauseAfterVerified
	case s.Error == trigger.ClassBrokerPermission:
		return CauseRefused
	}
	return CauseNotSent
}
