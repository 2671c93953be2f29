package provision

import (
	"context"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/trigger"
)

// Bounds of the timeout of one dial or request: the delivery operation
// timeout range of the profile, which jspull's Inspect also enforces.
const (
	MinTimeout     = jspull.MinOpTimeout
	MaxTimeout     = jspull.MaxOpTimeout
	DefaultTimeout = 5 * time.Second
)

// ReplicatedCreateTimeout is the least a request creating a replicated
// stream or consumer waits for its reply, whatever the client's timeout.
// nats-server 2.14.6 answers such a create once the asset's new Raft group
// has a leader: its preferred peer campaigns at once, but when that
// campaign fails (a peer has not started its node yet, as on a cluster
// just formed) the next election comes after an election timeout of 4 to
// 9 s (raft.go, minElectionTimeoutDefault and maxElectionTimeoutDefault).
// A shorter wait would report a failure while the asset is being created.
// This follows the server's source; the tests here have not met such an
// election (on a cluster whose routes are all up, an R3 run of this
// package takes under 0.6 s).
const ReplicatedCreateTimeout = 15 * time.Second

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
	return c.requestWithin(ctx, c.timeout, subject, payload, decode)
}

// createTimeout is the bound of a request creating an asset of replicas
// replicas: the client's timeout, and at least ReplicatedCreateTimeout
// for more than one replica.
func (c *Client) createTimeout(replicas int) time.Duration {
	if replicas > 1 {
		return max(c.timeout, ReplicatedCreateTimeout)
	}
	return c.timeout
}

// requestWithin is request bounded by timeout.
func (c *Client) requestWithin(ctx context.Context, timeout time.Duration, subject string, payload []byte, decode func(conn.Reply) error) error {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := c.conn.Request(rctx, subject, nil, payload)
	if err != nil {
		return denied(err, subject)
	}
	return decode(r)
}
