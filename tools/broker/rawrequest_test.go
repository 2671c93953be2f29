package broker_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/nats-io/nkeys"

	"github.com/latent-systems/latent-nats/tools/broker"
)

// rawInbox is the reply subject of rawRequest's one request.
const rawInbox = "_INBOX.raw"

// errStatus is rawRequest's error for a reply that carries a status (503
// no responders and the like) instead of a payload.
var errStatus = errors.New("reply with a status")

// rawRequest dials b, connects as creds, sends one request and returns
// its reply's payload, every step bounded by ctx's deadline; unlike
// rawClient it returns errors instead of failing the test, for the waits
// of the cluster helpers that ask again while a group elects. Each
// request has its own connection, so no late reply can answer a later
// request.
func rawRequest(ctx context.Context, b *broker.Broker, creds broker.Creds, subject string, payload []byte) ([]byte, error) {
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp4", b.Addr().String())
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	if dl, ok := ctx.Deadline(); ok {
		if err := raw.SetDeadline(dl); err != nil {
			return nil, err
		}
	}
	tc := tls.Client(raw, clientTLS(b))
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, err
	}
	r := newReader(tc)
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	js, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "INFO ")
	var info struct {
		Nonce string `json:"nonce"`
	}
	if !ok || json.Unmarshal([]byte(js), &info) != nil || info.Nonce == "" {
		return nil, errors.New("no INFO with a nonce")
	}
	kp, err := nkeys.FromSeed(creds.Seed)
	if err != nil {
		return nil, err
	}
	sig, err := kp.Sign([]byte(info.Nonce))
	kp.Wipe()
	if err != nil {
		return nil, err
	}
	cj, err := json.Marshal(map[string]any{
		"verbose": false, "pedantic": false, "protocol": 1, "headers": true, "no_responders": true,
		"jwt": creds.JWT, "sig": base64.RawURLEncoding.EncodeToString(sig),
		"lang": "go-raw-test", "version": "0",
	})
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "CONNECT %s\r\nSUB %s 1\r\nPUB %s %s %d\r\n", cj, rawInbox, subject, rawInbox, len(payload))
	out.Write(payload)
	out.WriteString("\r\n")
	if _, err := tc.Write(out.Bytes()); err != nil {
		return nil, err
	}
	for range 16 {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
			return nil, errors.New("empty line")
		case f[0] == "PING":
			if _, err := io.WriteString(tc, "PONG\r\n"); err != nil {
				return nil, err
			}
			continue
		case f[0] == "INFO" || f[0] == "+OK":
			continue
		case f[0] == "-ERR":
			return nil, errors.New("-ERR from the server")
		case f[0] == "HMSG" && len(f) == 5 && f[1] == rawInbox:
			return nil, errStatus
		case f[0] != "MSG" || len(f) != 4 || f[1] != rawInbox:
			return nil, fmt.Errorf("unexpected frame %.40q", line)
		}
		n, err := strconv.Atoi(f[3])
		if err != nil || n < 0 || n > 1<<20 {
			return nil, fmt.Errorf("bad size in %.60q", line)
		}
		body := make([]byte, n+2)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, err
		}
		return body[:n], nil
	}
	return nil, errors.New("no reply within 16 frames")
}

// clusterRequester returns a broker.Requester that sends each request,
// as creds, through the first node (in index order) that runs and is not
// paused.
func clusterRequester(c *broker.Cluster, creds broker.Creds) broker.Requester {
	return broker.RequestFunc(func(ctx context.Context, subject string, payload []byte) ([]byte, error) {
		for _, b := range c.Nodes() {
			if b.Running() && !b.Paused() {
				return rawRequest(ctx, b, creds, subject, payload)
			}
		}
		return nil, broker.ErrNotRunning
	})
}
