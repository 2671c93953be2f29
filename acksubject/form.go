package acksubject

import "strconv"

// Form is the layout of an acknowledgement subject.
type Form uint8

const (
	// FormClassic is the 9-token form nats-server emits by default:
	// $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<timestamp>.<pending>.
	FormClassic Form = iota + 1

	// FormV2 is the 11-token form emitted under the js_ack_fc_v2 feature
	// flag, here only with the "_" (no) domain:
	// $JS.ACK._.<account hash>.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<timestamp>.<pending>.
	FormV2
)

// String returns "classic" or "v2", or "Form(n)" for a value outside the
// enumeration.
func (f Form) String() string {
	switch f {
	case FormClassic:
		return "classic"
	case FormV2:
		return "v2"
	}
	return "Form(" + strconv.Itoa(int(f)) + ")"
}

// streamIndex returns the token index of the stream name in the form.
func (f Form) streamIndex() int {
	if f == FormV2 {
		return v2StreamIndex
	}
	return classicStreamIndex
}

// Field names the part of a subject an error is about.
type Field uint8

const (
	// FieldSubject is the subject as a whole (its length or token count),
	// or the Form of an Info.
	FieldSubject Field = iota + 1
	// FieldPrefix is token 0 ("$JS") or token 1 ("ACK").
	FieldPrefix
	// FieldDomain is the v2 domain token.
	FieldDomain
	// FieldAccountHash is the v2 account-hash token.
	FieldAccountHash
	// FieldStream is the stream name.
	FieldStream
	// FieldConsumer is the consumer name.
	FieldConsumer
	// FieldDelivered is the delivery count.
	FieldDelivered
	// FieldStreamSeq is the stream sequence.
	FieldStreamSeq
	// FieldConsumerSeq is the consumer (delivery) sequence.
	FieldConsumerSeq
	// FieldTimestamp is the message timestamp.
	FieldTimestamp
	// FieldPending is the pending count.
	FieldPending
)

// String returns the field's name in lower case, or "Field(n)" for a value
// outside the enumeration.
func (f Field) String() string {
	switch f {
	case FieldSubject:
		return "subject"
	case FieldPrefix:
		return "prefix"
	case FieldDomain:
		return "domain"
	case FieldAccountHash:
		return "account hash"
	case FieldStream:
		return "stream"
	case FieldConsumer:
		return "consumer"
	case FieldDelivered:
		return "delivered"
	case FieldStreamSeq:
		return "stream sequence"
	case FieldConsumerSeq:
		return "consumer sequence"
	case FieldTimestamp:
		return "timestamp"
	case FieldPending:
		return "pending"
	}
	return "Field(" + strconv.Itoa(int(f)) + ")"
}
