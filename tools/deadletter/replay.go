package deadletter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/internal/wire"
	"github.com/latent-systems/latent-nats/parser"
)

// HeaderMsgID is the header the broker deduplicates a publish by, within
// the stream's duplicate window (nats-server 2.14.6 JSMsgId).
const HeaderMsgID = "Nats-Msg-Id"

// brokerHeaderPrefix begins every header the broker gives a meaning to
// (Nats-Msg-Id, Nats-Expected-*, Nats-TTL, Nats-Rollup, the republish
// fields, ...); compared without regard to case.
const brokerHeaderPrefix = "nats-"

// replayIDPrefix begins the Nats-Msg-Id of a replay.
const replayIDPrefix = "latent-replay."

// ReplayID returns the Nats-Msg-Id a replay of message seq of stream
// carries: "latent-replay.<stream>.<seq>". A second replay of the same
// message within the stream's duplicate window (2 minutes unless the
// stream sets another) is a duplicate the broker does not store again.
func ReplayID(stream string, seq uint64) string {
	return replayIDPrefix + stream + "." + strconv.FormatUint(seq, 10)
}

// Field is one header field of a message.
type Field struct {
	Name, Value string
}

// Fields returns the header fields of m the producer set, in order:
// every field but those whose name begins with "Nats-" in any case (the
// broker's own, republish fields included). A header block the broker
// returned that parser.ParseHeader refuses is ErrMalformedReply.
func (m Message) Fields() ([]Field, error) {
	if len(m.Header) == 0 {
		return nil, nil
	}
	if _, _, err := parser.ParseHeader(m.Header); err != nil {
		return nil, fmt.Errorf("%w: header block: %w", ErrMalformedReply, err)
	}
	var out []Field
	// ParseHeader accepted the block: a first line, "Name:Value" lines,
	// each ended by CRLF, then a blank line.
	_, rest, _ := bytes.Cut(m.Header, []byte("\r\n"))
	for {
		line, more, _ := bytes.Cut(rest, []byte("\r\n"))
		if len(line) == 0 {
			return out, nil
		}
		rest = more
		name, value, _ := bytes.Cut(line, []byte(":"))
		if strings.HasPrefix(strings.ToLower(string(name)), brokerHeaderPrefix) {
			continue
		}
		out = append(out, Field{Name: string(name), Value: string(bytes.Trim(value, " \t"))})
	}
}

// ReplayOptions shape a replay.
type ReplayOptions struct {
	// NoHeaders replays the payload alone, without the producer's header
	// fields.
	NoHeaders bool
}

// Replayed is the broker's acknowledgement of a replay.
type Replayed struct {
	// Stream and Seq are the stream that stored the replay and its new
	// sequence there: a new message, which its consumer delivers with a
	// delivery count of 1.
	Stream string
	Seq    uint64
	// Duplicate reports a replay the stream had already stored within its
	// duplicate window under the same ReplayID; Seq is then that earlier
	// replay's, and nothing new was stored.
	Duplicate bool
}

// pubAckJSON is the publish acknowledgement of nats-server 2.14.6
// (JSPubAckResponse).
type pubAckJSON struct {
	Error     *apiErrorJSON `json:"error"`
	Stream    string        `json:"stream"`
	Seq       uint64        `json:"seq"`
	Duplicate bool          `json:"duplicate"`
}

// Replay publishes m again to its subject, through JetStream: its payload,
// its producer's header fields (Fields; none with opts.NoHeaders) and
// Nats-Msg-Id ReplayID(m.Stream, m.Seq), and returns the broker's
// verified acknowledgement. Without an acknowledgement the replay may or
// may not be stored; calling Replay again is safe within the duplicate
// window. The user must be allowed to publish to m.Subject; the trigger
// runtime's user is not.
//
// Errors: ErrHeaderNotReplayable (nothing sent), ErrNoStream,
// *APIError (the stream refused it), ErrMalformedReply,
// ErrRequestDenied and the connection's.
func (c *Client) Replay(ctx context.Context, m Message, opts ReplayOptions) (Replayed, error) {
	if err := wire.ValidPublishSubject(m.Subject); err != nil {
		return Replayed{}, fmt.Errorf("%w: subject: %w", ErrInvalidArgument, err)
	}
	var kv []string
	if !opts.NoHeaders {
		fields, err := m.Fields()
		if err != nil {
			return Replayed{}, err
		}
		for _, f := range fields {
			kv = append(kv, f.Name, f.Value)
		}
	}
	kv = append(kv, HeaderMsgID, ReplayID(m.Stream, m.Seq))
	header, err := wire.AppendHeader(nil, kv...)
	if err != nil {
		return Replayed{}, fmt.Errorf("%w: %w", ErrHeaderNotReplayable, err)
	}
	var out Replayed
	err = c.request(ctx, m.Subject, header, m.Data, func(r conn.Reply) error {
		if err := jspull.ReplyStatus(&r, ErrNoStream, ErrUnexpectedStatus); err != nil {
			return err
		}
		var ack pubAckJSON
		if json.Unmarshal(r.Payload, &ack) != nil {
			return fmt.Errorf("%w: not a publish acknowledgement", ErrMalformedReply)
		}
		if ack.Error != nil {
			return &APIError{Code: ack.Error.Code, ErrCode: ack.Error.ErrCode}
		}
		if ack.Stream == "" || ack.Seq == 0 {
			return fmt.Errorf("%w: acknowledgement without stream or sequence", ErrMalformedReply)
		}
		out = Replayed{Stream: ack.Stream, Seq: ack.Seq, Duplicate: ack.Duplicate}
		return nil
	})
	return out, err
}
