package pull

import "strconv"

// Action is what is sent to the broker for one delivery. ActionAck,
// ActionNak and ActionTerm are the commands the pull layer sends.
// ActionExhausted (a +TERM sent at the consumer's last delivery) and
// ActionNone (nothing sent) complete the vocabulary of a report of one
// delivery; the pull layer refuses them as commands. trigger's
// StepReport.Action is of this type.
type Action uint8

const (
	// ActionAck (+ACK): processed, never redeliver.
	ActionAck Action = iota + 1
	// ActionNak (-NAK {"delay":ns}): redeliver after the delay.
	ActionNak
	// ActionTerm (+TERM [reason]): never redeliver, not processed.
	ActionTerm
	// ActionExhausted: a +TERM for a retryable failure at the consumer's
	// last delivery, reported as exhausted.
	ActionExhausted
	// ActionNone: nothing was sent.
	ActionNone
)

// String returns "ack", "nak", "term", "exhausted", "none" (for ActionNone
// and for zero: no delivery, so no action), or "Action(n)" outside the
// enumeration.
func (a Action) String() string {
	switch a {
	case ActionAck:
		return "ack"
	case ActionNak:
		return "nak"
	case ActionTerm:
		return "term"
	case ActionExhausted:
		return "exhausted"
	case 0, ActionNone:
		return "none"
	}
	return "Action(" + strconv.Itoa(int(a)) + ")"
}

// AckState is what is known of an acknowledgement. It is the one
// vocabulary: package trigger's StepReport.Ack is of this type.
type AckState uint8

const (
	// AckVerified: the broker's empty receipt arrived before the
	// delivery's ack-wait deadline.
	AckVerified AckState = iota + 1
	// AckVerifiedLate: the receipt arrived, but after the delivery's
	// ack-wait deadline; the broker may already have redelivered the
	// message.
	AckVerifiedLate
	// AckUncertain: the command may have been written but no receipt was
	// seen (a deadline, a lost connection, a partial write, any other
	// reply). The broker may or may not have recorded it. It is never
	// retried.
	AckUncertain
	// AckNone: no command was sent. Only package trigger's report holds
	// it: the pull layer's receipt of a command always has one of the
	// three above.
	AckNone
)

// String returns "verified", "verified late", "uncertain" or "none", or
// "AckState(n)" outside the enumeration.
func (s AckState) String() string {
	switch s {
	case AckVerified:
		return "verified"
	case AckVerifiedLate:
		return "verified late"
	case AckUncertain:
		return "uncertain"
	case AckNone:
		return "none"
	}
	return "AckState(" + strconv.Itoa(int(s)) + ")"
}

// Verified reports whether the broker's receipt was seen (late or not).
func (s AckState) Verified() bool { return s == AckVerified || s == AckVerifiedLate }
