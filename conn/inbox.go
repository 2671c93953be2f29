package conn

import (
	"crypto/rand"
	"fmt"
	"io"
	"math"
	"strconv"
)

const (
	// inboxTokenLen is the length of the random inbox token: 22 base62
	// characters, about 131 bits.
	inboxTokenLen = 22
	// randRounds bounds the reads from the random source when filling one
	// token (rejection sampling keeps 248 of 256 byte values).
	randRounds = 8
	// inboxSID is the one subscription id of a connection.
	inboxSID = "1"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// randomToken fills dst with base62 characters drawn from r without modulo
// bias.
func randomToken(r io.Reader, dst []byte) error {
	if r == nil {
		r = rand.Reader
	}
	var buf [64]byte
	n := 0
	for range randRounds {
		if _, err := io.ReadFull(r, buf[:]); err != nil {
			return fmt.Errorf("%w: %w", ErrRandom, err)
		}
		for _, b := range buf {
			if b >= 248 { // 248 = 4 * 62
				continue
			}
			dst[n] = base62[b%62]
			n++
			if n == len(dst) {
				return nil
			}
		}
	}
	return ErrRandom
}

// maxReplyLen bounds a reply subject "<prefix>.<token>.<n>": the longest
// prefix, the token, two dots and the 20 digits of the largest uint64.
const maxReplyLen = MaxInboxPrefixLen + 1 + inboxTokenLen + 1 + maxSeqDigits

// maxSeqDigits is len("18446744073709551615"), the longest uint64.
const maxSeqDigits = 20

// inbox is a connection's private inbox: "<prefix>.<token>" with one
// subscription on "<prefix>.<token>.*" and a reply subject
// "<prefix>.<token>.<n>" per request, n counting from 1.
type inbox struct {
	base string // "<prefix>.<token>."
	seq  uint64
	// reply holds base and, after it, the digits of the current reply
	// subject; next rewrites the digits in place.
	reply [maxReplyLen]byte
}

func newInbox(r io.Reader, prefix string) (inbox, error) {
	if len(prefix) > MaxInboxPrefixLen {
		return inbox{}, ErrInvalidConfig
	}
	var tok [inboxTokenLen]byte
	if err := randomToken(r, tok[:]); err != nil {
		return inbox{}, err
	}
	b := inbox{base: prefix + "." + string(tok[:]) + "."}
	copy(b.reply[:], b.base)
	return b, nil
}

// subject is the subscription subject.
func (b *inbox) subject() string { return b.base + "*" }

// next returns a fresh reply subject. It aliases the inbox and is valid
// until the next call of next; it does not allocate.
func (b *inbox) next() []byte {
	b.seq++
	out := strconv.AppendUint(b.reply[:len(b.base)], b.seq, 10)
	return out[:len(out):len(out)]
}

// current returns the reply subject next returned last. It aliases the
// inbox, as next's does, and does not allocate.
func (b *inbox) current() []byte {
	out := strconv.AppendUint(b.reply[:len(b.base)], b.seq, 10)
	return out[:len(out):len(out)]
}

// unnext takes back the reply subject of a request that was never written.
func (b *inbox) unnext() { b.seq-- }

// earlier reports whether subject is the reply subject of a request made
// before the current one on this connection: under the inbox, then a
// decimal n in canonical form (no sign, no leading zero, at most
// maxSeqDigits digits, no overflow) with 1 <= n < seq. It reads the
// digits in place and does not allocate.
func (b *inbox) earlier(subject []byte) bool {
	n, ok := b.seqOf(subject)
	return ok && n < b.seq
}

// issued reports whether subject is the reply subject of any request made
// on this connection so far (1 <= n <= seq): between requests, a status
// may still arrive for the last one.
func (b *inbox) issued(subject []byte) bool {
	n, ok := b.seqOf(subject)
	return ok && n <= b.seq
}

// seqOf returns the request sequence of a reply subject under the inbox
// (see parseSeq); ok is false for any other subject.
func (b *inbox) seqOf(subject []byte) (uint64, bool) {
	if !b.under(subject) {
		return 0, false
	}
	return parseSeq(subject[len(b.base):])
}

// parseSeq reads a canonical decimal uint64 of at least 1: digits only, no
// leading zero, no overflow.
func parseSeq(d []byte) (uint64, bool) {
	if len(d) == 0 || len(d) > maxSeqDigits || d[0] == '0' {
		return 0, false
	}
	var n uint64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		v := uint64(c - '0')
		if n > (math.MaxUint64-v)/10 {
			return 0, false
		}
		n = n*10 + v
	}
	return n, true
}

// under reports whether subject lies under the inbox.
func (b *inbox) under(subject []byte) bool {
	return len(subject) > len(b.base) && string(subject[:len(b.base)]) == b.base
}
