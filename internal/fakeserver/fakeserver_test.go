package fakeserver_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/internal/fakeserver"
)

// ioTimeout bounds every client read and write of these tests.
const ioTimeout = 10 * time.Second

func start(t *testing.T, cfg fakeserver.Config) *fakeserver.Server {
	t.Helper()
	s, err := fakeserver.Start(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func dial(t *testing.T, s *fakeserver.Server) net.Conn {
	t.Helper()
	var d net.Dialer
	c, err := d.DialContext(t.Context(), "tcp4", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.SetDeadline(time.Now().Add(ioTimeout)); err != nil {
		t.Fatal(err)
	}
	return c
}

func clientConfig(s *fakeserver.Server) *tls.Config {
	return &tls.Config{ServerName: s.ServerName(), RootCAs: s.RootCAs(), MinVersion: tls.VersionTLS12}
}

// dialTLS makes the ClientHello the first bytes on the socket. A failed
// handshake closes the socket, as a client would.
func dialTLS(t *testing.T, s *fakeserver.Server) (*tls.Conn, error) {
	t.Helper()
	raw := dial(t, s)
	tc := tls.Client(raw, clientConfig(s))
	err := tc.HandshakeContext(t.Context())
	if err != nil {
		_ = raw.Close()
	}
	return tc, err
}

// remoteAlert returns the description of a TLS alert the peer sent, which
// crypto/tls reports as a *net.OpError "remote error" around an unexported
// uint8 alert type.
func remoteAlert(err error) (uint8, bool) {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "remote error" {
		return 0, false
	}
	v := reflect.ValueOf(op.Err)
	if v.Kind() != reflect.Uint8 {
		return 0, false
	}
	return uint8(v.Uint()), true
}

func session(t *testing.T, s *fakeserver.Server, i int) fakeserver.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), ioTimeout)
	defer cancel()
	rec, err := s.Session(ctx, i)
	if err != nil {
		t.Fatalf("Session(%d): %v", i, err)
	}
	return rec
}

// stepErr returns the failed step's index and kind, or -1 and 0.
func stepErr(err error) (int, fakeserver.StepKind) {
	var se *fakeserver.StepError
	if errors.As(err, &se) {
		return se.Index, se.Kind
	}
	return -1, 0
}

func TestGreetingThenWaitClose(t *testing.T) {
	info := `{"server_id":"fake","nonce":"abc","headers":true}`
	s := start(t, fakeserver.Config{Script: append(fakeserver.Greeting(info), fakeserver.WaitClose())})
	tc, err := dialTLS(t, s)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(tc)
	line, err := r.ReadString('\n')
	if err != nil || line != "INFO "+info+" \r\n" {
		t.Fatalf("INFO line %q, %v", line, err)
	}
	if _, err := io.WriteString(tc, "CONNECT {}\r\nPING\r\nSUB a 1\r\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := r.ReadString('\n'); err != nil || line != "PONG\r\n" {
		t.Fatalf("after PING: %q, %v", line, err)
	}
	if err := tc.Close(); err != nil {
		t.Fatal(err)
	}
	rec := session(t, s, 0)
	want := fakeserver.Record{
		TLS:        []byte("CONNECT {}\r\nPING\r\nSUB a 1\r\n"),
		SNI:        fakeserver.DefaultServerName,
		TLSVersion: tls.VersionTLS13,
		Steps:      6,
	}
	if diff := cmp.Diff(want, rec, cmp.Comparer(errorsEqual)); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
	if s.Accepted() != 1 {
		t.Errorf("Accepted() = %d, want 1", s.Accepted())
	}
}

func errorsEqual(a, b error) bool { return errors.Is(a, b) && errors.Is(b, a) }

func TestPlaintextBeforeTLS(t *testing.T) {
	s := start(t, fakeserver.Config{Script: []fakeserver.Step{
		fakeserver.Send(fakeserver.Info(`{"tls_required":true}`)),
		fakeserver.Handshake(),
	}})
	_, err := dialTLS(t, s)
	var rhe tls.RecordHeaderError
	if !errors.As(err, &rhe) {
		t.Fatalf("client handshake: %v, want tls.RecordHeaderError", err)
	}
	if got := string(rhe.RecordHeader[:]); got != "INFO " {
		t.Errorf("record header bytes %q, want %q", got, "INFO ")
	}
	rec := session(t, s, 0)
	if i, k := stepErr(rec.Err); i != 1 || k != fakeserver.StepHandshake || !errors.Is(rec.Err, fakeserver.ErrHandshake) {
		t.Errorf("server record error %v, want step 1 handshake ErrHandshake", rec.Err)
	}
}

func TestPlaintextScript(t *testing.T) {
	s := start(t, fakeserver.Config{Script: []fakeserver.Step{
		fakeserver.Send(fakeserver.Info(`{}`)),
		fakeserver.ExpectMatch(regexp.MustCompile(`^CONNECT \{.*\}$`)),
		fakeserver.SendString("+OK\r\n"),
	}})
	c := dial(t, s)
	r := bufio.NewReader(c)
	if line, err := r.ReadString('\n'); err != nil || line != "INFO {} \r\n" {
		t.Fatalf("INFO: %q, %v", line, err)
	}
	if _, err := io.WriteString(c, "CONNECT {\"a\":1}\r\n"); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(r)
	if err != nil || string(rest) != "+OK\r\n" {
		t.Errorf("after CONNECT: %q, %v; want +OK then EOF", rest, err)
	}
	rec := session(t, s, 0)
	if diff := cmp.Diff("CONNECT {\"a\":1}\r\n", string(rec.Plain)); diff != "" || rec.Err != nil || rec.Steps != 3 {
		t.Errorf("record err %v steps %d, plain (-want +got):\n%s", rec.Err, rec.Steps, diff)
	}
}

func TestAbortedHandshakes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script []fakeserver.Step
		// check inspects the client's handshake error.
		check       func(error) bool
		wantRecErr  error // nil: script completed
		wantHelloIn bool  // Record.Plain starts with the ClientHello record
	}{
		{
			name:   "alert after client hello",
			script: []fakeserver.Step{fakeserver.ReadClientHello(), fakeserver.SendAlert(fakeserver.AlertHandshakeFailure)},
			check: func(err error) bool {
				a, ok := remoteAlert(err)
				return ok && a == fakeserver.AlertHandshakeFailure
			},
			wantHelloIn: true,
		},
		{
			name:        "hangup after client hello",
			script:      []fakeserver.Step{fakeserver.ReadClientHello(), fakeserver.Hangup()},
			check:       func(err error) bool { return errors.Is(err, io.EOF) },
			wantHelloIn: true,
		},
		{
			name:   "hangup before anything",
			script: []fakeserver.Step{fakeserver.Hangup()},
			check:  func(err error) bool { return err != nil },
		},
		{
			name:   "cut after 10 handshake bytes",
			script: []fakeserver.Step{fakeserver.HandshakeCut(10)},
			check:  func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) },
		},
		{
			name:   "cut at 0 bytes",
			script: []fakeserver.Step{fakeserver.HandshakeCut(0)},
			check:  func(err error) bool { return errors.Is(err, io.EOF) },
		},
		{
			name:       "cut never reached",
			script:     []fakeserver.Step{fakeserver.HandshakeCut(1 << 20)},
			check:      func(err error) bool { return err == nil },
			wantRecErr: fakeserver.ErrHandshakeNotCut,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, fakeserver.Config{Script: tc.script})
			tlsConn, err := dialTLS(t, s)
			if !tc.check(err) {
				t.Errorf("client handshake error %v (%T) not as expected", err, err)
			}
			_ = tlsConn.Close()
			rec := session(t, s, 0)
			if !errors.Is(rec.Err, tc.wantRecErr) || (tc.wantRecErr == nil && rec.Err != nil) {
				t.Errorf("record error %v, want %v", rec.Err, tc.wantRecErr)
			}
			if got := bytes.HasPrefix(rec.Plain, []byte{22, 3}); got != tc.wantHelloIn {
				t.Errorf("client hello recorded: %v, want %v", got, tc.wantHelloIn)
			}
		})
	}
}

func TestReadClientHelloRejectsPlaintext(t *testing.T) {
	s := start(t, fakeserver.Config{Script: []fakeserver.Step{fakeserver.ReadClientHello()}})
	c := dial(t, s)
	if _, err := io.WriteString(c, "CONNECT {}\r\n"); err != nil {
		t.Fatal(err)
	}
	rec := session(t, s, 0)
	if !errors.Is(rec.Err, fakeserver.ErrNotTLS) {
		t.Errorf("record error %v, want ErrNotTLS", rec.Err)
	}
	if string(rec.Plain) != "CONNE" {
		t.Errorf("recorded %q, want the 5-byte record header read", rec.Plain)
	}
}

func TestExpectFailures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		step      fakeserver.Step
		send      string
		closeSend bool
		want      error
	}{
		{"prefix mismatch", fakeserver.ExpectPrefix("CONNECT "), "PING\r\n", false, fakeserver.ErrUnexpectedLine},
		{"match mismatch", fakeserver.ExpectMatch(regexp.MustCompile(`^PONG$`)), "PONGX\r\n", false, fakeserver.ErrUnexpectedLine},
		{"match ignores CRLF", fakeserver.ExpectMatch(regexp.MustCompile(`^PONG$`)), "PONG\r\n", false, nil},
		{"match bare LF", fakeserver.ExpectMatch(regexp.MustCompile(`^PONG$`)), "PONG\n", false, nil},
		{"eof before line end", fakeserver.ExpectPrefix("PING"), "PIN", true, fakeserver.ErrClientClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, fakeserver.Config{Script: []fakeserver.Step{fakeserver.Handshake(), tc.step}})
			tlsConn, err := dialTLS(t, s)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(tlsConn, tc.send); err != nil {
				t.Fatal(err)
			}
			if tc.closeSend {
				_ = tlsConn.Close()
			}
			rec := session(t, s, 0)
			if !errors.Is(rec.Err, tc.want) || (tc.want == nil && rec.Err != nil) {
				t.Errorf("record error %v, want %v", rec.Err, tc.want)
			}
		})
	}
}

func TestMaxLine(t *testing.T) {
	const max = 16
	for _, tc := range []struct {
		name string
		line string
		want error
	}{
		{"at MaxLine", strings.Repeat("a", max-2) + "\r\n", nil},
		{"past MaxLine", strings.Repeat("a", max-1) + "\r\n", fakeserver.ErrLineTooLong},
		{"far past MaxLine", strings.Repeat("a", 10*max) + "\r\n", fakeserver.ErrLineTooLong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, fakeserver.Config{MaxLine: max, Script: []fakeserver.Step{fakeserver.Handshake(), fakeserver.ExpectPrefix("a")}})
			tlsConn, err := dialTLS(t, s)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(tlsConn, tc.line); err != nil {
				t.Fatal(err)
			}
			rec := session(t, s, 0)
			if !errors.Is(rec.Err, tc.want) || (tc.want == nil && rec.Err != nil) {
				t.Errorf("record error %v, want %v", rec.Err, tc.want)
			}
		})
	}
}

func TestMaxRecord(t *testing.T) {
	const max = 100
	for _, tc := range []struct {
		name          string
		n             int
		wantLen       int
		wantTruncated bool
	}{
		{"at MaxRecord", max, max, false},
		{"past MaxRecord", max + 1, max, true},
		{"far past MaxRecord", 100 * max, max, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, fakeserver.Config{MaxRecord: max, Script: []fakeserver.Step{fakeserver.Handshake(), fakeserver.WaitClose()}})
			tlsConn, err := dialTLS(t, s)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tlsConn.Write(bytes.Repeat([]byte("x"), tc.n)); err != nil {
				t.Fatal(err)
			}
			_ = tlsConn.Close()
			rec := session(t, s, 0)
			if len(rec.TLS) != tc.wantLen || rec.Truncated != tc.wantTruncated || rec.Err != nil {
				t.Errorf("recorded %d bytes, truncated %v, err %v; want %d, %v", len(rec.TLS), rec.Truncated, rec.Err, tc.wantLen, tc.wantTruncated)
			}
		})
	}
}

func TestStallEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	s, err := fakeserver.Start(ctx, fakeserver.Config{Script: []fakeserver.Step{
		fakeserver.Handshake(), fakeserver.Send(fakeserver.Info(`{}`)), fakeserver.Stall(),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tlsConn, err := dialTLS(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(tlsConn).ReadString('\n'); err != nil || !strings.HasPrefix(line, "INFO ") {
		t.Fatalf("INFO: %q, %v", line, err)
	}
	// The INFO was sent, so the script reaches Stall and says so.
	select {
	case <-s.Stalled():
	case <-time.After(10 * time.Second):
		t.Fatal("Stalled not closed after the steps before Stall")
	}
	// The session is still stalled: waiting for it with an expired
	// context fails.
	expired, cancelExpired := context.WithDeadline(t.Context(), time.Now())
	defer cancelExpired()
	if _, err := s.Session(expired, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Session while stalled: %v, want context.DeadlineExceeded", err)
	}
	cancel()
	rec := session(t, s, 0)
	if rec.Err != nil || rec.Steps != 3 {
		t.Errorf("record err %v steps %d, want nil and 3", rec.Err, rec.Steps)
	}
	// Unaccepted sessions end as stopped.
	if rec := session(t, s, 1); !errors.Is(rec.Err, fakeserver.ErrStopped) {
		t.Errorf("never-accepted session: %v, want ErrStopped", rec.Err)
	}
}

func TestCloseStopsStepsAndListener(t *testing.T) {
	s, err := fakeserver.Start(t.Context(), fakeserver.Config{Script: []fakeserver.Step{
		fakeserver.Handshake(), fakeserver.SendString("x"), fakeserver.ExpectPrefix("never"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	tlsConn, err := dialTLS(t, s)
	if err != nil {
		t.Fatal(err)
	}
	// Once "x" arrived the script waits in step 2.
	if _, err := io.ReadFull(tlsConn, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	addr := s.Addr()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	rec := session(t, s, 0)
	if i, k := stepErr(rec.Err); i != 2 || k != fakeserver.StepExpectPrefix || !errors.Is(rec.Err, fakeserver.ErrStopped) {
		t.Errorf("record error %v, want step 2 expect-prefix ErrStopped", rec.Err)
	}
	var d net.Dialer
	if c, err := d.DialContext(t.Context(), "tcp4", addr.String()); err == nil {
		_ = c.Close()
		t.Error("the listener still accepts after Close")
	}
}

func TestMaxConns(t *testing.T) {
	s := start(t, fakeserver.Config{MaxConns: 1, Script: []fakeserver.Step{fakeserver.Handshake(), fakeserver.Hangup()}})
	if _, err := dialTLS(t, s); err != nil {
		t.Fatal(err)
	}
	// The second connection is accepted and closed without a handshake.
	if _, err := dialTLS(t, s); err == nil {
		t.Error("second connection got a handshake")
	}
	if s.Accepted() != 2 {
		t.Errorf("Accepted() = %d, want 2", s.Accepted())
	}
	if rec := session(t, s, 0); rec.Err != nil {
		t.Errorf("first session: %v", rec.Err)
	}
	if _, err := s.Session(t.Context(), 1); !errors.Is(err, fakeserver.ErrNoSession) {
		t.Errorf("Session(1) = %v, want ErrNoSession", err)
	}
	if _, err := s.Session(t.Context(), -1); !errors.Is(err, fakeserver.ErrNoSession) {
		t.Errorf("Session(-1) = %v, want ErrNoSession", err)
	}
}

func TestCertificateNameOnly(t *testing.T) {
	s := start(t, fakeserver.Config{ServerName: "other.latent.test", Script: []fakeserver.Step{fakeserver.Handshake()}})
	// Subtests run one after another, so session Accepted()-1 is theirs.
	if s.ServerName() != "other.latent.test" {
		t.Errorf("ServerName() = %q", s.ServerName())
	}
	for _, tc := range []struct {
		name       string
		serverName string
		roots      *x509.CertPool
		ok         bool
		wantSNI    string // crypto/tls sends no SNI for an IP address
	}{
		{"configured name", "other.latent.test", s.RootCAs(), true, "other.latent.test"},
		{"ip address", "127.0.0.1", s.RootCAs(), false, ""},
		{"another name", fakeserver.DefaultServerName, s.RootCAs(), false, fakeserver.DefaultServerName},
		{"other roots", "other.latent.test", x509.NewCertPool(), false, "other.latent.test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := clientConfig(s)
			cfg.ServerName, cfg.RootCAs = tc.serverName, tc.roots
			err := tls.Client(dial(t, s), cfg).HandshakeContext(t.Context())
			if (err == nil) != tc.ok {
				t.Errorf("handshake: %v, want ok %v", err, tc.ok)
			}
			rec := session(t, s, s.Accepted()-1)
			if rec.SNI != tc.wantSNI {
				t.Errorf("SNI %q, want %q", rec.SNI, tc.wantSNI)
			}
		})
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CAPEM()) {
		t.Error("CAPEM() is not a PEM certificate")
	}
}

func TestTLSVersionBound(t *testing.T) {
	s := start(t, fakeserver.Config{MaxTLSVersion: tls.VersionTLS12, Script: []fakeserver.Step{fakeserver.Handshake()}})
	cfg := clientConfig(s)
	cfg.MinVersion = tls.VersionTLS13
	err := tls.Client(dial(t, s), cfg).HandshakeContext(t.Context())
	if a, ok := remoteAlert(err); !ok || a != fakeserver.AlertProtocolVersion {
		t.Errorf("handshake: %v, want a protocol_version alert", err)
	}
}

func TestSendRawInsideTLS(t *testing.T) {
	s := start(t, fakeserver.Config{Script: []fakeserver.Step{
		fakeserver.Handshake(), fakeserver.SendRaw([]byte("PING\r\n")), fakeserver.WaitClose(),
	}})
	tlsConn, err := dialTLS(t, s)
	if err != nil {
		t.Fatal(err)
	}
	// Plaintext inside the TLS stream is not a valid record.
	if n, err := tlsConn.Read(make([]byte, 16)); err == nil {
		t.Errorf("read %d bytes of plaintext as TLS data", n)
	}
}

// TestSendCopiesBytes: a step keeps its own copy of the bytes it was given.
func TestSendCopiesBytes(t *testing.T) {
	b := []byte("PING\r\n")
	step := fakeserver.Send(b)
	b[0] = 'X'
	s := start(t, fakeserver.Config{Script: []fakeserver.Step{fakeserver.Handshake(), step}})
	tlsConn, err := dialTLS(t, s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(tlsConn)
	if err != nil || string(got) != "PING\r\n" {
		t.Errorf("got %q, %v; want PING", got, err)
	}
}

// TestPingFlood scripts many PINGs and as many expected PONGs, the shape
// of a client test that server PINGs are answered.
func TestPingFlood(t *testing.T) {
	const n = 1000
	script := []fakeserver.Step{fakeserver.Handshake(), fakeserver.Send(bytes.Repeat([]byte("PING\r\n"), n))}
	for range n {
		script = append(script, fakeserver.ExpectPrefix("PONG\r\n"))
	}
	s := start(t, fakeserver.Config{Script: script})
	tlsConn, err := dialTLS(t, s)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(tlsConn)
	for range n {
		line, err := r.ReadString('\n')
		if err != nil || line != "PING\r\n" {
			t.Fatalf("got %q, %v", line, err)
		}
		if _, err := io.WriteString(tlsConn, "PONG\r\n"); err != nil {
			t.Fatal(err)
		}
	}
	rec := session(t, s, 0)
	if rec.Err != nil || rec.Steps != n+2 || len(rec.TLS) != 6*n {
		t.Errorf("record err %v, steps %d, %d bytes; want nil, %d, %d", rec.Err, rec.Steps, len(rec.TLS), n+2, 6*n)
	}
}
