package conn

import (
	"crypto/rand"
	"fmt"
	"io"
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

// inbox is a connection's private inbox: "<prefix>.<token>" with one
// subscription on "<prefix>.<token>.*" and a reply subject
// "<prefix>.<token>.<n>" per request.
type inbox struct {
	base string // "<prefix>.<token>."
	seq  uint64
	buf  []byte // reply subject scratch, capacity fixed at newInbox
}

func newInbox(r io.Reader, prefix string) (inbox, error) {
	var tok [inboxTokenLen]byte
	if err := randomToken(r, tok[:]); err != nil {
		return inbox{}, err
	}
	base := prefix + "." + string(tok[:]) + "."
	return inbox{base: base, buf: make([]byte, 0, len(base)+20)}, nil
}

// subject is the subscription subject.
func (b *inbox) subject() string { return b.base + "*" }

// next returns a fresh reply subject.
func (b *inbox) next() string {
	b.seq++
	b.buf = strconv.AppendUint(append(b.buf[:0], b.base...), b.seq, 10)
	return string(b.buf)
}

// unnext takes back the reply subject of a request that was never written.
func (b *inbox) unnext() { b.seq-- }

// earlier reports whether subject is the reply subject of a request made
// before the current one on this connection.
func (b *inbox) earlier(subject []byte) bool {
	if !b.under(subject) {
		return false
	}
	n, err := strconv.ParseUint(string(subject[len(b.base):]), 10, 64)
	return err == nil && n >= 1 && n < b.seq && strconv.FormatUint(n, 10) == string(subject[len(b.base):])
}

// under reports whether subject lies under the inbox.
func (b *inbox) under(subject []byte) bool {
	return len(subject) > len(b.base) && string(subject[:len(b.base)]) == b.base
}
