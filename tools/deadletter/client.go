package deadletter

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/tools/provision"
)

// Bounds of the timeout of one dial or request: provision's.
const (
	MinTimeout     = provision.MinTimeout
	MaxTimeout     = provision.MaxTimeout
	DefaultTimeout = provision.DefaultTimeout
)

// ClientName is the client name this package sends in CONNECT.
const ClientName = "latent-nats-deadletter"

// MaxReplyBytes is the payload cap of this package's connections, the
// largest conn allows (conn.MaxPayloadLimit, 1 MiB): a stored message
// comes back base64 in a JSON reply, a third larger than itself.
const MaxReplyBytes = conn.MaxPayloadLimit

// JetStream API subjects of nats-server 2.14.6 (jetstream_api.go,
// JSApiMsgGet).
const msgGetPrefix = "$JS.API.STREAM.MSG.GET."

// Client is one connection to a tenant's account with credentials allowed
// to read streams and to publish to the bindings' subjects: the account
// administrator's or an operator's, never the trigger runtime's. It is
// not safe for concurrent use.
type Client struct {
	conn    *conn.Conn
	timeout time.Duration
}

// Dial connects with cfg (provision.ConnConfig builds it from a tenant's
// destination); its MaxPayload is raised to MaxReplyBytes and an empty
// Name set to ClientName. timeout bounds the dial and, later, each
// request (MinTimeout to MaxTimeout; zero means DefaultTimeout). The
// broker must announce JetStream (ErrNoJetStream).
func Dial(ctx context.Context, cfg conn.Config, timeout time.Duration) (*Client, error) {
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if timeout < MinTimeout || timeout > MaxTimeout {
		return nil, fmt.Errorf("%w: timeout out of range", ErrInvalidArgument)
	}
	cfg.MaxPayload = MaxReplyBytes
	if cfg.Name == "" {
		cfg.Name = ClientName
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := conn.Dial(dctx, cfg)
	if err != nil {
		return nil, err
	}
	if !c.JetStream() {
		_ = c.Close()
		return nil, ErrNoJetStream
	}
	return &Client{conn: c, timeout: timeout}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// request sends one request with header (none when empty) bounded by the
// client's timeout and hands the reply to decode before the connection's
// buffer is reused.
func (c *Client) request(ctx context.Context, subject string, header, payload []byte, decode func(conn.Reply) error) error {
	rctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	defer c.conn.Detach() // before cancel: ending rctx then runs nothing
	r, err := c.conn.Request(rctx, subject, header, payload)
	if err != nil {
		return denied(err, subject)
	}
	return decode(r)
}

// apiErrorJSON is the "error" object of a JetStream API reply; its
// description is the broker's text and is never kept.
type apiErrorJSON struct {
	Code    int `json:"code"`
	ErrCode int `json:"err_code"`
}

// storedJSON is the message of a $JS.API.STREAM.MSG.GET reply
// (nats-server 2.14.6 StoredMsg): header and data base64 in the JSON.
type storedJSON struct {
	Subject string    `json:"subject"`
	Seq     uint64    `json:"seq"`
	Header  []byte    `json:"hdrs"`
	Data    []byte    `json:"data"`
	Time    time.Time `json:"time"`
}

// msgGetRequest is the body of $JS.API.STREAM.MSG.GET.<stream>
// (JSApiMsgGetRequest): a sequence, or the first message at or after it
// whose subject matches NextFor, or the last message whose subject
// matches LastFor.
type msgGetRequest struct {
	Seq     uint64 `json:"seq,omitempty"`
	NextFor string `json:"next_by_subj,omitempty"`
	LastFor string `json:"last_by_subj,omitempty"`
}

// msgGet asks stream for one stored message. found is false when the
// stream holds none that answers (10037). A stream that does not exist
// is missing (10059).
func (c *Client) msgGet(ctx context.Context, stream string, req msgGetRequest, missing error) (m storedJSON, found bool, err error) {
	body, err := json.Marshal(req)
	if err != nil {
		return storedJSON{}, false, fmt.Errorf("%w: request: %w", ErrInvalidArgument, err)
	}
	err = c.request(ctx, msgGetPrefix+stream, nil, body, func(r conn.Reply) error {
		if err := jspull.ReplyStatus(&r, ErrNoJetStream, ErrUnexpectedStatus); err != nil {
			return err
		}
		var reply struct {
			Error   *apiErrorJSON `json:"error"`
			Message *storedJSON   `json:"message"`
		}
		if json.Unmarshal(r.Payload, &reply) != nil {
			return fmt.Errorf("%w: not the expected JSON object", ErrMalformedReply)
		}
		switch {
		case reply.Error != nil && reply.Error.ErrCode == errCodeNoMessageFound:
			return nil
		case reply.Error != nil && reply.Error.ErrCode == jspull.CodeStreamNotFound:
			return missing
		case reply.Error != nil:
			return &APIError{Code: reply.Error.Code, ErrCode: reply.Error.ErrCode}
		case reply.Message == nil || reply.Message.Seq == 0:
			return fmt.Errorf("%w: a message without a sequence", ErrMalformedReply)
		}
		m, found = *reply.Message, true
		return nil
	})
	return m, found, err
}
