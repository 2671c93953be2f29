package deadletter

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/parser"
	"github.com/latent-systems/latent-nats/tools/provision"
)

// Holder says where Client.Message found a message.
type Holder uint8

const (
	// HolderStream: the message's own stream still holds it (limits
	// retention, or a give-up of the broker's own, KindMaxDeliveries).
	HolderStream Holder = iota + 1
	// HolderCopy: the stream removed it, and the copy capture
	// (provision.CopyStream) holds the copy its stream republished when it
	// stored it.
	HolderCopy
)

// String returns "stream" or "copy".
func (h Holder) String() string {
	switch h {
	case HolderStream:
		return "stream"
	case HolderCopy:
		return "copy"
	default:
		return "Holder(" + strconv.Itoa(int(h)) + ")"
	}
}

// Headers the broker adds to a republished copy (nats-server 2.14.6
// stream.go: JSStream, JSSubject, JSSequence, JSTimeStamp).
const (
	headerStream    = "Nats-Stream"
	headerSubject   = "Nats-Subject"
	headerSequence  = "Nats-Sequence"
	headerTimeStamp = "Nats-Time-Stamp"
)

// maxCopyProbes bounds the requests of one copy search: the two ends and
// a binary search over at most 2^64 capture sequences.
const maxCopyProbes = 2 + 64

// Message is a stored message, as the broker returned it.
type Message struct {
	// Stream and Seq are the message's stream and its sequence there.
	Stream string
	Seq    uint64
	// Subject is the subject it was published to.
	Subject string
	// Time is when its stream stored it (UTC).
	Time time.Time
	// Header is its header block as the broker returned it, nil when it
	// has none: the producer's fields, and for a copy the broker's
	// republish fields (Nats-Stream, Nats-Subject, Nats-Sequence,
	// Nats-Time-Stamp, Nats-Last-Sequence) after them. Fields lists them.
	Header []byte
	// Data is its payload.
	Data []byte
	// Holder is where it was found; CopySeq is the copy's sequence in the
	// copy capture (HolderCopy only).
	Holder  Holder
	CopySeq uint64
}

// Message returns message seq of stream: from the stream itself when it
// still holds it ($JS.API.STREAM.MSG.GET.<stream>), else the copy its
// stream republished into the copy capture, found by a binary search over
// the copies of that stream ordered by their Nats-Sequence (at most
// maxCopyProbes requests, each bounded by the client's timeout; ctx
// bounds the whole). The search assumes the copies were stored in the
// order of their stream's sequences, which one stream leader publishing
// them in order gives; a copy stored out of that order (a leader change
// in between) may not be found.
//
// Errors: ErrInvalidArgument, ErrStreamNotFound, ErrGone (neither holds
// it), ErrMalformedReply (a copy without the broker's republish headers),
// ErrRequestDenied and the connection's.
func (c *Client) Message(ctx context.Context, stream string, seq uint64) (Message, error) {
	if err := jspull.ValidName(stream); err != nil {
		return Message{}, fmt.Errorf("%w: stream: %w", ErrInvalidArgument, err)
	}
	if seq == 0 {
		return Message{}, fmt.Errorf("%w: sequence 0", ErrInvalidArgument)
	}
	m, found, err := c.msgGet(ctx, stream, msgGetRequest{Seq: seq}, ErrStreamNotFound)
	if err != nil {
		return Message{}, err
	}
	if found {
		return Message{Stream: stream, Seq: m.Seq, Subject: m.Subject, Time: m.Time.UTC(), Header: m.Header, Data: m.Data, Holder: HolderStream}, nil
	}
	return c.findCopy(ctx, stream, seq)
}

// copyOf is a copy read from the copy capture: the stored message and the
// sequence of its original.
type copyOf struct {
	m   storedJSON
	seq uint64
}

// findCopy searches the copy capture for the copy of message seq of
// stream.
func (c *Client) findCopy(ctx context.Context, stream string, seq uint64) (Message, error) {
	filter := provision.CopySubjectPrefix + "." + stream + ".>"
	get := func(req msgGetRequest) (copyOf, bool, error) {
		m, found, err := c.msgGet(ctx, provision.CopyStream, req, ErrGone)
		if err != nil || !found {
			return copyOf{}, false, err
		}
		orig, err := copySequence(m, stream)
		return copyOf{m: m, seq: orig}, true, err
	}
	first, found, err := get(msgGetRequest{NextFor: filter})
	if err != nil || !found {
		return Message{}, gone(err)
	}
	last, _, err := get(msgGetRequest{LastFor: filter})
	if err != nil {
		return Message{}, err
	}
	if seq < first.seq || seq > last.seq {
		return Message{}, ErrGone
	}
	// The copy sought lies in capture sequences [lo, hi], if anywhere.
	lo, hi := first.m.Seq, last.m.Seq
	for range maxCopyProbes - 2 {
		if lo > hi {
			break
		}
		mid := lo + (hi-lo)/2
		next, found, err := get(msgGetRequest{Seq: mid, NextFor: filter})
		switch {
		case err != nil:
			return Message{}, err
		case !found || next.m.Seq > hi || next.seq > seq:
			// Nothing in [mid, hi] is the copy: it lies before mid
			// (mid >= lo >= 1).
			hi = mid - 1
		case next.seq < seq:
			lo = next.m.Seq + 1
		default:
			return copyMessage(stream, next), nil
		}
	}
	return Message{}, ErrGone
}

// gone maps "no copy at all" to ErrGone and keeps other errors.
func gone(err error) error {
	if err == nil {
		return ErrGone
	}
	return err
}

// copySequence returns the sequence of the original of a copy of a
// message of stream: its Nats-Sequence header, with Nats-Stream naming
// stream.
func copySequence(m storedJSON, stream string) (uint64, error) {
	if len(m.Header) == 0 {
		return 0, fmt.Errorf("%w: a copy without the republish headers", ErrMalformedReply)
	}
	if _, _, err := parser.ParseHeader(m.Header); err != nil {
		return 0, fmt.Errorf("%w: a copy's header block: %w", ErrMalformedReply, err)
	}
	name, ok := parser.HeaderValue(m.Header, headerStream)
	if !ok || string(name) != stream {
		return 0, fmt.Errorf("%w: a copy of another stream", ErrMalformedReply)
	}
	v, ok := parser.HeaderValue(m.Header, headerSequence)
	if !ok {
		return 0, fmt.Errorf("%w: a copy without its sequence", ErrMalformedReply)
	}
	seq, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil || seq == 0 {
		return 0, fmt.Errorf("%w: a copy's sequence", ErrMalformedReply)
	}
	return seq, nil
}

// copyMessage returns the message a copy holds: the original's subject
// and time from the republish headers (else the copy's subject without
// its prefix, and the copy's time).
func copyMessage(stream string, cp copyOf) Message {
	m := Message{
		Stream: stream, Seq: cp.seq, Subject: strings.TrimPrefix(cp.m.Subject, provision.CopySubjectPrefix+"."+stream+"."), Time: cp.m.Time.UTC(),
		Header: cp.m.Header, Data: cp.m.Data, Holder: HolderCopy, CopySeq: cp.m.Seq,
	}
	if v, ok := parser.HeaderValue(cp.m.Header, headerSubject); ok {
		m.Subject = string(v)
	}
	if v, ok := parser.HeaderValue(cp.m.Header, headerTimeStamp); ok {
		if t, err := time.Parse(time.RFC3339Nano, string(v)); err == nil {
			m.Time = t.UTC()
		}
	}
	return m
}
