package broker_test

import (
	"bufio"
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
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/latent-systems/latent-nats/tools/broker"
)

// ioTimeout bounds each exchange of the raw test client.
const ioTimeout = 10 * time.Second

// rawClient speaks just enough of the NATS protocol, over crypto/tls
// directly, to prove the broker without the conn package.
type rawClient struct {
	t    testing.TB
	conn net.Conn
	r    *bufio.Reader
	info map[string]any
}

// dialTCP opens a plain TCP connection to the broker.
func dialTCP(t testing.TB, b *broker.Broker) net.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), ioTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp4", b.Addr().String())
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.SetDeadline(time.Now().Add(ioTimeout)); err != nil {
		t.Fatal(err)
	}
	return c
}

func clientTLS(b *broker.Broker) *tls.Config {
	return &tls.Config{ServerName: b.ServerName(), RootCAs: b.RootCAs(), MinVersion: tls.VersionTLS12}
}

// dialTLSFirst makes the TLS ClientHello the first bytes on the socket and
// reads the INFO line inside TLS.
func dialTLSFirst(t testing.TB, b *broker.Broker) *rawClient {
	t.Helper()
	raw := dialTCP(t, b)
	tc := tls.Client(raw, clientTLS(b))
	if err := tc.HandshakeContext(t.Context()); err != nil {
		t.Fatalf("tls handshake: %v", err)
	}
	c := &rawClient{t: t, conn: tc, r: newReader(tc)}
	c.info = c.readInfo()
	return c
}

func (c *rawClient) readLine() (string, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return line, err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func (c *rawClient) mustLine() string {
	c.t.Helper()
	line, err := c.readLine()
	if err != nil {
		c.t.Fatalf("reading a line: %v", err)
	}
	return line
}

func (c *rawClient) readInfo() map[string]any {
	c.t.Helper()
	line := c.mustLine()
	js, ok := strings.CutPrefix(line, "INFO ")
	if !ok {
		c.t.Fatalf("want INFO, got %.40q", line)
	}
	var info map[string]any
	if err := json.Unmarshal([]byte(js), &info); err != nil {
		c.t.Fatalf("INFO json: %v", err)
	}
	return info
}

func (c *rawClient) write(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, s); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// connect sends CONNECT with the user JWT and the nonce signed by the seed
// (the nonce's ASCII bytes, base64 RawURL), then PING, and returns the
// first line of the answer.
func (c *rawClient) connect(creds broker.Creds) string {
	c.t.Helper()
	nonce, _ := c.info["nonce"].(string)
	if nonce == "" {
		c.t.Fatal("INFO has no nonce")
	}
	kp, err := nkeys.FromSeed(creds.Seed)
	if err != nil {
		c.t.Fatalf("seed: %v", err)
	}
	sig, err := kp.Sign([]byte(nonce))
	kp.Wipe()
	if err != nil {
		c.t.Fatalf("sign: %v", err)
	}
	cj, err := json.Marshal(map[string]any{
		"verbose": false, "pedantic": false, "protocol": 1, "headers": true,
		"jwt": creds.JWT, "sig": base64.RawURLEncoding.EncodeToString(sig),
		"lang": "go-raw-test", "version": "0",
	})
	if err != nil {
		c.t.Fatal(err)
	}
	c.write("CONNECT " + string(cj) + "\r\nPING\r\n")
	return c.mustLine()
}

// mustConnect connects and expects PONG followed by the INFO that 2.12+
// sends after the first PONG.
func (c *rawClient) mustConnect(creds broker.Creds) {
	c.t.Helper()
	if got := c.connect(creds); got != "PONG" {
		c.t.Fatalf("CONNECT answered %.60q, want PONG", got)
	}
	info := c.readInfo()
	if info["connect_info"] != true {
		c.t.Fatalf("second INFO lacks connect_info: %v", info)
	}
}

// request subscribes to inbox (sid 1), publishes to subj with that reply
// and returns the reply's payload.
func (c *rawClient) request(subj, inbox, payload string) []byte {
	c.t.Helper()
	c.write(fmt.Sprintf("SUB %s 1\r\nPUB %s %s %d\r\n%s\r\n", inbox, subj, inbox, len(payload), payload))
	return c.readMsg(inbox)
}

// readMsg returns the payload of the next MSG, which must be on inbox,
// answering PINGs and skipping INFOs on the way (at most 16 frames).
func (c *rawClient) readMsg(inbox string) []byte {
	c.t.Helper()
	for range 16 {
		line := c.mustLine()
		switch {
		case line == "PING":
			c.write("PONG\r\n")
			continue
		case strings.HasPrefix(line, "INFO "):
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "MSG" || f[1] != inbox {
			c.t.Fatalf("want MSG on %s, got %.80q", inbox, line)
		}
		n, err := strconv.Atoi(f[3])
		if err != nil || n < 0 || n > 1<<20 {
			c.t.Fatalf("bad size in %.80q", line)
		}
		body := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, body); err != nil {
			c.t.Fatalf("reading payload: %v", err)
		}
		return body[:n]
	}
	c.t.Fatal("no MSG within 16 frames")
	return nil
}

// readUntilEOF reads until the server closes the connection and returns
// what arrived (at most 64 KiB).
func readUntilEOF(t testing.TB, c net.Conn) []byte {
	t.Helper()
	b, err := io.ReadAll(io.LimitReader(c, 64<<10))
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("want EOF, got %v", err)
	}
	return b
}

func newReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 64<<10) }

// lockedBuffer is a bytes.Buffer safe for one writer goroutine and a
// reading test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
