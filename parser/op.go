package parser

import "strconv"

// Op is the kind of a server frame.
type Op uint8

// The server frames, in the order the grammar lists them.
const (
	OpInfo Op = iota + 1 // INFO {json} \r\n
	OpMsg                // MSG <subject> <sid> [<reply>] <size>\r\n
	OpHMsg               // HMSG <subject> <sid> [<reply>] <hdr> <total>\r\n
	OpPing               // PING\r\n
	OpPong               // PONG\r\n
	OpOK                 // +OK\r\n
	OpErr                // -ERR '<text>'\r\n
)

// String returns the op's wire spelling ("INFO", "MSG", "HMSG", "PING",
// "PONG", "+OK", "-ERR"), or "Op(n)" for a value outside the enum.
func (o Op) String() string {
	switch o {
	case OpInfo:
		return "INFO"
	case OpMsg:
		return "MSG"
	case OpHMsg:
		return "HMSG"
	case OpPing:
		return "PING"
	case OpPong:
		return "PONG"
	case OpOK:
		return "+OK"
	case OpErr:
		return "-ERR"
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}
