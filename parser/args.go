package parser

import (
	"encoding/binary"
	"math/bits"
)

const (
	// maxArgs is the most argument tokens any op takes (HMSG with a reply).
	maxArgs = 5
	// maxMsgArgs is the most argument tokens of MSG (with a reply).
	maxMsgArgs = 4
	// replyArg is the position of the reply among the arguments of MSG and
	// HMSG (after subject and sid), the one place an empty token may stand.
	replyArg = 2
)

// span is a token's [start, end) offsets from the start of its frame. Offsets,
// not slices, survive the buffer compaction that may happen while the rest
// of the frame is read.
type span struct{ start, end int }

// splitArgs splits args (which begins at offset base of the frame) on single
// spaces into dst, at most limit (<= maxArgs) tokens. A token is one or more
// bytes other than space, tab, CR and LF; empty tokens (leading, trailing or
// doubled spaces), a tab or CR anywhere, and more than limit tokens are
// malformed, with one exception: the empty reply token nats-server writes for
// a reply that is present but empty ("MSG <subject> <sid>  <size>", two
// spaces). An empty token at position replyArg with a space after it is
// skipped, as if absent, and at most limit-1 tokens may then be stored, so
// what remains has the shape of the frame without a reply (a reply token
// after it is one too many). Only one token is ever skipped. It returns the
// number of tokens stored, or -1 with a reason.
func splitArgs(args []byte, base, limit int, dst *[maxArgs]span) (int, string) {
	n := 0
	tok := 0
	i := 0
	skipped := false
	for {
		i = nextSeparator(args, i)
		if i < len(args) {
			switch args[i] {
			case ' ':
			case '\t':
				return -1, "tab in arguments"
			case '\r', '\n':
				return -1, "line break in arguments"
			default:
				// Another control byte: part of the token.
				i++
				continue
			}
		}
		if i == tok {
			if n != replyArg || i == len(args) || skipped {
				return -1, "empty argument"
			}
			skipped = true
			limit--
		} else {
			if n == limit {
				return -1, "too many arguments"
			}
			dst[n] = span{base + tok, base + i}
			n++
			if i == len(args) {
				return n, ""
			}
		}
		i++
		tok = i
	}
}

// nextSeparator returns the index of the first byte <= ' ' in b at or after
// i, or len(b). It tests eight bytes at a time: in
// (x - 0x21 per byte) & ^x & 0x80 per byte, the lowest set bit marks the
// first byte below 0x21 exactly (a borrow only ever propagates towards
// higher bytes, and bytes >= 0x80 are never marked).
func nextSeparator(b []byte, i int) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if m := (x - ones*0x21) & ^x & highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if b[i] <= ' ' {
			return i
		}
	}
	return len(b)
}

// parseSize decodes a size token: 1 to maxSizeDigits ASCII digits, leading
// zeros allowed. It returns -1 for anything else, so no value can overflow.
func parseSize(b []byte) int {
	if len(b) == 0 || len(b) > maxSizeDigits {
		return -1
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}
