package broker_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
)

func TestTenantUserHandshakeFirst(t *testing.T) {
	t.Parallel()
	b := brokertest.Start(t, broker.Options{Tenants: []string{"t1", "t2"}})
	user, err := b.User("t1", broker.UserSpec{
		Name:     "puller",
		PubAllow: []string{"$JS.API.INFO"},
		SubAllow: []string{"_INBOX.>"},
		Expires:  time.Now().Add(time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	c := dialTLSFirst(t, b)
	if got := c.info["tls_required"]; got != true {
		t.Errorf("INFO tls_required = %v, want true", got)
	}
	c.mustConnect(user)

	var resp struct {
		Type   string          `json:"type"`
		Error  json.RawMessage `json:"error"`
		Limits struct {
			MaxMemory  int64 `json:"max_memory"`
			MaxStorage int64 `json:"max_storage"`
			MaxStreams int64 `json:"max_streams"`
		} `json:"limits"`
	}
	if err := json.Unmarshal(c.request("$JS.API.INFO", "_INBOX.info", ""), &resp); err != nil {
		t.Fatal(err)
	}
	type limits struct{ Memory, Storage, Streams int64 }
	if diff := cmp.Diff(
		limits{broker.DefaultAccountMemory, broker.DefaultAccountDisk, broker.DefaultAccountStreams},
		limits{resp.Limits.MaxMemory, resp.Limits.MaxStorage, resp.Limits.MaxStreams},
	); diff != "" || resp.Type != "io.nats.jetstream.api.v1.account_info_response" || resp.Error != nil {
		t.Errorf("account info type %q error %s, limits (-want +got):\n%s", resp.Type, resp.Error, diff)
	}

	// A publish outside the allow list is refused and the connection stays.
	c.write("PUB forbidden.x 0\r\n\r\nPING\r\n")
	if got, want := c.mustLine(), `-ERR 'Permissions Violation for Publish to "forbidden.x"'`; got != want {
		t.Errorf("denied publish: got %q, want %q", got, want)
	}
	if got := c.mustLine(); got != "PONG" {
		t.Errorf("after a denied publish: got %q, want PONG", got)
	}
}

func TestAdminAndSystemUsers(t *testing.T) {
	t.Parallel()
	b := brokertest.Start(t, broker.Options{Tenants: []string{"t1"}})
	admin, err := b.Admin("t1")
	if err != nil {
		t.Fatal(err)
	}
	sys, err := b.System()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		creds       broker.Creds
		wantAccount string
	}{
		{"admin", admin, admin.Account},
		{"system", sys, b.SystemAccountKey()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialTLSFirst(t, b)
			if got := c.connect(tc.creds); got != "PONG" {
				t.Fatalf("CONNECT answered %.60q, want PONG", got)
			}
			info := c.readInfo()
			if got := info["remote_account"]; got != tc.wantAccount {
				t.Errorf("remote_account = %v, want %s", got, tc.wantAccount)
			}
		})
	}
	if _, err := b.Admin("nope"); !errors.Is(err, broker.ErrUnknownTenant) {
		t.Errorf("Admin(unknown tenant) = %v, want ErrUnknownTenant", err)
	}
	if _, err := b.User("nope", broker.UserSpec{}); !errors.Is(err, broker.ErrUnknownTenant) {
		t.Errorf("User(unknown tenant) = %v, want ErrUnknownTenant", err)
	}
}

func TestRefusedUsers(t *testing.T) {
	t.Parallel()
	b := brokertest.Start(t, broker.Options{Tenants: []string{"t1"}})
	expired, err := b.User("t1", broker.UserSpec{Expires: time.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	unknown, err := b.UnknownAccountUser(broker.UserSpec{})
	if err != nil {
		t.Fatal(err)
	}
	wrongSeed, err := b.Admin("t1")
	if err != nil {
		t.Fatal(err)
	}
	other, err := b.Admin("t1")
	if err != nil {
		t.Fatal(err)
	}
	wrongSeed.Seed = other.Seed

	for _, tc := range []struct {
		name  string
		creds broker.Creds
	}{
		{"expired", expired},
		{"unknown account", unknown},
		{"seed of another user", wrongSeed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := dialTLSFirst(t, b)
			if got, want := c.connect(tc.creds), "-ERR 'Authorization Violation'"; got != want {
				t.Errorf("CONNECT answered %q, want %q", got, want)
			}
			if rest := readUntilEOF(t, c.conn); len(rest) != 0 {
				t.Errorf("after the refusal: %d more bytes, want the connection closed", len(rest))
			}
		})
	}
}

// fallbackAttempts bounds the attempts of a client that has to write
// before a broker's fallback delay (50 ms in auto mode) runs out: an
// attempt whose client a loaded machine stalled past it finds the server
// speaking plaintext first, which shows nothing about the mode.
const fallbackAttempts = 5

// TestHandshakeModes starts one broker per mode and checks what a silent
// plaintext client, a plaintext CONNECT and a TLS-first client get.
func TestHandshakeModes(t *testing.T) {
	t.Parallel()
	// tlsTimeout is the brokers' TLS handshake timeout: the server's
	// default, which every other TLS handshake of these tests also has to
	// meet, so that a loaded machine does not fail the TLS-first case.
	const tlsTimeout = 2 * time.Second
	for _, tc := range []struct {
		mode  broker.HandshakeMode
		delay time.Duration
		// fallback: the server speaks plaintext first once its fallback
		// delay passed without input, so a client stalled that long
		// between its dial and its first write is answered as a silent
		// one; such an attempt is made again (see fallbackAttempts).
		fallback bool
		// wantSilent is what a plaintext client that writes nothing reads
		// first ("" = nothing before the connection closes), no sooner
		// than minWait after it started dialling.
		wantSilent string
		minWait    time.Duration
		// wantPlainConnectInfo: a client writing a plaintext CONNECT at
		// once still receives an INFO.
		wantPlainConnectInfo bool
		// wantTLSFirst is how a TLS-first handshake ends.
		wantTLSFirst string
	}{
		{mode: broker.HandshakeFirst, wantSilent: "", minWait: tlsTimeout, wantTLSFirst: "ok"},
		{mode: broker.HandshakeAfterInfo, wantSilent: "INFO ", wantPlainConnectInfo: true, wantTLSFirst: "not tls"},
		{mode: broker.HandshakeAuto, fallback: true, wantSilent: "INFO ", minWait: 50 * time.Millisecond, wantTLSFirst: "ok"},
		{mode: broker.HandshakeFallback, delay: 300 * time.Millisecond, fallback: true, wantSilent: "INFO ", minWait: 300 * time.Millisecond, wantTLSFirst: "ok"},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			t.Parallel()
			b := brokertest.Start(t, broker.Options{
				Tenants:       []string{"t1"},
				Handshake:     tc.mode,
				FallbackDelay: tc.delay,
				TLSTimeout:    tlsTimeout,
			})
			if b.Handshake() != tc.mode {
				t.Errorf("Handshake() = %v, want %v", b.Handshake(), tc.mode)
			}
			admin := mustAdmin(t, b)

			t.Run("silent plaintext client", func(t *testing.T) {
				// The clock starts before the dial: the server's timers
				// (fallback, TLS timeout) start once it has accepted the
				// connection, never before the dial began, so waited can
				// only overstate what the server waited.
				start := time.Now()
				raw := dialTCP(t, b)
				buf := make([]byte, 5)
				n, err := io.ReadFull(raw, buf)
				waited := time.Since(start)
				if got := string(buf[:n]); got != tc.wantSilent {
					t.Errorf("read %q, want %q", got, tc.wantSilent)
				}
				if ne := net.Error(nil); tc.wantSilent == "" && errors.As(err, &ne) && ne.Timeout() {
					t.Errorf("read ended on the client's deadline (%v), want the server to close", err)
				}
				if waited < tc.minWait {
					t.Errorf("answer after %v, want no sooner than %v", waited, tc.minWait)
				}
			})

			t.Run("plaintext CONNECT", func(t *testing.T) {
				for attempt := 1; ; attempt++ {
					raw := dialTCP(t, b)
					if _, err := raw.Write([]byte("CONNECT {}\r\nPING\r\n")); err != nil {
						t.Fatal(err)
					}
					got := readUntilEOF(t, raw)
					gotInfo := bytes.HasPrefix(got, []byte("INFO "))
					if gotInfo == tc.wantPlainConnectInfo {
						return
					}
					if !tc.fallback || attempt == fallbackAttempts {
						t.Fatalf("plaintext client got INFO: %v, want %v (attempt %d)", gotInfo, tc.wantPlainConnectInfo, attempt)
					}
					t.Logf("attempt %d: INFO first, the fallback fired before the CONNECT arrived", attempt)
				}
			})

			t.Run("tls first", func(t *testing.T) {
				var tlsConn *tls.Conn
				for attempt := 1; ; attempt++ {
					raw := dialTCP(t, b)
					tlsConn = tls.Client(raw, clientTLS(b))
					err := tlsConn.HandshakeContext(t.Context())
					got := handshakeOutcome(err)
					if got != tc.wantTLSFirst && got == "not tls" && tc.fallback && attempt < fallbackAttempts {
						t.Logf("attempt %d: INFO first, the fallback fired before the ClientHello arrived", attempt)
						continue
					}
					if got != tc.wantTLSFirst {
						t.Fatalf("handshake: %q (%v), want %q (attempt %d)", got, err, tc.wantTLSFirst, attempt)
					}
					if err != nil {
						return
					}
					break
				}
				c := &rawClient{t: t, conn: tlsConn, r: newReader(tlsConn)}
				c.info = c.readInfo()
				c.mustConnect(admin)
			})
		})
	}
}

// handshakeOutcome classifies a client handshake's result.
func handshakeOutcome(err error) string {
	var rhe tls.RecordHeaderError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &rhe):
		return "not tls"
	default:
		return "failed"
	}
}

func TestWrongServerNameRefused(t *testing.T) {
	t.Parallel()
	b := brokertest.Start(t, broker.Options{Tenants: []string{"t1"}, ServerName: "nats.example.test"})
	if b.ServerName() != "nats.example.test" {
		t.Errorf("ServerName() = %q", b.ServerName())
	}
	for _, name := range []string{b.Addr().Addr().String(), "broker.latent.test"} {
		t.Run(name, func(t *testing.T) {
			raw := dialTCP(t, b)
			cfg := clientTLS(b)
			cfg.ServerName = name
			err := tls.Client(raw, cfg).HandshakeContext(t.Context())
			var hostErr x509.HostnameError
			if !errors.As(err, &hostErr) {
				t.Fatalf("handshake with server name %q: %v, want a verification error", name, err)
			}
		})
	}
}

// jsCreate creates stream X (file storage, subjects x.>) with the admin
// user and publishes one message into it.
func jsCreate(t *testing.T, b *broker.Broker, admin broker.Creds) {
	t.Helper()
	c := dialTLSFirst(t, b)
	c.mustConnect(admin)
	cfg := `{"name":"X","subjects":["x.>"],"storage":"file","max_bytes":1048576}`
	var created struct {
		Error  json.RawMessage `json:"error"`
		Config struct {
			Name string `json:"name"`
		} `json:"config"`
	}
	if err := json.Unmarshal(c.request("$JS.API.STREAM.CREATE.X", "_INBOX.create", cfg), &created); err != nil {
		t.Fatal(err)
	}
	if created.Error != nil || created.Config.Name != "X" {
		t.Fatalf("stream create: error %s, name %q", created.Error, created.Config.Name)
	}
	c.write("PUB x.1 _INBOX.create 5\r\nhello\r\n")
	var ack struct {
		Stream string `json:"stream"`
		Seq    uint64 `json:"seq"`
	}
	if err := json.Unmarshal(c.readMsg("_INBOX.create"), &ack); err != nil {
		t.Fatal(err)
	}
	if ack.Stream != "X" || ack.Seq != 1 {
		t.Fatalf("pub ack %+v, want stream X seq 1", ack)
	}
}

func jsMessages(t *testing.T, b *broker.Broker, admin broker.Creds) uint64 {
	t.Helper()
	c := dialTLSFirst(t, b)
	c.mustConnect(admin)
	var info struct {
		Error json.RawMessage `json:"error"`
		State struct {
			Messages uint64 `json:"messages"`
		} `json:"state"`
	}
	if err := json.Unmarshal(c.request("$JS.API.STREAM.INFO.X", "_INBOX.info", ""), &info); err != nil {
		t.Fatal(err)
	}
	if info.Error != nil {
		t.Fatalf("stream info: %s", info.Error)
	}
	return info.State.Messages
}

func TestRestartKeepsJetStream(t *testing.T) {
	t.Parallel()
	b := brokertest.Start(t, broker.Options{Tenants: []string{"t1"}})
	admin, err := b.Admin("t1")
	if err != nil {
		t.Fatal(err)
	}
	jsCreate(t, b, admin)
	addr, pid := b.Addr(), b.PID()

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := b.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if b.Addr() != addr {
		t.Errorf("address after Restart %v, want %v", b.Addr(), addr)
	}
	if b.PID() == pid || !processGone(t, pid) {
		t.Errorf("old process %d still there after Restart", pid)
	}
	if got := jsMessages(t, b, admin); got != 1 {
		t.Errorf("messages after Restart = %d, want 1", got)
	}

	// A crash keeps the store too.
	if err := b.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := b.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if got := jsMessages(t, b, admin); got != 1 {
		t.Errorf("messages after Kill and Restart = %d, want 1", got)
	}
}

// TestRestartPortTaken: a restart whose port another socket took in the
// meantime fails as ErrExited and ErrPortTaken, with the server's fatal
// line in the message; freed, the port takes the restart.
func TestRestartPortTaken(t *testing.T) {
	t.Parallel()
	b := brokertest.Start(t, broker.Options{Tenants: []string{"t1"}})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	addr := b.Addr()
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp4", addr.String())
	if err != nil {
		t.Fatalf("holding the broker's port: %v", err)
	}
	err = b.Restart(ctx)
	_ = l.Close()
	if !errors.Is(err, broker.ErrExited) || !errors.Is(err, broker.ErrPortTaken) || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("Restart on a taken port: %v, want ErrExited and ErrPortTaken with the server's fatal line", err)
	}
	if err := b.Restart(ctx); err != nil {
		t.Fatalf("Restart on the freed port: %v", err)
	}
	if b.Addr() != addr {
		t.Errorf("address after Restart %v, want %v", b.Addr(), addr)
	}
}

// TestStacks: SIGQUIT gives every goroutine's stack, the JetStream API's
// workers among them; the broker is then stopped with its store, and
// Restart brings it back.
func TestStacks(t *testing.T) {
	t.Parallel()
	b := brokertest.Start(t, broker.Options{Tenants: []string{"t1"}})
	admin, err := b.Admin("t1")
	if err != nil {
		t.Fatal(err)
	}
	// An API request answered: the server's readiness line comes before
	// JetStream's workers may have started.
	jsCreate(t, b, admin)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	pid := b.PID()
	out, err := b.Stacks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SIGQUIT", "goroutine ", "processJSAPIRoutedRequests"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("stacks (%d bytes) lack %q", len(out), want)
		}
	}
	if len(out) > broker.MaxStacksBytes {
		t.Errorf("stacks of %d bytes, want at most %d", len(out), broker.MaxStacksBytes)
	}
	if b.Running() || !processGone(t, pid) {
		t.Errorf("after Stacks: running %v, process gone %v", b.Running(), processGone(t, pid))
	}
	if _, err := b.Stacks(ctx); !errors.Is(err, broker.ErrNotRunning) {
		t.Errorf("Stacks of a stopped broker: %v, want ErrNotRunning", err)
	}
	if err := b.Restart(ctx); err != nil {
		t.Fatalf("Restart after Stacks: %v", err)
	}
}

func TestKillStopClose(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	b := brokertest.Start(t, broker.Options{Tenants: []string{"t1"}, Dir: parent})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	pid := b.PID()
	if err := b.Kill(); err != nil {
		t.Fatal(err)
	}
	if b.Running() || b.PID() != 0 || !processGone(t, pid) {
		t.Fatalf("after Kill: running %v, pid %d, old process gone %v", b.Running(), b.PID(), processGone(t, pid))
	}
	if err := b.Kill(); err != nil {
		t.Errorf("second Kill: %v", err)
	}

	if err := b.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	pid = b.PID()
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if b.Running() || !processGone(t, pid) {
		t.Fatalf("after Stop: running %v, old process gone %v", b.Running(), processGone(t, pid))
	}
	if err := b.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}

	if err := b.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	pid = b.PID()
	if _, err := b.WriteCreds("t1.creds", mustAdmin(t, b)); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if !processGone(t, pid) {
		t.Errorf("process %d left after Close", pid)
	}
	if left := dirEntries(t, parent); len(left) != 0 {
		t.Errorf("files left after Close: %v", left)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for name, err := range map[string]error{
		"Restart": b.Restart(ctx),
		"Stop":    b.Stop(ctx),
		"Kill":    b.Kill(),
	} {
		if !errors.Is(err, broker.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}

func TestStartFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	bin, err := broker.ServerBinary(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts broker.Options
		want error
	}{
		{"bad config", broker.Options{Tenants: []string{"t1"}, Binary: bin, Extra: "jetstream {"}, broker.ErrExited},
		{"invalid options", broker.Options{Binary: bin}, broker.ErrInvalidOptions},
		{"no binary", broker.Options{Tenants: []string{"t1"}, Binary: "/nonexistent/nats-server"}, os.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.opts.Dir = t.TempDir()
			b, err := broker.Start(t.Context(), tc.opts)
			if !errors.Is(err, tc.want) {
				t.Errorf("Start: %v, want %v", err, tc.want)
			}
			if b != nil {
				t.Errorf("Start returned a broker with an error")
			}
			if left := dirEntries(t, tc.opts.Dir); len(left) != 0 {
				t.Errorf("files left: %v", left)
			}
		})
	}
}

func TestStartCanceled(t *testing.T) {
	t.Parallel()
	bin, err := broker.ServerBinary(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = broker.Start(ctx, broker.Options{Tenants: []string{"t1"}, Binary: bin, Dir: dir})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Start with a canceled context: %v, want context.Canceled", err)
	}
	if left := dirEntries(t, dir); len(left) != 0 {
		t.Errorf("files left: %v", left)
	}
}

func TestLogForwardedAndBounded(t *testing.T) {
	t.Parallel()
	var log lockedBuffer
	b := brokertest.Start(t, broker.Options{Tenants: []string{"t1"}, Log: &log})
	forwarded := log.String() // read first: the ring can only have grown since
	logs := string(b.Logs())
	if len(logs) == 0 || len(logs) > broker.MaxLogBytes {
		t.Fatalf("Logs() has %d bytes, want 1..%d", len(logs), broker.MaxLogBytes)
	}
	if !strings.Contains(forwarded, "Server is ready") || !strings.HasSuffix(forwarded, "\n") {
		t.Errorf("forwarded log lacks the readiness line or ends mid-line")
	}
	if !strings.HasPrefix(logs, forwarded) {
		t.Errorf("forwarded log (%d bytes) is not a prefix of Logs() (%d bytes)", len(forwarded), len(logs))
	}
}

// TestExtraConfig: Options.Extra reaches the server (max_payload shows in
// INFO) and the ack v2 feature flag is accepted.
func TestExtraConfig(t *testing.T) {
	t.Parallel()
	b := brokertest.Start(t, broker.Options{
		Tenants: []string{"t1"},
		Extra:   "max_payload: 4096\nmax_control_line: 1024\nfeature_flags { js_ack_fc_v2: true }",
	})
	c := dialTLSFirst(t, b)
	if got := c.info["max_payload"]; got != float64(4096) {
		t.Errorf("INFO max_payload = %v, want 4096", got)
	}
	c.mustConnect(mustAdmin(t, b))
	c.write("SUB " + strings.Repeat("a", 1100) + " 1\r\n")
	if got, want := c.mustLine(), "-ERR 'maximum control line exceeded'"; got != want {
		t.Errorf("long control line: %q, want %q", got, want)
	}
}

// BenchmarkStartClose measures one broker start (until ready) and close.
func BenchmarkStartClose(b *testing.B) {
	bin, err := broker.ServerBinary(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	for b.Loop() {
		br, err := broker.Start(b.Context(), broker.Options{Tenants: []string{"t1"}, Binary: bin, Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		if err := br.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func mustAdmin(t *testing.T, b *broker.Broker) broker.Creds {
	t.Helper()
	c, err := b.Admin("t1")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// processGone reports whether pid no longer runs: /proc has no entry for
// it, or it is a zombie waiting for a reaper that is not this process.
func processGone(t *testing.T, pid int) bool {
	t.Helper()
	state := processState(t, pid)
	return state == 0 || state == 'Z' || state == 'X'
}

// processState returns the state letter of pid in /proc/<pid>/stat ('T'
// stopped, 'Z' zombie and so on), or 0 when /proc has no entry for it.
func processState(t *testing.T, pid int) byte {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		t.Fatalf("unexpected /proc stat for %d", pid)
	}
	return stat[i+2]
}
