package parser

// Frame is one decoded server frame. Which fields are set depends on Op:
//
//	OpInfo: Info
//	OpMsg:  Subject, SID, Reply (nil when absent or empty), Payload
//	OpHMsg: Subject, SID, Reply, Header, Status, Description, Payload
//	OpErr:  ErrText
//	OpPing, OpPong, OpOK: nothing else
//
// Every slice aliases the Parser's buffer and is valid only until the next
// call to Next or Reset; copy what must outlive it. Slices are cut with full
// slice expressions (capacity = length), so appending to one copies instead
// of writing into the buffer.
type Frame struct {
	Op Op
	// Subject is the subject the message was published to.
	Subject []byte
	// SID is the subscription id token, as the client sent it in SUB.
	SID []byte
	// Reply is the reply subject, nil when the frame carries none: when the
	// token is absent and when it is the empty token nats-server writes for
	// an empty reply (two spaces before the size).
	Reply []byte
	// Header is the raw header block, "NATS/1.0" through the terminating
	// blank line (hdr_len bytes), validated by the header grammar.
	Header []byte
	// Status is the 3-digit status code of the header's first line, 0 when
	// there is none (and always 0 for MSG).
	Status int
	// Description is the text after the status code, empty when absent.
	Description []byte
	// Payload is the message body (size bytes for MSG, total_len - hdr_len
	// for HMSG), without the trailing CRLF. It is non-nil for MSG and HMSG,
	// possibly empty.
	Payload []byte
	// Info is the INFO JSON object, "{" through "}", undecoded.
	Info []byte
	// ErrText is the -ERR text without the surrounding single quotes.
	ErrText []byte
}

// HeaderValue returns the value of the first header field whose name is
// exactly key (case-sensitive, as the server's own lookups are), with
// surrounding spaces and tabs trimmed. It does not allocate. It reports false
// when the frame has no header block or no such field.
func (f *Frame) HeaderValue(key string) ([]byte, bool) {
	return HeaderValue(f.Header, key)
}
