package conn

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/parser"
	"github.com/nats-io/nkeys"
)

// The fuzz seam: FuzzConn runs the connection's handshake after TLS and
// its requests over an in-memory net.Pipe, with a TLS session the client
// resumes on every input, so an exec costs no key exchange or certificate
// check. Everything after StepTLS is the production code: the steps of
// handshake.run from StepInfo on (fuzzHandshake lists them, and
// TestFuzzSeamMatchesDial compares it with Dial itself), Request and
// Exchange with Call.Delivery, Close.

const (
	fuzzServerName = "fuzz.test"
	// fuzzInbox is the inbox of a connection whose random source yields
	// zeros, so inputs can name its reply subjects.
	fuzzInbox = "_INBOX.0000000000000000000000"
	// fuzzRequests is the number of requests tried after a handshake.
	fuzzRequests = 3
	// fuzzMaxPayload is Config.MaxPayload of the fuzzed connection, small
	// so that inputs reach it.
	fuzzMaxPayload = 64
	// fuzzWithin is the deadline of every call. The server's bytes end with
	// the end of the connection, so no call may run into it: a call that
	// does waited for input that was never coming.
	fuzzWithin = 20 * time.Second
	// fuzzMaxInput bounds the server bytes of one input.
	fuzzMaxInput = 64 << 10
)

// fuzzInfo is an INFO as nats-server 2.14.6 writes it (with a nonce).
const fuzzInfo = `INFO {"server_id":"NFUZZ","server_name":"fuzz","version":"2.14.6","proto":1,"go":"go1.26","host":"0.0.0.0","port":4222,"headers":true,"max_payload":1048576,"jetstream":true,"client_id":5,"client_ip":"127.0.0.1","nonce":"kF3s_9Qa-xYz0bc","tls_required":true} ` + "\r\n"

// fuzzInfoOld is the INFO of a server older than 2.12: no INFO follows the
// first PONG.
const fuzzInfoOld = `INFO {"server_id":"NFUZZ","version":"2.11.0","proto":1,"headers":true,"max_payload":1048576,"nonce":"abc"} ` + "\r\n"

type fuzzZeros struct{}

func (fuzzZeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// fuzzEnv is what every exec of one fuzz process shares: the certificate,
// both TLS configurations (the client's session cache makes every
// handshake after the first a resumption) and the credential.
type fuzzEnv struct {
	server, client *tls.Config
	roots          *x509.CertPool
	secret         *credential.Secret
}

func newFuzzEnv(t testing.TB) *fuzzEnv {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: fuzzServerName},
		DNSNames:              []string{fuzzServerName},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	kp, err := nkeys.FromRawSeed(nkeys.PrefixByteUser, bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	seed, err := kp.Seed()
	if err != nil {
		t.Fatal(err)
	}
	secret, err := credential.FromNKeySeed(seed)
	if err != nil {
		t.Fatal(err)
	}
	return &fuzzEnv{
		// TLS 1.2 on both sides: its session resumption skips the key
		// exchange, and a client offering no TLS 1.3 makes no key shares.
		server: &tls.Config{
			Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
			MinVersion:   tls.VersionTLS12,
			MaxVersion:   tls.VersionTLS12,
		},
		client: &tls.Config{
			ServerName:         fuzzServerName,
			RootCAs:            roots,
			MinVersion:         tls.VersionTLS12,
			MaxVersion:         tls.VersionTLS12,
			ClientSessionCache: tls.NewLRUClientSessionCache(1),
		},
		roots:  roots,
		secret: secret,
	}
}

// config is the Config of the fuzzed connection: the smallest read caps,
// a small payload cap, a zero random source. Addr is never dialled.
func (e *fuzzEnv) config() Config {
	lo := netip.MustParseAddr("127.0.0.1")
	return Config{
		Addr:           netip.AddrPortFrom(lo, 4222),
		AllowNonPublic: lo,
		ServerName:     fuzzServerName,
		Roots:          e.roots,
		Credential:     e.secret,
		Name:           "fuzz",
		MaxPayload:     fuzzMaxPayload,
		MaxControlLine: MinReadCap,
		MaxHeader:      MinReadCap,
		Rand:           fuzzZeros{},
	}
}

// closeRecorder records whether the connection closed its socket.
type closeRecorder struct {
	net.Conn
	closed atomic.Bool
}

func (c *closeRecorder) Close() error {
	c.closed.Store(true)
	return c.Conn.Close()
}

// fuzzServer plays input to one client over TLS, cut into chunks whose
// sizes cuts gives (each byte b is a chunk of b+1 bytes; the rest is one
// chunk), then ends its side with close_notify, as a server that shuts
// down its TCP writes: the client reads everything sent and then the end,
// and its own writes still go through. It reads whatever the client
// writes into sent, and closes the pipe once the client has.
type fuzzServer struct {
	wg   sync.WaitGroup
	sent []byte // what the client wrote, complete once wg is done
}

func (s *fuzzServer) start(raw net.Conn, cfg *tls.Config, input, cuts []byte) {
	s.wg.Go(func() {
		tc := tls.Server(raw, cfg)
		if err := tc.Handshake(); err != nil {
			_ = raw.Close()
			return
		}
		s.wg.Go(func() {
			defer raw.Close()
			s.drain(tc)
		})
		rest := input
		for _, c := range cuts {
			if len(rest) == 0 {
				break
			}
			n := min(int(c)+1, len(rest))
			if _, err := tc.Write(rest[:n]); err != nil {
				return
			}
			rest = rest[n:]
		}
		if len(rest) > 0 {
			if _, err := tc.Write(rest); err != nil {
				return
			}
		}
		_ = tc.CloseWrite()
	})
}

// drain reads the client's bytes until the connection ends.
func (s *fuzzServer) drain(tc *tls.Conn) {
	var out bytes.Buffer
	var buf [4096]byte
	for range fuzzMaxInput {
		n, err := tc.Read(buf[:])
		if out.Len() < fuzzMaxInput {
			out.Write(buf[:n])
		}
		if err != nil {
			break
		}
	}
	s.sent = out.Bytes()
}

// fuzzHandshake is Dial after StepTLS on an established TLS connection:
// the steps of handshake.run from StepInfo on, with Dial's handling of a
// failure.
func fuzzHandshake(ctx context.Context, v *validated, raw net.Conn, tc *tls.Conn, deadline time.Time) (*Conn, error) {
	ib, err := newInbox(v.Rand, v.prefix)
	if err != nil {
		return nil, err
	}
	h := &handshake{v: v, deadline: deadline, c: &Conn{inbox: ib, maxPayload: v.maxPayload}}
	h.c.raw, h.c.tls = raw, tc
	h.c.rd.c, h.c.rd.raw = tc, raw
	for _, s := range []struct {
		step Step
		fn   func(context.Context) error
	}{
		{StepInfo, h.readInfo},
		{StepAuthenticate, h.authenticate},
		{StepConnect, h.connectAndPing},
	} {
		if err := s.fn(ctx); err != nil {
			_ = h.c.Close()
			return nil, &HandshakeError{Step: s.step, Err: normalise(err)}
		}
	}
	return h.c, nil
}

// fuzzOutcome is what one exec did, for comparing the seam with Dial.
type fuzzOutcome struct {
	dialErr  []int // indexes into fuzzCauses matched by Dial's error
	step     Step
	requests []fuzzResult
}

type fuzzResult struct {
	errs      []int
	subject   string
	payload   string
	status    int
	forwarded bool
}

// fuzzCauses are the causes a failed call may report, matched with
// errors.Is; a *ServerError is matched separately.
var fuzzCauses = [...]error{
	ErrServerClosed, ErrForeignFrame, ErrControlFlood, ErrUnexpectedFrame,
	ErrMalformedInfo, ErrUnsupportedServer,
	parser.ErrLineTooLong, parser.ErrHeaderTooLarge, parser.ErrPayloadTooLarge,
	parser.ErrUnknownOp, parser.ErrMalformed,
	credential.ErrNonceRequired, credential.ErrMalformedNonce,
}

func causes(err error) []int {
	var out []int
	for i, c := range fuzzCauses {
		if errors.Is(err, c) {
			out = append(out, i)
		}
	}
	return out
}

// FuzzConn feeds arbitrary server bytes, cut into TLS records anywhere, to
// the handshake after TLS and then to up to fuzzRequests requests (bit i
// of modes makes request i a delivery request, Call.Delivery), and checks:
//
//   - every call returns, and none by running into its deadline: the
//     input ends with the connection, so a call that waits for its
//     deadline waited for nothing;
//   - Dial fails with a *HandshakeError after TLS whose cause is one the
//     package documents; a request fails with a *ServerError of
//     KindPermission on an open connection, or closes it and returns a
//     *ClosedError with such a cause;
//   - a reply answers this request: its subject is this request's reply
//     subject, or, for a delivery request only, a forwarded message outside
//     the inbox; never the reply subject of another request;
//   - the reply's slices stay within the caps (payload, header block,
//     control line) and cannot be appended into the read buffer; the
//     write buffer is never regrown and the parser holds no more than its
//     fixed buffer;
//   - at most MaxPingsPerExchange PONGs are written per exchange;
//   - a closed connection closed its socket and stays closed: Request,
//     Exchange and Check return ErrClosed, Close returns nil.
//
// The committed corpus is in testdata/fuzz/FuzzConn.
func FuzzConn(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s.input, s.cuts, s.modes)
	}
	env := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, input, cuts []byte, modes uint8) {
		if len(input) > fuzzMaxInput {
			return
		}
		runFuzzConn(t, env, input, cuts, modes, nil)
	})
}

// runFuzzConn runs one input through the seam, or through Dial when dial
// is set, checks the properties and returns the outcome.
func runFuzzConn(t *testing.T, env *fuzzEnv, input, cuts []byte, modes uint8, dial func(context.Context, Config) (*Conn, error)) fuzzOutcome {
	t.Helper()
	cfg := env.config()
	v, err := cfg.validate()
	if err != nil {
		t.Fatal(err)
	}
	cli, srvRaw := net.Pipe()
	raw := &closeRecorder{Conn: cli}
	var srv fuzzServer
	srv.start(srvRaw, env.server, input, cuts)
	defer srv.wg.Wait()
	defer raw.Close()

	ctx, cancel := context.WithTimeout(context.Background(), fuzzWithin)
	defer cancel()
	deadline, _ := ctx.Deadline()
	var c *Conn
	if dial != nil {
		cfg.Dialer = func(context.Context, string, string) (net.Conn, error) { return raw, nil }
		c, err = dial(ctx, cfg)
	} else {
		if err := raw.SetDeadline(deadline); err != nil {
			t.Fatal(err)
		}
		tc := tls.Client(raw, env.client)
		if err := tc.Handshake(); err != nil {
			t.Fatalf("TLS handshake over the pipe: %v", err)
		}
		c, err = fuzzHandshake(ctx, &v, raw, tc, deadline)
	}
	var out fuzzOutcome
	if err != nil {
		var he *HandshakeError
		if !errors.As(err, &he) || he.Step < StepInfo {
			t.Fatalf("Dial: %v, want a *HandshakeError after TLS", err)
		}
		checkCause(t, "Dial", err)
		if !raw.closed.Load() {
			t.Fatalf("Dial failed without closing the socket")
		}
		out.dialErr, out.step = causes(err), he.Step
		return out
	}
	wcap := cap(c.wbuf)
	for i := range fuzzRequests {
		if c.Closed() {
			break
		}
		delivery := modes&(1<<i) != 0
		var rep Reply
		if delivery {
			rep, err = c.Exchange(ctx, time.Now().Add(fuzzWithin), Call{Subject: []byte("svc"), Payload: []byte("q"), Delivery: true})
		} else {
			rep, err = c.Request(ctx, "svc", nil, []byte("q"))
		}
		out.requests = append(out.requests, checkRequest(t, c, &v, rep, err, delivery))
		if cap(c.wbuf) != wcap && !c.Closed() {
			t.Fatalf("write buffer regrown from %d to %d", wcap, cap(c.wbuf))
		}
	}
	if !c.Closed() {
		if err := c.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	checkStaysClosed(t, c, raw)
	_ = raw.Close()
	srv.wg.Wait()
	checkPongs(t, srv.sent)
	return out
}

// checkPongs requires at most MaxPingsPerExchange PONGs in each exchange
// of what the client wrote: the handshake, then each request from its PUB
// on.
func checkPongs(t *testing.T, sent []byte) {
	t.Helper()
	for i, ex := range bytes.Split(sent, []byte("PUB svc ")) {
		if n := bytes.Count(ex, []byte("PONG\r\n")); n > MaxPingsPerExchange {
			t.Fatalf("%d PONGs written in exchange %d", n, i)
		}
	}
}

// checkCause requires a failure never to be the deadline, its cause to be
// one the package documents, and ErrFraming exactly when a parser sentinel
// matches.
func checkCause(t *testing.T, call string, err error) {
	t.Helper()
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%s ran into its deadline: %v", call, err)
	}
	var se *ServerError
	if len(causes(err)) == 0 && !errors.As(err, &se) {
		t.Fatalf("%s: undocumented cause %v", call, err)
	}
	if errors.Is(err, ErrFraming) != isFraming(err) {
		t.Fatalf("%s: %v matches ErrFraming = %v, a parser sentinel = %v", call, err, errors.Is(err, ErrFraming), isFraming(err))
	}
}

func checkRequest(t *testing.T, c *Conn, v *validated, rep Reply, err error, delivery bool) fuzzResult {
	t.Helper()
	if err != nil {
		checkCause(t, "Request", err)
		var se *ServerError
		var ce *ClosedError
		switch {
		case errors.As(err, &se) && se.Kind == KindPermission:
			if c.Closed() || errors.As(err, &ce) {
				t.Fatalf("a permission error closed the connection: %v", err)
			}
		case errors.As(err, &ce):
			if !c.Closed() {
				t.Fatalf("ClosedError on an open connection: %v", err)
			}
		default:
			t.Fatalf("Request: %v, want a *ClosedError or a permission *ServerError", err)
		}
		return fuzzResult{errs: causes(err)}
	}
	if c.Closed() {
		t.Fatalf("a reply from a closed connection")
	}
	want := fuzzInbox + "." + strconv.FormatUint(c.inbox.seq, 10)
	switch {
	case string(rep.Subject) == want:
		if rep.Forwarded {
			t.Fatalf("reply to %q marked forwarded", rep.Subject)
		}
	case delivery && rep.Forwarded && !c.inbox.under(rep.Subject):
	default:
		t.Fatalf("request %d answered by a message to %q (forwarded %v)", c.inbox.seq, rep.Subject, rep.Forwarded)
	}
	if len(rep.Payload) > v.maxPayload || len(rep.Header) > v.maxHeader || len(rep.Subject)+len(rep.ReplyTo) > v.maxLine {
		t.Fatalf("reply over the caps: payload %d, header %d, subject %d, reply %d",
			len(rep.Payload), len(rep.Header), len(rep.Subject), len(rep.ReplyTo))
	}
	for _, b := range [][]byte{rep.Subject, rep.ReplyTo, rep.Header, rep.Description, rep.Payload} {
		if cap(b) != len(b) {
			t.Fatalf("a reply slice has room to append into the read buffer")
		}
	}
	if n, size := c.p.Buffered(), v.maxLine+v.maxHeader+v.maxPayload+2; n > size {
		t.Fatalf("parser holds %d bytes, its buffer is %d", n, size)
	}
	return fuzzResult{
		subject:   string(rep.Subject),
		payload:   string(rep.Payload),
		status:    rep.Status,
		forwarded: rep.Forwarded,
	}
}

// checkStaysClosed requires a closed connection to have closed its socket
// and to refuse every later call.
func checkStaysClosed(t *testing.T, c *Conn, raw *closeRecorder) {
	t.Helper()
	if !c.Closed() || !raw.closed.Load() {
		t.Fatalf("closed %v, socket closed %v", c.Closed(), raw.closed.Load())
	}
	ctx, cancel := context.WithTimeout(context.Background(), fuzzWithin)
	defer cancel()
	if _, err := c.Request(ctx, "svc", nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Request on a closed connection: %v", err)
	}
	if _, err := c.Exchange(ctx, time.Now().Add(fuzzWithin), Call{Subject: []byte("svc"), Delivery: true}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Exchange on a closed connection: %v", err)
	}
	if err := c.Check(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Check on a closed connection: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

type fuzzSeed struct {
	name  string
	input []byte
	cuts  []byte
	modes uint8
}

// fuzzSeeds are conversations a broker (and a hostile one) could hold.
func fuzzSeeds() []fuzzSeed {
	reply := func(n int) string { return fuzzInbox + "." + strconv.Itoa(n) }
	msg := func(subject, sid, payload string) string {
		return "MSG " + subject + " " + sid + " " + strconv.Itoa(len(payload)) + "\r\n" + payload + "\r\n"
	}
	hmsg := func(subject, replyTo, header, payload string) string {
		r := " "
		if replyTo != "" {
			r = " " + replyTo + " "
		}
		return "HMSG " + subject + " 1" + r + strconv.Itoa(len(header)) + " " + strconv.Itoa(len(header)+len(payload)) + "\r\n" + header + payload + "\r\n"
	}
	greet := fuzzInfo + "PONG\r\n" + fuzzInfo
	greetOld := fuzzInfoOld + "PONG\r\n"
	batchDone := "NATS/1.0 409 Batch Completed\r\n\r\n"
	seeds := []fuzzSeed{
		{"three replies", []byte(greet + msg(reply(1), "1", "one") + msg(reply(2), "1", "two") + msg(reply(3), "1", "three")), nil, 0},
		{"old server", []byte(greetOld + msg(reply(1), "1", "a")), nil, 0},
		{"pings during handshake and request", []byte(fuzzInfo + "PING\r\nPONG\r\nPING\r\n" + fuzzInfo + "PING\r\n" + msg(reply(1), "1", "x")), nil, 0},
		{"ping flood", []byte(greet + "PING\r\nPING\r\nPING\r\nPING\r\nPING\r\n" + msg(reply(1), "1", "x")), nil, 0},
		{"delivery then trailing status", []byte(greet +
			hmsg("orders.new", "$JS.ACK.ORDERS.worker.1.5.5.1767322245000000000.0", "NATS/1.0\r\nA: b\r\n\r\n", "body") +
			hmsg(reply(1), "", batchDone, "") + msg(reply(2), "1", "ok")), nil, 1},
		{"status replies", []byte(greet + hmsg(reply(1), "", "NATS/1.0 404 No Messages\r\n\r\n", "") +
			hmsg(reply(2), "", "NATS/1.0 408 Request Timeout\r\n\r\n", "") + hmsg(reply(3), "", "NATS/1.0 503\r\n\r\n", "")), nil, 7},
		{"late reply to an earlier request", []byte(greet + "-ERR 'Permissions Violation for Publish to \"svc\"'\r\n" + msg(reply(1), "1", "late") + msg(reply(2), "1", "now")), nil, 0},
		{"foreign sid", []byte(greet + msg(reply(1), "2", "x")), nil, 0},
		{"other inbox subject", []byte(greet + msg(fuzzInbox+".7", "1", "x")), nil, 1},
		{"forwarded outside inbox", []byte(greet + msg("orders.new", "1", "x")), nil, 0},
		{"authorization violation", []byte(fuzzInfo + "-ERR 'Authorization Violation'\r\n"), nil, 0},
		{"ok and pong during request", []byte(greet + "+OK\r\nPONG\r\n"), nil, 0},
		{"payload over the cap", []byte(greet + msg(reply(1), "1", string(bytes.Repeat([]byte("p"), fuzzMaxPayload+1)))), nil, 0},
		{"lame duck info", []byte(greet + `INFO {"ldm":true} ` + "\r\n" + msg(reply(1), "1", "x")), nil, 0},
		{"info without headers", []byte(`INFO {"proto":1,"headers":false,"max_payload":1024} ` + "\r\n"), nil, 0},
		{"info without nonce", []byte(`INFO {"proto":1,"headers":true,"max_payload":1024,"version":"2.14.6"} ` + "\r\n"), nil, 0},
		{"cut in ones", []byte(greet + msg(reply(1), "1", "one")), bytes.Repeat([]byte{0}, 64), 0},
		{"cut in threes", []byte(greet + hmsg(reply(1), "", "NATS/1.0\r\nK: v\r\n\r\n", "pay")), bytes.Repeat([]byte{2}, 200), 0},
		{"ends inside a payload", []byte(greet + "MSG " + reply(1) + " 1 10\r\nabc"), nil, 0},
	}
	return seeds
}

// TestFuzzSeamMatchesDial runs every seed through Dial itself (a full TLS
// handshake over the pipe) and through the fuzz seam, and requires the
// same outcome, so the seam cannot drift from Dial unnoticed.
func TestFuzzSeamMatchesDial(t *testing.T) {
	env := newFuzzEnv(t)
	for _, s := range fuzzSeeds() {
		t.Run(s.name, func(t *testing.T) {
			got := runFuzzConn(t, env, s.input, s.cuts, s.modes, nil)
			want := runFuzzConn(t, env, s.input, s.cuts, s.modes, Dial)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(fuzzOutcome{}, fuzzResult{})); diff != "" {
				t.Fatalf("outcome (-Dial +seam):\n%s", diff)
			}
		})
	}
}
