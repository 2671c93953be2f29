package parser

import (
	"fmt"
	"strconv"
)

const (
	// MaxLine caps a control line (the op, its arguments and the terminating
	// CRLF, which counts): 8 KiB. The server does not cap its own outbound
	// lines; INFO with many connect_urls is the longest line it sends, and
	// 8 KiB is twice the server's own default inbound cap (4096).
	MaxLine = 8192

	// MaxHeaderBlock caps the header block of an HMSG: 8 KiB, counting the
	// status line, every field line with its CRLF, and the terminating blank
	// line (CRLF). It is the hdr_len the server announces.
	MaxHeaderBlock = 8192

	// MaxFramePayload caps Limits.MaxPayload: 64 MiB, the server's default
	// max_pending, above which the server refuses its own max_payload. It
	// bounds the buffer a Parser allocates. (conn.MaxPayloadLimit, the
	// smaller cap of a connection's payload, fits under it.)
	MaxFramePayload = 64 << 20

	// maxSizeDigits is the longest size token: the server parses sizes with
	// at most 9 digits (server/util.go parseSize), so 999999999 is the
	// largest value and no size can overflow an int.
	maxSizeDigits = 9

	// minHeaderBlock is the shortest valid header block, "NATS/1.0\r\n\r\n".
	minHeaderBlock = len(headerVersion) + 4

	// maxEmptyReads bounds consecutive (0, nil) reads before io.ErrNoProgress.
	maxEmptyReads = 100
)

// Limits are the caps of one Parser. The payload cap is the caller's (the
// negotiated or configured maximum); the other two may be at most 8 KiB.
//
// Limits are validated, never clamped: a field <= 0, a MaxControlLine above
// MaxLine, a MaxHeader above MaxHeaderBlock or a MaxPayload above
// MaxFramePayload makes the first Next return an error wrapping
// ErrInvalidLimits, and New allocates nothing for such limits.
type Limits struct {
	// MaxControlLine caps a control line, CRLF included (1..MaxLine).
	MaxControlLine int
	// MaxHeader caps an HMSG header block as announced in hdr_len, its
	// terminating blank line included (1..MaxHeaderBlock).
	MaxHeader int
	// MaxPayload caps the payload of a MSG (its size) and of an HMSG
	// (total_len - hdr_len); the trailing CRLF is not counted
	// (1..MaxFramePayload).
	MaxPayload int
}

// DefaultLimits returns the 8 KiB line and header caps with the given
// payload cap.
func DefaultLimits(maxPayload int) Limits {
	return Limits{MaxControlLine: MaxLine, MaxHeader: MaxHeaderBlock, MaxPayload: maxPayload}
}

// Validate reports whether the limits are usable, wrapping ErrInvalidLimits
// when they are not.
func (l Limits) Validate() error {
	switch {
	case l.MaxControlLine <= 0 || l.MaxControlLine > MaxLine:
		return fmt.Errorf("%w: max control line out of range", ErrInvalidLimits)
	case l.MaxHeader <= 0 || l.MaxHeader > MaxHeaderBlock:
		return fmt.Errorf("%w: max header out of range", ErrInvalidLimits)
	case l.MaxPayload <= 0 || l.MaxPayload > MaxFramePayload:
		return fmt.Errorf("%w: max payload out of range", ErrInvalidLimits)
	}
	return nil
}

// BufferSize is the memory a Parser with these limits holds: room for the
// largest frame they admit (a full control line, a full header block, a full
// payload and its CRLF). It is 0 for invalid limits.
func (l Limits) BufferSize() int {
	if l.Validate() != nil {
		return 0
	}
	return l.MaxControlLine + l.MaxHeader + l.MaxPayload + 2
}

// msgSizeDigits names a size token outside 1 to maxSizeDigits digits in
// the error of a frame that carries one.
var msgSizeDigits = "size not 1 to " + strconv.Itoa(maxSizeDigits) + " digits"
