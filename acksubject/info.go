package acksubject

import "strconv"

// Info is what an acknowledgement subject says about one delivery.
type Info struct {
	// Form is the layout the subject was parsed from, or is to be
	// formatted in.
	Form Form
	// AccountHash is the v2 account-hash token (see AccountHash); empty in
	// the classic form.
	AccountHash string
	// Stream and Consumer name the consumer that delivered the message.
	Stream   string
	Consumer string
	// Delivered is the delivery count: 1 on first delivery, more on
	// redelivery.
	Delivered uint64
	// StreamSeq is the message's stream sequence.
	StreamSeq uint64
	// ConsumerSeq is the consumer (delivery) sequence.
	ConsumerSeq uint64
	// Pending is the broker's count of messages pending after this
	// delivery, often 0.
	Pending uint64
	// Timestamp is the message's store time in Unix nanoseconds.
	Timestamp int64
}

// invalidString is what String returns for an Info outside the grammar. It
// cannot be mistaken for a subject (it has no "$JS.ACK." prefix).
const invalidString = "acksubject.Info(invalid)"

// Validate reports whether i is inside the grammar, that is whether it
// formats to a subject Parse reads back into i. The *SyntaxError names the
// token index the failing field would have (-1 for the Form, or for an
// account hash set on a classic Info), so the errors of Validate and Parse
// agree for the same fault.
func (i Info) Validate() error {
	switch i.Form {
	case FormClassic:
		if i.AccountHash != "" {
			return syntaxError(-1, FieldAccountHash, RuleAccountHash)
		}
	case FormV2:
		if r := checkHash(i.AccountHash); r != 0 {
			return syntaxError(v2HashIndex, FieldAccountHash, r)
		}
	default:
		return syntaxError(-1, FieldSubject, RuleForm)
	}
	base := i.Form.streamIndex()
	if r := checkName(i.Stream); r != 0 {
		return syntaxError(base+offStream, FieldStream, r)
	}
	if r := checkName(i.Consumer); r != 0 {
		return syntaxError(base+offConsumer, FieldConsumer, r)
	}
	if i.Delivered == 0 {
		return syntaxError(base+offDelivered, FieldDelivered, RuleZero)
	}
	if i.StreamSeq == 0 {
		return syntaxError(base+offStreamSeq, FieldStreamSeq, RuleZero)
	}
	if i.ConsumerSeq == 0 {
		return syntaxError(base+offConsumerSeq, FieldConsumerSeq, RuleZero)
	}
	if i.Timestamp < 0 {
		return syntaxError(base+offTimestamp, FieldTimestamp, RuleSign)
	}
	return nil
}

// Append validates i and appends its subject to dst. It does not allocate
// when dst has room for the subject (MaxLen bytes always suffice). On error
// dst is returned unchanged.
func (i Info) Append(dst []byte) ([]byte, error) {
	if err := i.Validate(); err != nil {
		return dst, err
	}
	return i.append(dst), nil
}

// String returns the subject i formats to: for an Info returned by Parse,
// exactly the subject it was parsed from. For an Info that Validate refuses
// it returns a fixed marker that is not a subject; use Validate or Append
// to learn why.
func (i Info) String() string {
	if i.Validate() != nil {
		return invalidString
	}
	var buf [MaxLen]byte
	return string(i.append(buf[:0]))
}

// append formats a validated i.
func (i Info) append(dst []byte) []byte {
	dst = append(dst, ackPrefix...)
	if i.Form == FormV2 {
		dst = append(dst, noDomain...)
		dst = append(dst, '.')
		dst = append(dst, i.AccountHash...)
		dst = append(dst, '.')
	}
	dst = append(dst, i.Stream...)
	dst = append(dst, '.')
	dst = append(dst, i.Consumer...)
	dst = append(dst, '.')
	dst = strconv.AppendUint(dst, i.Delivered, 10)
	dst = append(dst, '.')
	dst = strconv.AppendUint(dst, i.StreamSeq, 10)
	dst = append(dst, '.')
	dst = strconv.AppendUint(dst, i.ConsumerSeq, 10)
	dst = append(dst, '.')
	dst = strconv.AppendInt(dst, i.Timestamp, 10)
	dst = append(dst, '.')
	dst = strconv.AppendUint(dst, i.Pending, 10)
	return dst
}
