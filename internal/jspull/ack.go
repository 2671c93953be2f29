package jspull

import (
	"fmt"
	"strconv"
	"time"

	"github.com/latent-systems/latent-nats/pull"
)

// Limits of an acknowledgement command.
const (
	// MinNakDelay and MaxNakDelay bound Command.Delay of a NAK (inclusive).
	MinNakDelay = 100 * time.Millisecond
	MaxNakDelay = 10 * time.Second

	// MaxTermReasonLen bounds Command.Reason of a TERM, in bytes.
	MaxTermReasonLen = 128
)

// maxCommandLen is the longest acknowledgement payload appendCommand
// writes: "+TERM " and a reason of MaxTermReasonLen bytes.
const maxCommandLen = len(termPrefix) + 1 + MaxTermReasonLen

// Acknowledgement payloads (nats-server 2.14.6 consumer.go AckAck, AckNak,
// AckTerm; processNak reads the JSON delay in nanoseconds).
const (
	ackPayload = "+ACK"
	termPrefix = "+TERM"
	nakPrefix  = `-NAK {"delay":`
	nakSuffix  = "}"
)

// Command is one acknowledgement.
type Command struct {
	Action pull.Action
	// Delay is the NAK delay, MinNakDelay to MaxNakDelay; zero for other
	// actions.
	Delay time.Duration
	// Reason is the optional TERM reason, put in the broker's terminated
	// advisory: printable ASCII, no leading or trailing space (the broker
	// would trim it), at most MaxTermReasonLen bytes; empty for other
	// actions.
	Reason string
}

// Ack returns the +ACK command.
func Ack() Command { return Command{Action: pull.ActionAck} }

// Nak returns a -NAK command with a redelivery delay.
func Nak(delay time.Duration) Command { return Command{Action: pull.ActionNak, Delay: delay} }

// Term returns a +TERM command with an optional reason.
func Term(reason string) Command { return Command{Action: pull.ActionTerm, Reason: reason} }

// Validate checks the command against its limits.
func (c Command) Validate() error {
	switch c.Action {
	case pull.ActionAck:
		if c.Delay != 0 || c.Reason != "" {
			return fmt.Errorf("%w: ack takes no delay or reason", ErrInvalidAction)
		}
	case pull.ActionNak:
		if c.Reason != "" {
			return fmt.Errorf("%w: nak takes no reason", ErrInvalidAction)
		}
		if c.Delay < MinNakDelay || c.Delay > MaxNakDelay {
			return ErrInvalidNakDelay
		}
	case pull.ActionTerm:
		if c.Delay != 0 {
			return fmt.Errorf("%w: term takes no delay", ErrInvalidAction)
		}
		return validReason(c.Reason)
	default:
		return ErrInvalidAction
	}
	return nil
}

func validReason(r string) error {
	if len(r) > MaxTermReasonLen {
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidTermReason, MaxTermReasonLen)
	}
	for i := 0; i < len(r); i++ {
		if r[i] < 0x20 || r[i] > 0x7e {
			return fmt.Errorf("%w: not printable ascii", ErrInvalidTermReason)
		}
	}
	if r != "" && (r[0] == ' ' || r[len(r)-1] == ' ') {
		return fmt.Errorf("%w: leading or trailing space", ErrInvalidTermReason)
	}
	return nil
}

// String returns the payload Ack sends for c: "+ACK", "+TERM",
// "+TERM <reason>" or `-NAK {"delay":<ns>}`; "invalid" when c is not
// valid (see Validate).
func (c Command) String() string {
	var buf [maxCommandLen]byte
	b, err := appendCommand(buf[:0], c)
	if err != nil {
		return "invalid"
	}
	return string(b)
}

// appendCommand validates c and appends its payload to dst: "+ACK",
// "+TERM", "+TERM <reason>" or `-NAK {"delay":<ns>}`. On error dst is
// returned unchanged. It does not allocate when dst has maxCommandLen bytes
// of room.
func appendCommand(dst []byte, c Command) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return dst, err
	}
	switch c.Action {
	case pull.ActionAck:
		dst = append(dst, ackPayload...)
	case pull.ActionNak:
		dst = append(dst, nakPrefix...)
		dst = strconv.AppendInt(dst, int64(c.Delay), 10)
		dst = append(dst, nakSuffix...)
	case pull.ActionTerm:
		dst = append(dst, termPrefix...)
		if c.Reason != "" {
			dst = append(dst, ' ')
			dst = append(dst, c.Reason...)
		}
	}
	return dst, nil
}

// DeliveryID names one delivery of one message, as its ack subject does.
type DeliveryID struct {
	// StreamSeq is the message's stream sequence.
	StreamSeq uint64
	// ConsumerSeq is the consumer's delivery sequence.
	ConsumerSeq uint64
	// Delivered is the delivery count, 1 on the first delivery.
	Delivered uint64
}

// Receipt is the result of one acknowledgement.
type Receipt struct {
	// Outcome is set for every command that was handed to the connection:
	// pull.AckVerified, pull.AckVerifiedLate or pull.AckUncertain.
	Outcome pull.AckState
	// Action is the command's action.
	Action pull.Action
	// Delivery is the delivery the command acknowledged.
	Delivery DeliveryID
	// Late is how long after the delivery's ack-wait deadline the receipt
	// arrived (pull.AckVerifiedLate only).
	Late time.Duration
}

// receiptOutcome decides Verified or VerifiedLate for a receipt seen at
// `at` for a delivery whose ack-wait deadline is deadline.
func receiptOutcome(at, deadline time.Time) (pull.AckState, time.Duration) {
	if at.After(deadline) {
		return pull.AckVerifiedLate, at.Sub(deadline)
	}
	return pull.AckVerified, 0
}
