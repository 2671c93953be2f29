package pull

import "strconv"

// Op names the three operations of a pull visit.
type Op uint8

const (
	// OpInspect is the consumer-info request.
	OpInspect Op = iota + 1
	// OpNext is the pull request for one message.
	OpNext
	// OpAck is the acknowledgement with its receipt.
	OpAck
)

// String returns "inspect", "next" or "ack", or "Op(n)" outside the
// enumeration.
func (o Op) String() string {
	switch o {
	case OpInspect:
		return "inspect"
	case OpNext:
		return "next"
	case OpAck:
		return "ack"
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}
