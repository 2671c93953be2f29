// Package parser owns the decoding of the frames a NATS server sends a
// client (INFO, MSG, HMSG, PING, PONG, +OK and -ERR), with a closed grammar
// and fixed caps, and refuses everything else: any byte sequence
// nats-server 2.14.6 would not emit is an error, and no announced size is
// trusted before it is checked.
//
// # Contents
//
//   - Caps: [Limits], [MaxLine], [MaxHeaderBlock] and [MaxFramePayload],
//     and how each one counts CRLF.
//   - The frame vocabulary [Op], and [Frame] with its zero-copy lifetime.
//   - Reading: [Parser], [New] and [Parser.Next] over one fixed buffer;
//     control-line arguments and size tokens.
//   - Header blocks: the grammar, [ParseHeader], [HeaderValue] and
//     [HeaderValueFold].
//   - Errors: sentinels and the typed [Error].
//
// # Grammar
//
// Exactly these control lines are accepted, with CRLF and single spaces
// (except for the empty reply below):
//
//	INFO {json} \r\n                          (note the space before CRLF)
//	MSG <subject> <sid> [<reply>] <size>\r\n<payload>\r\n
//	HMSG <subject> <sid> [<reply>] <hdr> <total>\r\n<header block><payload>\r\n
//	PING\r\n
//	PONG\r\n
//	+OK\r\n
//	-ERR '<text>'\r\n
//
// Op names are upper case only. An argument token is one or more bytes other
// than space, tab, CR, LF. Size tokens are 1 to 9 ASCII digits, leading
// zeros allowed (the server forwards a publisher's size token verbatim, so
// "007" arrives as written); the value is what counts. A longer token is
// malformed, as the server itself never accepts one, so no size can overflow.
//
// The one empty token accepted is the reply's. When a message carries a
// reply that is present but empty, as the answers of the server's system
// services do ($SYS.REQ.SERVER.PING.CONNZ, $SYS.REQ.ACCOUNT.*.CONNZ, ...),
// nats-server writes it as an empty token: exactly two single spaces between
// sid and the first size.
//
//	MSG <subject> <sid>  <size>\r\n<payload>\r\n
//	HMSG <subject> <sid>  <hdr> <total>\r\n<header block><payload>\r\n
//
// [Frame.Reply] is then nil, as when the reply is absent. Every other empty
// token is malformed: three or more spaces there, two spaces between any
// other tokens or after the op, an empty token followed by a reply, a tab in
// place of either space.
//
// The header block of an HMSG has its own closed grammar, see [ParseHeader].
//
// # Memory
//
// A [Parser] allocates one buffer in [New], sized from its [Limits], and never
// grows it: whatever the input, its memory is fixed. In steady state [Parser.Next]
// allocates nothing; the slices in a [Frame] alias that buffer and are valid
// until the next call to Next or Reset.
//
// # Errors
//
// Errors are final: once Next has returned an error, every later call returns
// an error too (the same one). A clean end of input between two frames is
// [io.EOF]; an end inside a frame matches [io.ErrUnexpectedEOF]. Grammar and
// limit errors are [*Error] values that match the exported sentinels with
// [errors.Is]; their messages never contain bytes from the input.
package parser
