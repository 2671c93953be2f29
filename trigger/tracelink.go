package trigger

import "github.com/latent-systems/latent-nats/conn"

// traceparentHeader is the header field an event's W3C trace context
// travels in (W3C Trace Context, level 1). Its name is matched under ASCII
// case folding, as HTTP matches it: producers that propagate through an
// HTTP header carrier write "Traceparent".
const traceparentHeader = "traceparent"

// Trace context sizes, surrounding spaces and tabs of the header value not
// counted.
const (
	// traceparentLen is the length of a version 00 traceparent, and the
	// least of any version: "vv-" 32 hex "-" 16 hex "-ff".
	traceparentLen = 55
	// maxTraceparentLen is the longest traceparent read: a later version
	// may append fields after the flags and a '-'; a longer value is no
	// link. No version defined so far is longer than traceparentLen.
	maxTraceparentLen = 128
)

// spanIDLen is the length of a W3C parent-id, in bytes.
const spanIDLen = 8

// SpanID is the W3C parent-id of the producer's span.
type SpanID [spanIDLen]byte

// String returns the lower-case hex form.
func (id SpanID) String() string {
	var out [2 * spanIDLen]byte
	return string(appendHex(out[:0], id[:]))
}

// TraceLink is the W3C trace context an event carried, handed to the host
// beside the activation's own fresh Trace as a link: never its parent. It
// selects nothing (principal, lineage, route, budget and deadline come
// from the binding) and it is the same whatever the event's other headers.
// The zero value is no link: the event carried no traceparent, several,
// or one that does not follow the grammar (docs/RELIABILITY.md, "Trace
// context").
type TraceLink struct {
	// Version is the traceparent's version, 0 for level 1; never 0xff.
	Version byte
	// TraceID and SpanID are the producer's trace-id and parent-id,
	// neither all zero.
	TraceID TraceID
	SpanID  SpanID
	// Flags are the trace flags as written; bit 0 is "sampled", the other
	// bits mean what the version defines (none in version 00).
	Flags byte
}

// IsValid reports whether l is a link (the zero value is not).
func (l TraceLink) IsValid() bool { return l.TraceID != TraceID{} }

// Sampled reports whether the producer's sampled flag is set.
func (l TraceLink) Sampled() bool { return l.Flags&1 != 0 }

// String returns the link's traceparent form, traceparentLen bytes: for
// version 00 exactly the bytes it was parsed from; for a later version
// those bytes without the fields after the flags. It returns "none" for
// no link.
func (l TraceLink) String() string {
	if !l.IsValid() {
		return "none"
	}
	var out [traceparentLen]byte
	b := appendHex(out[:0], []byte{l.Version})
	b = append(b, '-')
	b = appendHex(b, l.TraceID[:])
	b = append(b, '-')
	b = appendHex(b, l.SpanID[:])
	b = append(b, '-')
	b = appendHex(b, []byte{l.Flags})
	return string(b)
}

// parseTraceparent parses a traceparent header value with the closed
// grammar of W3C Trace Context level 1:
//
//	version "-" trace-id "-" parent-id "-" trace-flags
//
// with version 2, trace-id 32, parent-id 16 and trace-flags 2 lower-case
// hex digits; version ff, an all-zero trace-id and an all-zero parent-id
// are invalid. Version 00 is exactly traceparentLen bytes. A later version
// may continue after the flags, with a '-' next and at most
// maxTraceparentLen bytes in all; what follows the '-' is not read.
// Anything else (upper-case hex, other separators, surrounding spaces)
// is no link: the zero TraceLink and false. It does not allocate.
func parseTraceparent(v []byte) (TraceLink, bool) {
	if len(v) < traceparentLen || len(v) > maxTraceparentLen {
		return TraceLink{}, false
	}
	var l TraceLink
	var ver [1]byte
	ok := decodeHex(ver[:], v[0:2]) && v[2] == '-' &&
		decodeHex(l.TraceID[:], v[3:35]) && v[35] == '-' &&
		decodeHex(l.SpanID[:], v[36:52]) && v[52] == '-'
	var flags [1]byte
	ok = ok && decodeHex(flags[:], v[53:55])
	switch {
	case !ok, ver[0] == 0xff, l.TraceID == TraceID{}, l.SpanID == SpanID{}:
		return TraceLink{}, false
	case len(v) > traceparentLen && (ver[0] == 0 || v[traceparentLen] != '-'):
		return TraceLink{}, false
	}
	l.Version, l.Flags = ver[0], flags[0]
	return l, true
}

// traceLinkOf returns the link of a delivered message's header block (one
// the connection's parser accepted, or empty): the traceparent field when
// the block has exactly one, under any case of its name, and it parses;
// otherwise no link. It reads the block in place and does not allocate.
func traceLinkOf(header []byte) TraceLink {
	if len(header) == 0 {
		return TraceLink{}
	}
	v, n := conn.HeaderValueFold(header, traceparentHeader)
	if n != 1 {
		return TraceLink{}
	}
	l, _ := parseTraceparent(v)
	return l
}

// decodeHex decodes lower-case hex src into dst, len(src) == 2*len(dst).
func decodeHex(dst, src []byte) bool {
	for i := range dst {
		hi, ok1 := lowerHex(src[2*i])
		lo, ok2 := lowerHex(src[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

func lowerHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// appendHex appends the lower-case hex form of src.
func appendHex(dst, src []byte) []byte {
	const digits = "0123456789abcdef"
	for _, c := range src {
		dst = append(dst, digits[c>>4], digits[c&0x0f])
	}
	return dst
}
