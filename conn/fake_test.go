package conn_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"net"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/fakeserver"
	"github.com/latent-systems/latent-nats/parser"
	"github.com/nats-io/nkeys"
)

// With fakeConfig's all-zero random source the inbox token is 22 zeros, so
// scripts can name the reply subjects the client will use.
const (
	fakeInbox  = "_INBOX.0000000000000000000000"
	fakeToken  = "fake-token"
	fakeName   = "fake-client"
	dialWithin = 2 * time.Second
	// stallWithin bounds calls that are expected to run into their
	// deadline. It must leave room for the steps before the stall: a TLS
	// handshake under the race detector on a loaded machine took more than
	// 200 ms, failing the handshake before the phase a test stalls.
	stallWithin = time.Second
)

// infoJSON is an INFO of a server older than 2.12 (no second INFO after
// the first PONG).
const infoJSON = `{"server_id":"NFAKE","server_name":"fake","version":"2.11.0","proto":1,"go":"go1.26","host":"0.0.0.0","port":4222,"headers":true,"max_payload":1048576,"tls_required":true}`

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// greet is a well-behaved handshake for this client: TLS, INFO, then the
// client's CONNECT, inbox SUB and PING, answered with PONG.
func greet(info string) []fakeserver.Step {
	return []fakeserver.Step{
		fakeserver.Handshake(),
		fakeserver.Send(fakeserver.Info(info)),
		fakeserver.ExpectPrefix("CONNECT {"),
		fakeserver.ExpectPrefix("SUB " + fakeInbox + ".* 1\r\n"),
		fakeserver.ExpectPrefix("PING\r\n"),
		fakeserver.SendString("PONG\r\n"),
	}
}

// script concatenates steps.
func script(parts ...[]fakeserver.Step) []fakeserver.Step {
	var out []fakeserver.Step
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func steps(s ...fakeserver.Step) []fakeserver.Step { return s }

// expectPub expects the request "PUB svc <reply n> <len>" and its payload
// line.
func expectPub(n string, payload string) []fakeserver.Step {
	return steps(
		fakeserver.ExpectPrefix("PUB svc "+fakeInbox+"."+n+" "),
		fakeserver.ExpectPrefix(payload+"\r\n"),
	)
}

func msgTo(n, payload string) fakeserver.Step { return fakeserver.SendString(msgText(n, payload)) }

// msgText is the MSG frame of payload to reply subject n of the inbox.
func msgText(n, payload string) string {
	return "MSG " + fakeInbox + "." + n + " 1 " + itoa(len(payload)) + "\r\n" + payload + "\r\n"
}

func hmsgTo(n, header, payload string) fakeserver.Step {
	return fakeserver.SendString("HMSG " + fakeInbox + "." + n + " 1 " + itoa(len(header)) + " " +
		itoa(len(header)+len(payload)) + "\r\n" + header + payload + "\r\n")
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// fake is one fake server with a counting dialer in front of it.
type fake struct {
	srv   *fakeserver.Server
	dials []string
	raw   net.Conn // the last socket dialled
	wrap  bool     // hand Dial a wrapper that hides the socket's descriptor
}

func startFake(t *testing.T, fcfg fakeserver.Config) *fake {
	t.Helper()
	srv, err := fakeserver.Start(t.Context(), fcfg)
	if err != nil {
		t.Fatalf("fakeserver.Start: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return &fake{srv: srv}
}

func (f *fake) config(t *testing.T) conn.Config {
	t.Helper()
	secret, err := credential.FromToken(fakeToken)
	if err != nil {
		t.Fatalf("FromToken: %v", err)
	}
	return conn.Config{
		Addr:           f.srv.Addr(),
		AllowNonPublic: f.srv.Addr().Addr(),
		ServerName:     f.srv.ServerName(),
		Roots:          f.srv.RootCAs(),
		Credential:     secret,
		Name:           fakeName,
		Rand:           zeroReader{},
		Dialer: func(ctx context.Context, network, address string) (net.Conn, error) {
			f.dials = append(f.dials, network+" "+address)
			c, err := (&net.Dialer{}).DialContext(ctx, network, address)
			if err != nil {
				return nil, err
			}
			if *threadSocket {
				// What Dial does with a TCP socket its dialer returns under
				// Config.ThreadSocket; the wrappers below would hide it.
				if c, err = conn.ThreadSocketOf(c); err != nil {
					return nil, err
				}
			}
			f.raw = c
			rc := &recordConn{Conn: c}
			if f.wrap {
				return rc, nil
			}
			return &peekableRecordConn{rc}, nil
		},
	}
}

func (f *fake) dial(t *testing.T, cfg conn.Config) (*conn.Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
	defer cancel()
	c, err := conn.Dial(ctx, cfg)
	if err == nil {
		t.Cleanup(func() { _ = c.Close() })
	}
	return c, err
}

// session returns the record of the first connection once its script
// ended; the connection under test must be closed or the script finite.
func (f *fake) session(t *testing.T) fakeserver.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
	defer cancel()
	rec, err := f.srv.Session(ctx, 0)
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	return rec
}

// threadSocket makes the fake server's tests run over the thread socket,
// as Dial makes one on Linux under Config.ThreadSocket; by default they
// run over the runtime's network poller, as Dial does by default. make
// test runs both.
var threadSocket = flag.Bool("thread-socket", false, "run the fake-server tests over the thread socket (Config.ThreadSocket) instead of the runtime's network poller")

// recordConn never reads past the end of the TLS record it is in, so no
// record the server sends after the one a call is waiting for is taken
// from the socket early; tests can then wait for later records on the
// socket itself (waitReadable). It hides the socket's descriptor.
type recordConn struct {
	net.Conn
	hdr  [5]byte
	nhdr int // header bytes read of the current record
	left int // body bytes left of the current record
}

func (r *recordConn) Read(p []byte) (int, error) {
	if r.nhdr < len(r.hdr) {
		n, err := r.Conn.Read(p[:min(len(p), len(r.hdr)-r.nhdr)])
		copy(r.hdr[r.nhdr:], p[:n])
		r.nhdr += n
		if r.nhdr == len(r.hdr) {
			r.left = int(r.hdr[3])<<8 | int(r.hdr[4])
			r.nhdr = len(r.hdr)
			if r.left == 0 {
				r.nhdr = 0
			}
		}
		return n, err
	}
	n, err := r.Conn.Read(p[:min(len(p), r.left)])
	r.left -= n
	if r.left == 0 {
		r.nhdr = 0
	}
	return n, err
}

// peekableRecordConn is a recordConn that exposes the socket's descriptor.
type peekableRecordConn struct{ *recordConn }

func (p *peekableRecordConn) SyscallConn() (syscall.RawConn, error) {
	return p.Conn.(syscall.Conn).SyscallConn()
}

// waitReadable blocks, bounded, until the last dialled socket has input or
// an end of stream waiting, without consuming it. The connection's
// cancellation registration may set a passed deadline on the idle socket
// once the last request's context has ended (see conn's canceller: the
// connection sets its own deadline before every wait); a wait cut short
// that way is started again.
func (f *fake) waitReadable(t *testing.T) {
	t.Helper()
	sc, ok := f.raw.(syscall.Conn)
	if !ok {
		t.Fatal("socket has no descriptor")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		t.Fatalf("SyscallConn: %v", err)
	}
	bound := time.Now().Add(dialWithin)
	for {
		if err := f.raw.SetReadDeadline(bound); err != nil {
			t.Fatalf("SetReadDeadline: %v", err)
		}
		var b [1]byte
		err = rc.Read(func(fd uintptr) bool {
			_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			return !errors.Is(rerr, syscall.EAGAIN)
		})
		if err == nil {
			return
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) || !time.Now().Before(bound) {
			t.Fatalf("waiting for input: %v", err)
		}
	}
}

func request(t *testing.T, c *conn.Conn, payload string) (conn.Reply, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
	defer cancel()
	return c.Request(ctx, "svc", nil, []byte(payload))
}

func assertStep(t *testing.T, err error, step conn.Step) {
	t.Helper()
	var he *conn.HandshakeError
	if !errors.As(err, &he) {
		t.Fatalf("error %v (%T) is not a *HandshakeError", err, err)
	}
	if he.Step != step {
		t.Fatalf("handshake failed at %v, want %v (%v)", he.Step, step, err)
	}
}

func assertKind(t *testing.T, err error, kind conn.ErrKind) {
	t.Helper()
	var se *conn.ServerError
	if !errors.As(err, &se) || se.Kind != kind {
		t.Fatalf("error = %v, want a *ServerError of kind %v", err, kind)
	}
}

// assertClean fails unless no error message contains any of the texts.
func assertClean(t *testing.T, err error, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error message %q contains %q", err, s)
		}
	}
}

func TestFakeHandshakeAndRequest(t *testing.T) {
	f := startFake(t, fakeserver.Config{Script: script(
		greet(infoJSON),
		expectPub("1", "hello"),
		steps(msgTo("1", "world")),
		expectPub("2", "again"),
		steps(hmsgTo("2", "NATS/1.0 503\r\nNats-Subject: svc\r\nX: 1\r\n\r\n", "ok")),
		steps(fakeserver.WaitClose()),
	)})
	c, err := f.dial(t, f.config(t))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	if got, want := c.Inbox(), fakeInbox; got != want {
		t.Errorf("Inbox = %q, want %q", got, want)
	}
	r, err := request(t, c, "hello")
	if err != nil {
		t.Fatalf("request 1: %v", err)
	}
	if string(r.Payload) != "world" || string(r.Subject) != fakeInbox+".1" || r.Status != 0 || len(r.Header) != 0 {
		t.Errorf("reply 1 = %+v", r)
	}
	r, err = request(t, c, "again")
	if err != nil {
		t.Fatalf("request 2: %v", err)
	}
	x, ok := r.HeaderValue("X")
	if r.Status != 503 || string(r.Payload) != "ok" || !ok || string(x) != "1" {
		t.Errorf("reply 2: status %d, payload %q, X %q (%v)", r.Status, r.Payload, x, ok)
	}
	ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
	defer cancel()
	if err := c.Check(ctx); err != nil {
		t.Errorf("Check on an idle connection: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := request(t, c, "x"); !errors.Is(err, conn.ErrClosed) {
		t.Errorf("request after Close: %v, want ErrClosed", err)
	}
	if err := c.Check(ctx); !errors.Is(err, conn.ErrClosed) {
		t.Errorf("Check after Close: %v, want ErrClosed", err)
	}

	rec := f.session(t)
	if rec.Err != nil {
		t.Fatalf("script: %v", rec.Err)
	}
	if len(rec.Plain) != 0 {
		t.Errorf("%d bytes outside TLS", len(rec.Plain))
	}
	line, _, _ := bytes.Cut(rec.TLS, []byte("\r\n"))
	assertConnect(t, line, map[string]any{
		"verbose": false, "pedantic": false, "tls_required": true, "auth_token": fakeToken,
		"name": fakeName, "lang": "go", "protocol": float64(1), "echo": false, "headers": true,
		"no_responders": true,
	})
	if len(f.dials) != 1 {
		t.Errorf("dials = %v, want one", f.dials)
	}
}

func TestFakeClientHelloIsFirst(t *testing.T) {
	f := startFake(t, fakeserver.Config{Script: steps(fakeserver.ReadClientHello(), fakeserver.Hangup())})
	_, err := f.dial(t, f.config(t))
	assertStep(t, err, conn.StepTLS)
	if !errors.Is(err, conn.ErrTLS) {
		t.Errorf("error = %v, want ErrTLS", err)
	}
	if rec := f.session(t); rec.Err != nil {
		t.Errorf("the first record was not a ClientHello: %v", rec.Err)
	}
}

// TestFakeHandshakeFailures covers what a real broker will not do during
// the handshake. Every case fails Dial at a given step with a typed error.
func TestFakeHandshakeFailures(t *testing.T) {
	longInfo := func(lineLen int) string {
		// "INFO " + json + " \r\n"
		pad := lineLen - len("INFO ") - len(" \r\n") - len(`{"proto":1,"headers":true,"max_payload":1024,"p":""}`)
		return `{"proto":1,"headers":true,"max_payload":1024,"p":"` + strings.Repeat("x", pad) + `"}`
	}
	tests := []struct {
		name    string
		fcfg    fakeserver.Config
		nkey    bool
		expect  string // server name the client expects, when not the certificate's
		within  time.Duration
		step    conn.Step
		wantErr error
		kind    conn.ErrKind
		clean   []string // texts the error must not contain
	}{
		{name: "plaintext INFO before TLS",
			fcfg: fakeserver.Config{Script: steps(fakeserver.Send(fakeserver.Info(infoJSON)), fakeserver.WaitClose())},
			step: conn.StepTLS, wantErr: conn.ErrPlaintext},
		{name: "plaintext -ERR before TLS",
			fcfg: fakeserver.Config{Script: steps(fakeserver.SendString("-ERR 'Unknown Protocol Operation'\r\n"), fakeserver.WaitClose())},
			step: conn.StepTLS, wantErr: conn.ErrPlaintext},
		{name: "alert instead of a server hello",
			fcfg: fakeserver.Config{Script: steps(fakeserver.ReadClientHello(), fakeserver.SendAlert(fakeserver.AlertHandshakeFailure), fakeserver.WaitClose())},
			step: conn.StepTLS, wantErr: conn.ErrTLS},
		{name: "close mid-handshake",
			fcfg: fakeserver.Config{Script: steps(fakeserver.HandshakeCut(64))},
			step: conn.StepTLS, wantErr: conn.ErrTLS},
		{name: "server limited to TLS 1.1",
			fcfg: fakeserver.Config{Script: steps(fakeserver.Handshake()), MaxTLSVersion: 0x0302},
			step: conn.StepTLS, wantErr: conn.ErrTLS},
		{name: "certificate for another name",
			fcfg:   fakeserver.Config{Script: steps(fakeserver.Handshake()), ServerName: "other.latent.test"},
			expect: "fake.latent.test",
			step:   conn.StepTLS, wantErr: conn.ErrCertificate, clean: []string{"other.latent.test"}},
		{name: "stall before INFO",
			fcfg:   fakeserver.Config{Script: steps(fakeserver.Handshake(), fakeserver.Stall())},
			within: stallWithin, step: conn.StepInfo, wantErr: context.DeadlineExceeded},
		{name: "oversized INFO",
			fcfg: fakeserver.Config{Script: steps(fakeserver.Handshake(), fakeserver.Send(fakeserver.Info(longInfo(8193))), fakeserver.WaitClose())},
			step: conn.StepInfo, wantErr: parser.ErrLineTooLong},
		{name: "malformed INFO json",
			fcfg: fakeserver.Config{Script: steps(fakeserver.Handshake(), fakeserver.SendString("INFO {\"proto\":1,} \r\n"), fakeserver.WaitClose())},
			step: conn.StepInfo, wantErr: conn.ErrMalformedInfo},
		{name: "INFO without headers",
			fcfg: fakeserver.Config{Script: steps(fakeserver.Handshake(), fakeserver.Send(fakeserver.Info(`{"proto":1,"headers":false,"max_payload":1024}`)), fakeserver.WaitClose())},
			step: conn.StepInfo, wantErr: conn.ErrUnsupportedServer},
		{name: "PING instead of INFO",
			fcfg: fakeserver.Config{Script: steps(fakeserver.Handshake(), fakeserver.SendString("PING\r\n"), fakeserver.WaitClose())},
			step: conn.StepInfo, wantErr: conn.ErrUnexpectedFrame},
		{name: "-ERR instead of INFO",
			fcfg: fakeserver.Config{Script: steps(fakeserver.Handshake(), fakeserver.SendString("-ERR 'maximum connections exceeded'\r\n"), fakeserver.WaitClose())},
			step: conn.StepInfo, kind: conn.KindMaxConnections},
		{name: "unknown op instead of INFO",
			fcfg: fakeserver.Config{Script: steps(fakeserver.Handshake(), fakeserver.SendString("HELLO world\r\n"), fakeserver.WaitClose())},
			step: conn.StepInfo, wantErr: parser.ErrUnknownOp},
		{name: "stall after INFO",
			fcfg:   fakeserver.Config{Script: steps(fakeserver.Handshake(), fakeserver.Send(fakeserver.Info(infoJSON)), fakeserver.Stall())},
			within: stallWithin, step: conn.StepConnect, wantErr: context.DeadlineExceeded},
		{name: "authorization violation",
			fcfg: fakeserver.Config{Script: script(greet(infoJSON)[:5], steps(fakeserver.SendString("-ERR 'Authorization Violation'\r\n"), fakeserver.WaitClose()))},
			step: conn.StepConnect, kind: conn.KindAuthorization, clean: []string{"Authorization Violation"}},
		{name: "inbox subscription denied",
			fcfg: fakeserver.Config{Script: script(greet(infoJSON)[:5], steps(fakeserver.SendString("-ERR 'Permissions Violation for Subscription to \"_INBOX.secret.*\"'\r\n"), fakeserver.WaitClose()))},
			step: conn.StepConnect, kind: conn.KindPermission, clean: []string{"_INBOX.secret", "Subscription"}},
		{name: "message before PONG",
			fcfg: fakeserver.Config{Script: script(greet(infoJSON)[:5], steps(fakeserver.SendString("MSG "+fakeInbox+".1 1 0\r\n\r\n"), fakeserver.WaitClose()))},
			step: conn.StepConnect, wantErr: conn.ErrUnexpectedFrame},
		{name: "+OK before PONG",
			fcfg: fakeserver.Config{Script: script(greet(infoJSON)[:5], steps(fakeserver.SendString("+OK\r\n"), fakeserver.WaitClose()))},
			step: conn.StepConnect, wantErr: conn.ErrUnexpectedFrame},
		{name: "PING flood before PONG",
			fcfg: fakeserver.Config{Script: script(greet(infoJSON)[:5], steps(fakeserver.SendString(strings.Repeat("PING\r\n", conn.MaxPingsPerExchange+1)), fakeserver.WaitClose()))},
			step: conn.StepConnect, wantErr: conn.ErrControlFlood},
		{name: "INFO flood before PONG",
			fcfg: fakeserver.Config{Script: script(greet(infoJSON)[:5], steps(fakeserver.Send(bytes.Repeat(fakeserver.Info(infoJSON), conn.MaxControlFramesPerExchange+1)), fakeserver.WaitClose()))},
			step: conn.StepConnect, wantErr: conn.ErrControlFlood},
		{name: "2.12 server without the INFO after PONG",
			fcfg:   fakeserver.Config{Script: script(greet(`{"version":"2.14.6","proto":1,"headers":true,"max_payload":1024}`), steps(fakeserver.Stall()))},
			within: stallWithin, step: conn.StepConnect, wantErr: context.DeadlineExceeded},
		{name: "hangup after INFO",
			fcfg: fakeserver.Config{Script: steps(fakeserver.Handshake(), fakeserver.Send(fakeserver.Info(infoJSON)), fakeserver.Hangup())},
			step: conn.StepConnect, wantErr: conn.ErrServerClosed},
		{name: "nonce required but absent",
			fcfg: fakeserver.Config{Script: steps(fakeserver.Handshake(), fakeserver.Send(fakeserver.Info(infoJSON)), fakeserver.WaitClose())},
			nkey: true,
			step: conn.StepAuthenticate, wantErr: credential.ErrNonceRequired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := startFake(t, tt.fcfg)
			cfg := f.config(t)
			if tt.nkey {
				cfg.Credential, _ = nkeySecret(t)
			}
			if tt.expect != "" {
				cfg.ServerName = tt.expect
			}
			within := dialWithin
			if tt.within != 0 {
				within = tt.within
			}
			ctx, cancel := context.WithTimeout(t.Context(), within)
			defer cancel()
			c, err := conn.Dial(ctx, cfg)
			if err == nil {
				_ = c.Close()
				t.Fatal("Dial succeeded")
			}
			assertStep(t, err, tt.step)
			if tt.kind != 0 {
				assertKind(t, err, tt.kind)
			} else if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			assertClean(t, err, tt.clean...)
			if len(f.dials) != 1 {
				t.Errorf("dials = %v, want one", f.dials)
			}
		})
	}
}

// nkeySecret is a fresh user nkey credential and its key pair.
func nkeySecret(t *testing.T) (*credential.Secret, nkeys.KeyPair) {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatalf("CreateUser: %v", err)
	}
	seed, err := kp.Seed()
	if err != nil {
		t.Fatalf("Seed: %v", err)
	}
	secret, err := credential.FromNKeySeed(seed)
	if err != nil {
		t.Fatalf("FromNKeySeed: %v", err)
	}
	return secret, kp
}

// assertConnect decodes a recorded "CONNECT {json}" line and compares its
// fields.
func assertConnect(t *testing.T, line []byte, want map[string]any) {
	t.Helper()
	js, ok := bytes.CutPrefix(line, []byte("CONNECT "))
	if !ok {
		t.Fatalf("first line %q is not CONNECT", line)
	}
	var got map[string]any
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatalf("CONNECT json: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CONNECT (-want +got):\n%s", diff)
	}
}

func TestFakeNonceSigned(t *testing.T) {
	const nonce = "kX3_-abcDEF0123"
	f := startFake(t, fakeserver.Config{Script: script(
		greet(`{"proto":1,"headers":true,"max_payload":1024,"nonce":"`+nonce+`"}`),
		steps(fakeserver.WaitClose()),
	)})
	cfg := f.config(t)
	secret, kp := nkeySecret(t)
	cfg.Credential = secret
	c, err := f.dial(t, cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	_ = c.Close()
	rec := f.session(t)
	line, _, _ := bytes.Cut(rec.TLS, []byte("\r\n"))
	var got struct {
		NKey string `json:"nkey"`
		Sig  string `json:"sig"`
		JWT  string `json:"jwt"`
	}
	if err := json.Unmarshal(bytes.TrimPrefix(line, []byte("CONNECT ")), &got); err != nil {
		t.Fatalf("CONNECT json: %v", err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		t.Fatalf("PublicKey: %v", err)
	}
	sig, err := base64.RawURLEncoding.DecodeString(got.Sig)
	if err != nil {
		t.Fatalf("sig encoding: %v", err)
	}
	if got.NKey != pub || got.JWT != "" {
		t.Errorf("CONNECT nkey %q jwt %q, want %q and none", got.NKey, got.JWT, pub)
	}
	if err := kp.Verify([]byte(nonce), sig); err != nil {
		t.Errorf("signature does not verify the nonce's ASCII bytes: %v", err)
	}
}

// TestFakeAdvertisedAddressesIgnored: an INFO naming other hosts and
// connect_urls never leads to another dial, neither during the handshake
// nor after the server goes away (no reconnect).
func TestFakeAdvertisedAddressesIgnored(t *testing.T) {
	info := `{"proto":1,"headers":true,"max_payload":1024,"host":"evil.example","port":4222,` +
		`"connect_urls":["8.8.8.8:4222","127.0.0.2:4222","evil.example:4222"],"ws_connect_urls":["127.0.0.3:80"],"ip":"nats://127.0.0.4:4222"}`
	f := startFake(t, fakeserver.Config{Script: script(
		greet(info),
		expectPub("1", "a"),
		steps(
			fakeserver.Send(fakeserver.Info(`{"connect_urls":["8.8.4.4:4222"],"host":"127.0.0.5"}`)),
			msgTo("1", "b"),
			fakeserver.Hangup(),
		),
	)})
	c, err := f.dial(t, f.config(t))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	if _, err := request(t, c, "a"); err != nil {
		t.Fatalf("request: %v", err)
	}
	_, err = request(t, c, "c")
	if !errors.Is(err, conn.ErrServerClosed) || !c.Closed() {
		t.Fatalf("request after hangup: %v, want ErrServerClosed and a closed connection", err)
	}
	if diff := cmp.Diff([]string{"tcp4 " + f.srv.Addr().String()}, f.dials); diff != "" {
		t.Errorf("dials (-want +got):\n%s", diff)
	}
	if got := f.srv.Accepted(); got != 1 {
		t.Errorf("server accepted %d connections, want 1", got)
	}
}

func TestFakeHandshakeVariants(t *testing.T) {
	longInfo := func(lineLen int) string {
		pad := lineLen - len("INFO ") - len(" \r\n") - len(`{"proto":1,"headers":true,"max_payload":1024,"p":""}`)
		return `{"proto":1,"headers":true,"max_payload":1024,"p":"` + strings.Repeat("x", pad) + `"}`
	}
	tests := []struct {
		name     string
		script   []fakeserver.Step
		lameDuck bool
	}{
		{"INFO at the line limit", script(greet(longInfo(parser.MaxLine)), steps(fakeserver.WaitClose())), false},
		{"lame-duck INFO", script(greet(`{"proto":1,"headers":true,"max_payload":1024,"ldm":true}`), steps(fakeserver.WaitClose())), true},
		{"2.12 server: INFO after PONG", script(greet(`{"version":"2.14.6","proto":1,"headers":true,"max_payload":1024}`),
			steps(fakeserver.Send(fakeserver.Info(`{"connect_info":true,"remote_account":"A"}`)), fakeserver.WaitClose())), false},
		{"2.12 server: lame duck in the INFO after PONG", script(greet(`{"version":"2.14.6","proto":1,"headers":true,"max_payload":1024}`),
			steps(fakeserver.Send(fakeserver.Info(`{"connect_info":true,"ldm":true}`)), fakeserver.WaitClose())), true},
		{"PINGs and INFO before PONG", script(greet(infoJSON)[:5], steps(
			fakeserver.SendString("PING\r\nPING\r\n"),
			fakeserver.ExpectPrefix("PONG\r\n"),
			fakeserver.ExpectPrefix("PONG\r\n"),
			fakeserver.Send(fakeserver.Info(`{"ldm":true}`)),
			fakeserver.SendString("PONG\r\n"),
			fakeserver.WaitClose())), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := startFake(t, fakeserver.Config{Script: tt.script})
			c, err := f.dial(t, f.config(t))
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			if got := c.LameDuck(); got != tt.lameDuck {
				t.Errorf("LameDuck = %v, want %v", got, tt.lameDuck)
			}
			_ = c.Close()
			if rec := f.session(t); rec.Err != nil {
				t.Errorf("script: %v", rec.Err)
			}
		})
	}
}

// TestFakeWrongPeer: a dialer that connects elsewhere than Config.Addr is
// caught before TLS starts.
func TestFakeWrongPeer(t *testing.T) {
	f := startFake(t, fakeserver.Config{Script: steps(fakeserver.WaitClose())})
	cfg := f.config(t)
	real := f.srv.Addr().String()
	other := f.srv.Addr().Port() + 1
	if other == 0 {
		other = f.srv.Addr().Port() - 1
	}
	cfg.Addr = netip.AddrPortFrom(f.srv.Addr().Addr(), other)
	cfg.Dialer = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, real)
	}
	_, err := f.dial(t, cfg)
	assertStep(t, err, conn.StepDial)
	if !errors.Is(err, conn.ErrWrongPeer) {
		t.Fatalf("error = %v, want ErrWrongPeer", err)
	}
	if rec := f.session(t); rec.Err != nil || len(rec.Plain) != 0 {
		t.Errorf("the wrong peer saw %d bytes (script: %v)", len(rec.Plain), rec.Err)
	}
}

// TestFakeConfiguredLineCap: Config.MaxControlLine caps what is read from
// the server. An INFO line exactly at the cap is read; one byte past it is
// refused with the parser's sentinel before anything else is sent.
func TestFakeConfiguredLineCap(t *testing.T) {
	longInfo := func(lineLen int) string {
		pad := lineLen - len("INFO ") - len(" \r\n") - len(`{"proto":1,"headers":true,"max_payload":1024,"p":""}`)
		return `{"proto":1,"headers":true,"max_payload":1024,"p":"` + strings.Repeat("x", pad) + `"}`
	}
	t.Run("at the cap", func(t *testing.T) {
		f := startFake(t, fakeserver.Config{Script: script(greet(longInfo(conn.MinReadCap)), steps(fakeserver.WaitClose()))})
		cfg := f.config(t)
		cfg.MaxControlLine = conn.MinReadCap
		c, err := f.dial(t, cfg)
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		_ = c.Close()
	})
	t.Run("past the cap", func(t *testing.T) {
		f := startFake(t, fakeserver.Config{Script: steps(fakeserver.Handshake(), fakeserver.Send(fakeserver.Info(longInfo(conn.MinReadCap+1))), fakeserver.WaitClose())})
		cfg := f.config(t)
		cfg.MaxControlLine = conn.MinReadCap
		ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
		defer cancel()
		c, err := conn.Dial(ctx, cfg)
		if err == nil {
			_ = c.Close()
			t.Fatal("Dial succeeded")
		}
		var he *conn.HandshakeError
		if !errors.As(err, &he) || he.Step != conn.StepInfo || !errors.Is(err, parser.ErrLineTooLong) {
			t.Fatalf("Dial: %v, want a handshake error at the INFO step matching parser.ErrLineTooLong", err)
		}
	})
}
