package provision

import (
	"context"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
)

// Bounds of the timeout of one dial or request: the delivery operation
// timeout range of the profile, which pull's Inspect also enforces.
const (
	MinTimeout     = pull.MinOpTimeout
	MaxTimeout     = pull.MaxOpTimeout
	DefaultTimeout = 5 * time.Second
)

// ClientName is the client name this package sends in CONNECT.
const ClientName = "latent-nats-provision"

// ConnConfig returns the connection configuration for a tenant's exact
// destination with the given secret: the destination's address (and its
// opt-in when non-public), server name, root certificates and SPKI pin.
func ConnConfig(d trigger.Destination, secret *credential.Secret) (conn.Config, error) {
	roots, err := d.CertPool()
	if err != nil {
		return conn.Config{}, fmt.Errorf("%w: destination root certificates: %w", ErrInvalidOptions, err)
	}
	cfg := conn.Config{
		Addr:       d.Address,
		ServerName: d.ServerName,
		Roots:      roots,
		Credential: secret,
		Name:       ClientName,
	}
	if d.AllowNonPublic {
		cfg.AllowNonPublic = d.Address.Addr()
	}
	if d.SPKISHA256 != "" {
		pin, err := hex.DecodeString(d.SPKISHA256)
		if err != nil || len(pin) != len(cfg.SPKIPin) {
			return conn.Config{}, fmt.Errorf("%w: destination spki pin", ErrInvalidOptions)
		}
		copy(cfg.SPKIPin[:], pin)
	}
	return cfg, nil
}

// Client is one connection to a tenant's broker with credentials allowed to
// manage streams and consumers (an operator's or account administrator's
// user, never the trigger runtime's). It is not safe for concurrent use.
type Client struct {
	conn    *conn.Conn
	timeout time.Duration
}

// Dial connects with cfg. timeout bounds the dial and, later, each request
// (MinTimeout to MaxTimeout; zero means DefaultTimeout). The broker must
// announce JetStream (ErrNoJetStream).
func Dial(ctx context.Context, cfg conn.Config, timeout time.Duration) (*Client, error) {
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if timeout < MinTimeout || timeout > MaxTimeout {
		return nil, fmt.Errorf("%w: timeout out of range", ErrInvalidOptions)
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

// request sends one request bounded by the client's timeout and hands the
// reply to decode before the connection's buffer is reused.
func (c *Client) request(ctx context.Context, subject string, payload []byte, decode func(conn.Reply) error) error {
	rctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	r, err := c.conn.Request(rctx, subject, nil, payload)
	if err != nil {
		return err
	}
	return decode(r)
}
