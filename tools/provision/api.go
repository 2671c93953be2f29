package provision

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
)

// JetStream API subjects of nats-server 2.14.6 (server/jetstream_api.go:
// JSApiStreamInfo, JSApiStreamCreate, JSApiConsumerCreateEx,
// JSApiConsumerInfo). The profile check of consumer info goes through
// jspull.Consumer.Inspect, which owns it; this package asks consumer info
// itself only for the replica count.
const (
	streamInfoPrefix     = "$JS.API.STREAM.INFO."
	streamCreatePrefix   = "$JS.API.STREAM.CREATE."
	consumerCreatePrefix = "$JS.API.CONSUMER.CREATE."
	consumerInfoPrefix   = "$JS.API.CONSUMER.INFO."
)

// consumerActionCreate makes a consumer-create request fail (10148) rather
// than update a consumer that exists with another configuration.
const consumerActionCreate = "create"

// apiErrorJSON is the "error" object of a JetStream API reply.
type apiErrorJSON struct {
	Code    int `json:"code"`
	ErrCode int `json:"err_code"`
	// Description is the broker's text: accepted by the strict decoders,
	// never kept.
	Description string `json:"description"`
}

// err returns the *APIError, or nil when e is nil.
func (e *apiErrorJSON) err() error {
	if e == nil {
		return nil
	}
	return &APIError{Code: e.Code, ErrCode: e.ErrCode}
}

// streamInfoReply holds what this package reads of a stream info or
// stream create reply; the broker sends more, which is ignored.
type streamInfoReply struct {
	Error  *apiErrorJSON `json:"error"`
	Config *struct {
		Name       string          `json:"name"`
		Subjects   []string        `json:"subjects"`
		Retention  string          `json:"retention"`
		Storage    string          `json:"storage"`
		MaxMsgSize int64           `json:"max_msg_size"`
		Replicas   int             `json:"num_replicas"`
		RePublish  *RePublish      `json:"republish"`
		Mirror     json.RawMessage `json:"mirror"`
		Sources    json.RawMessage `json:"sources"`
	} `json:"config"`
}

// consumerCreateReply holds what this package reads of a consumer create
// reply: whether it is an error. The consumer itself is then checked with
// jspull's Inspect.
type consumerCreateReply struct {
	Type  string        `json:"type"`
	Error *apiErrorJSON `json:"error"`
}

// consumerCreateRequest is the body of $JS.API.CONSUMER.CREATE.<s>.<c>
// (CreateConsumerRequest in nats-server 2.14.6).
type consumerCreateRequest struct {
	Stream string         `json:"stream_name"`
	Config ConsumerConfig `json:"config"`
	Action string         `json:"action"`
}

// replyJSON checks that r is a plain reply (no status) and decodes its
// payload into v, leniently: unknown fields are ignored. A bare 503 (no
// description, no payload: nothing listens) is ErrNoJetStream.
func replyJSON(r conn.Reply, v any) error {
	if err := jspull.ReplyStatus(&r, ErrNoJetStream, ErrUnexpectedStatus); err != nil {
		return err
	}
	if err := json.Unmarshal(r.Payload, v); err != nil {
		return fmt.Errorf("%w: not the expected JSON object", ErrMalformedReply)
	}
	return nil
}

// closedJSON decodes exactly one JSON object from b into v, refusing
// unknown fields and trailing data. It is encoding/json under those two
// refusals (keys matched without case, a repeated key's last value kept,
// invalid UTF-8 replaced), for the broker's replies to this tool's own
// requests; what the runtime reads from an operator or the broker goes
// through internal/jsonlex's stricter lexer.
func closedJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: not the expected JSON object", ErrMalformedReply)
	}
	if dec.More() {
		return fmt.Errorf("%w: data after the JSON object", ErrMalformedReply)
	}
	return nil
}
