package clustertest

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/tools/broker"
)

// RequestTimeout bounds one request (its dial included) when the caller's
// context allows longer or sets no deadline.
const RequestTimeout = 5 * time.Second

// ClientName is the client name the requests' connections send in
// CONNECT.
const ClientName = "latent-nats-clustertest"

// Requester returns a broker.Requester that sends each request as creds
// to the first node of c, in index order, that runs and is not paused (so
// it keeps working while a node is killed or paused), on a connection of
// its own: conn.Dial with handshake-first TLS, the cluster's server name
// and roots, then one conn.Request, then Close. A request that misses its
// deadline (a group electing, whose info nobody answers) costs only that
// connection, and no late reply can answer a later request.
func Requester(c *broker.Cluster, creds broker.Creds) broker.Requester {
	return broker.RequestFunc(func(ctx context.Context, subject string, payload []byte) ([]byte, error) {
		for _, b := range c.Nodes() {
			if b.Running() && !b.Paused() {
				return request(ctx, b, creds, subject, payload)
			}
		}
		return nil, ErrNoNode
	})
}

// NodeRequester is Requester through node b only, whether or not it runs.
func NodeRequester(b *broker.Broker, creds broker.Creds) broker.Requester {
	return broker.RequestFunc(func(ctx context.Context, subject string, payload []byte) ([]byte, error) {
		return request(ctx, b, creds, subject, payload)
	})
}

// request dials b as creds, sends one request and returns a copy of the
// reply's payload.
func request(ctx context.Context, b *broker.Broker, creds broker.Creds, subject string, payload []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	file, err := creds.File()
	if err != nil {
		return nil, err
	}
	secret, err := credential.ParseCreds(file)
	clear(file)
	if err != nil {
		return nil, fmt.Errorf("clustertest: credentials: %w", err)
	}
	defer secret.Wipe()
	c, err := conn.Dial(ctx, conn.Config{
		Addr:           b.Addr(),
		AllowNonPublic: b.Addr().Addr(),
		ServerName:     b.ServerName(),
		Roots:          b.RootCAs(),
		Credential:     secret,
		Name:           ClientName,
	})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	r, err := c.Request(ctx, subject, nil, payload)
	if err != nil {
		return nil, err
	}
	if r.Status != 0 {
		return nil, fmt.Errorf("%w: %d", ErrStatus, r.Status)
	}
	return bytes.Clone(r.Payload), nil
}
