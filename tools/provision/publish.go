package provision

import (
	"context"
	"fmt"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
)

// PubAck is the broker's acknowledgement of a JetStream publish: the stream
// that stored the message and its sequence there.
type PubAck struct {
	// Stream is the stream that stored the message.
	Stream string
	// Seq is its stream sequence, at least 1.
	Seq uint64
	// Domain is the JetStream domain, empty for none.
	Domain string
	// Duplicate reports a message the stream had already stored under the
	// same Nats-Msg-Id; Seq is then the earlier message's.
	Duplicate bool
}

// pubAckJSON is the publish acknowledgement of nats-server 2.14.6
// (JSPubAckResponse): an error, or PubAck's fields.
type pubAckJSON struct {
	Error     *apiErrorJSON `json:"error"`
	Stream    string        `json:"stream"`
	Seq       uint64        `json:"seq"`
	Domain    string        `json:"domain"`
	Duplicate bool          `json:"duplicate"`
	Value     string        `json:"val"`
	Batch     string        `json:"batch"`
	Count     uint64        `json:"count"`
}

// Publish stores payload under subject in whichever stream captures it and
// returns the broker's verified acknowledgement: a publish with a reply
// subject, whose reply must be the JSON acknowledgement naming a stream and
// a sequence of at least 1. Without an acknowledgement the message may or
// may not be stored; Publish never retries.
//
// Errors: ErrNoStream (no stream captures the subject: nothing was stored),
// *APIError (the stream refused it, e.g. 10054 over max_msg_size),
// ErrMalformedReply, ErrUnexpectedStatus, or the connection's error
// (permission, deadline, closed).
func (c *Client) Publish(ctx context.Context, subject string, payload []byte) (PubAck, error) {
	var ack PubAck
	err := c.request(ctx, subject, payload, func(r conn.Reply) error {
		var err error
		ack, err = parsePubAck(r)
		return err
	})
	return ack, err
}

// parsePubAck verifies a publish acknowledgement.
func parsePubAck(r conn.Reply) (PubAck, error) {
	if err := jspull.ReplyStatus(&r, ErrNoStream, ErrUnexpectedStatus); err != nil {
		return PubAck{}, err
	}
	var j pubAckJSON
	if err := closedJSON(r.Payload, &j); err != nil {
		return PubAck{}, err
	}
	if err := j.Error.err(); err != nil {
		return PubAck{}, err
	}
	if j.Stream == "" || j.Seq == 0 {
		return PubAck{}, fmt.Errorf("%w: acknowledgement without stream or sequence", ErrMalformedReply)
	}
	return PubAck{Stream: j.Stream, Seq: j.Seq, Domain: j.Domain, Duplicate: j.Duplicate}, nil
}
