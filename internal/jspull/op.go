package jspull

import "strconv"

// operation names the three operations of a pull visit in the messages of
// a *ReplyError (the caller knows which one it called).
type operation uint8

const (
	// opInspect is the consumer-info request.
	opInspect operation = iota + 1
	// opNext is the pull request for one message.
	opNext
	// opAck is the acknowledgement with its receipt.
	opAck
)

// String returns "inspect", "next" or "ack", or "operation(n)" outside the
// enumeration.
func (o operation) String() string {
	switch o {
	case opInspect:
		return "inspect"
	case opNext:
		return "next"
	case opAck:
		return "ack"
	}
	return "operation(" + strconv.Itoa(int(o)) + ")"
}
