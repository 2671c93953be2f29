package broker_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
)

// pausedProbe is how long a test waits for an answer that a paused server
// must not give. A pause is proven by the state of the server's threads
// (Pause returns once every one of them stopped), so a longer probe would
// prove nothing more; the answer after Resume gets ioTimeout.
const pausedProbe = 300 * time.Millisecond

// lifecycleTimeout bounds one Stop, Restart or LameDuck of these tests.
const lifecycleTimeout = time.Minute

// serverExiting is the line nats-server logs at the end of a graceful
// shutdown (v2.14.6 server.go, Shutdown); a killed server never logs it.
const serverExiting = "Server Exiting.."

// TestPauseResume: a paused server completes TCP connections but answers
// nothing, neither a new client's TLS handshake nor a connected client's
// PING; after Resume the PING is answered on the same connection and new
// clients are served.
func TestPauseResume(t *testing.T) {
	t.Parallel()
	b := brokertest.Start(t, broker.Options{Tenants: []string{"t1"}})
	admin := mustAdmin(t, b)
	held := dialTLSFirst(t, b)
	held.mustConnect(admin)
	pid := b.PID()

	if err := b.Pause(); err != nil {
		t.Fatal(err)
	}
	if !b.Paused() || !b.Running() || b.PID() != pid {
		t.Fatalf("after Pause: paused %v, running %v, pid %d (was %d)", b.Paused(), b.Running(), b.PID(), pid)
	}
	if got := processState(t, pid); got != 'T' {
		t.Fatalf("process state after Pause %q, want 'T' (stopped)", got)
	}
	if err := b.Pause(); err != nil {
		t.Errorf("second Pause: %v", err)
	}

	raw := dialTCP(t, b) // the kernel completes the connection
	ctx, cancel := context.WithTimeout(t.Context(), pausedProbe)
	err := tls.Client(raw, clientTLS(b)).HandshakeContext(ctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("TLS handshake with a paused server: %v, want it still pending at its deadline", err)
	}

	held.write("PING\r\n")
	if err := held.conn.SetReadDeadline(time.Now().Add(pausedProbe)); err != nil {
		t.Fatal(err)
	}
	if line, err := held.readLine(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("paused server answered a PING: %.40q, %v; want nothing until the deadline", line, err)
	}

	if err := b.Resume(); err != nil {
		t.Fatal(err)
	}
	if b.Paused() || !b.Running() {
		t.Errorf("after Resume: paused %v, running %v", b.Paused(), b.Running())
	}
	if got := processState(t, pid); got == 'T' {
		t.Errorf("process state after Resume %q, want it running", got)
	}
	if err := held.conn.SetReadDeadline(time.Now().Add(ioTimeout)); err != nil {
		t.Fatal(err)
	}
	if got := held.mustLine(); got != "PONG" {
		t.Errorf("after Resume the connected client read %.40q, want PONG", got)
	}
	dialTLSFirst(t, b).mustConnect(admin)
	if err := b.Resume(); err != nil {
		t.Errorf("second Resume: %v", err)
	}
}

// TestLifecycleWhilePaused: every lifecycle call works on a paused broker,
// the graceful ones gracefully (the server logs its exit instead of being
// killed after a deadline).
func TestLifecycleWhilePaused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		op          func(*broker.Broker, context.Context) error
		wantRunning bool
		wantExits   int // graceful exits the server logged
	}{
		{"Kill", func(b *broker.Broker, _ context.Context) error { return b.Kill() }, false, 0},
		{"Stop", (*broker.Broker).Stop, false, 1},
		{"Restart", (*broker.Broker).Restart, true, 1},
		{"LameDuck", (*broker.Broker).LameDuck, false, 1},
		{"Close", func(b *broker.Broker, _ context.Context) error { return b.Close() }, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := brokertest.Start(t, broker.Options{Tenants: []string{"t1"}, LameDuckGracePeriod: time.Second})
			pid := b.PID()
			if err := b.Pause(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), lifecycleTimeout)
			defer cancel()
			if err := tc.op(b, ctx); err != nil {
				t.Fatalf("%s on a paused broker: %v", tc.name, err)
			}
			if !processGone(t, pid) {
				t.Errorf("paused process %d still there after %s", pid, tc.name)
			}
			if b.Paused() || b.Running() != tc.wantRunning {
				t.Errorf("after %s: paused %v, running %v (want %v)", tc.name, b.Paused(), b.Running(), tc.wantRunning)
			}
			if got := strings.Count(string(b.Logs()), serverExiting); got != tc.wantExits {
				t.Errorf("graceful exits logged: %d, want %d", got, tc.wantExits)
			}
			if tc.wantRunning {
				dialTLSFirst(t, b).mustConnect(mustAdmin(t, b))
			}
		})
	}
}

// TestNotRunning: what the fault calls do on a broker that is not running
// and after Close.
func TestNotRunning(t *testing.T) {
	t.Parallel()
	b := brokertest.Start(t, broker.Options{Tenants: []string{"t1"}})
	ctx, cancel := context.WithTimeout(t.Context(), lifecycleTimeout)
	defer cancel()
	if err := b.Kill(); err != nil {
		t.Fatal(err)
	}
	type calls struct{ Pause, Resume, LameDuck error }
	check := func(name string, want calls) {
		t.Helper()
		got := calls{b.Pause(), b.Resume(), b.LameDuck(ctx)}
		opt := cmp.Comparer(func(x, y error) bool { return errors.Is(x, y) || errors.Is(y, x) })
		if diff := cmp.Diff(want, got, opt); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
		if b.Paused() || b.Running() {
			t.Errorf("%s: paused %v, running %v", name, b.Paused(), b.Running())
		}
	}
	check("after Kill", calls{Pause: broker.ErrNotRunning, LameDuck: broker.ErrNotRunning})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	check("after Close", calls{broker.ErrClosed, broker.ErrClosed, broker.ErrClosed})
}

// TestLameDuck: a connected client is told (INFO "ldm":true) and then
// closed, the process exits, the port is closed, and Restart serves the
// same stream on the same port.
func TestLameDuck(t *testing.T) {
	t.Parallel()
	b := brokertest.Start(t, broker.Options{
		Tenants:             []string{"t1"},
		LameDuckDuration:    broker.MinLameDuckDuration,
		LameDuckGracePeriod: time.Second,
	})
	admin := mustAdmin(t, b)
	jsCreate(t, b, admin)
	c := dialTLSFirst(t, b)
	c.mustConnect(admin)
	addr, pid := b.Addr(), b.PID()

	ctx, cancel := context.WithTimeout(t.Context(), lifecycleTimeout)
	defer cancel()
	if err := b.LameDuck(ctx); err != nil {
		t.Fatal(err)
	}
	if b.Running() || b.PID() != 0 || !processGone(t, pid) {
		t.Fatalf("after LameDuck: running %v, pid %d, old process gone %v", b.Running(), b.PID(), processGone(t, pid))
	}
	if !strings.Contains(string(b.Logs()), serverExiting) {
		t.Errorf("the server did not log a graceful exit")
	}

	// What the client was sent is still in its socket.
	if info := c.readInfo(); info["ldm"] != true {
		t.Errorf("INFO after lame duck mode: ldm = %v, want true", info["ldm"])
	}
	if _, err := c.r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("after the lame duck INFO: %v, want the connection closed", err)
	}
	var d net.Dialer
	if conn, err := d.DialContext(ctx, "tcp4", addr.String()); !errors.Is(err, syscall.ECONNREFUSED) {
		if conn != nil {
			_ = conn.Close()
		}
		t.Errorf("dial after LameDuck: %v, want connection refused", err)
	}

	if err := b.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if b.Addr() != addr {
		t.Errorf("address after Restart %v, want %v", b.Addr(), addr)
	}
	if diff := cmp.Diff(storedMsg{Subject: "x.1", Seq: 1, Data: []byte("hello")}, jsGet(t, b, admin, 1)); diff != "" {
		t.Errorf("stored message after LameDuck and Restart (-want +got):\n%s", diff)
	}
}

// TestKillRestartRecoversStore: after SIGKILL, Restart on the same port
// recovers the file store, with the server's default sync and with
// sync_interval: always.
func TestKillRestartRecoversStore(t *testing.T) {
	t.Parallel()
	for _, sync := range []string{"", "always"} {
		t.Run("sync="+sync, func(t *testing.T) {
			t.Parallel()
			b := brokertest.Start(t, broker.Options{Tenants: []string{"t1"}, SyncInterval: sync})
			admin := mustAdmin(t, b)
			jsCreate(t, b, admin)
			addr, pid := b.Addr(), b.PID()
			if err := b.Kill(); err != nil {
				t.Fatal(err)
			}
			if !processGone(t, pid) || strings.Contains(string(b.Logs()), serverExiting) {
				t.Fatalf("after Kill: process %d gone %v, graceful exit logged %v",
					pid, processGone(t, pid), strings.Contains(string(b.Logs()), serverExiting))
			}
			ctx, cancel := context.WithTimeout(t.Context(), lifecycleTimeout)
			defer cancel()
			if err := b.Restart(ctx); err != nil {
				t.Fatal(err)
			}
			if b.Addr() != addr {
				t.Errorf("address after Restart %v, want %v", b.Addr(), addr)
			}
			if diff := cmp.Diff(storedMsg{Subject: "x.1", Seq: 1, Data: []byte("hello")}, jsGet(t, b, admin, 1)); diff != "" {
				t.Errorf("stored message after Kill and Restart (-want +got):\n%s", diff)
			}
			if got := jsMessages(t, b, admin); got != 1 {
				t.Errorf("messages after Kill and Restart = %d, want 1", got)
			}
		})
	}
}

// TestSyncInterval: the setting reaches the server, as its own VARZ
// (asked over the system account) reports it.
func TestSyncInterval(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sync string
		want jsSync
	}{
		// The server's default, and the interval it keeps with "always"
		// (nats-server v2.14.6 opts.go parseJetStream).
		{"", jsSync{Interval: 2 * time.Minute}},
		{"always", jsSync{Interval: 2 * time.Minute, Always: true}},
		{"2s", jsSync{Interval: 2 * time.Second}},
	} {
		t.Run("sync="+tc.sync, func(t *testing.T) {
			t.Parallel()
			b := brokertest.Start(t, broker.Options{Tenants: []string{"t1"}, SyncInterval: tc.sync})
			if diff := cmp.Diff(tc.want, serverSync(t, b)); diff != "" {
				t.Errorf("JetStream sync settings in VARZ (-want +got):\n%s", diff)
			}
		})
	}
}

// jsSync is the part of the server's JetStream configuration that
// Options.SyncInterval sets.
type jsSync struct {
	Interval time.Duration `json:"sync_interval"`
	Always   bool          `json:"sync_always"`
}

// serverSync asks the server for its VARZ as the system user.
func serverSync(t *testing.T, b *broker.Broker) jsSync {
	t.Helper()
	sys, err := b.System()
	if err != nil {
		t.Fatal(err)
	}
	c := dialTLSFirst(t, b)
	c.mustConnect(sys)
	var resp struct {
		Error json.RawMessage `json:"error"`
		Data  struct {
			JetStream struct {
				Config *jsSync `json:"config"`
			} `json:"jetstream"`
		} `json:"data"`
	}
	if err := json.Unmarshal(c.request("$SYS.REQ.SERVER.PING.VARZ", "_INBOX.varz", ""), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil || resp.Data.JetStream.Config == nil {
		t.Fatalf("VARZ: error %s, JetStream config present %v", resp.Error, resp.Data.JetStream.Config != nil)
	}
	return *resp.Data.JetStream.Config
}

// storedMsg is a message read back from stream X.
type storedMsg struct {
	Subject string `json:"subject"`
	Seq     uint64 `json:"seq"`
	Data    []byte `json:"data"`
}

// jsGet reads the message at seq of stream X with the admin user.
func jsGet(t *testing.T, b *broker.Broker, admin broker.Creds, seq uint64) storedMsg {
	t.Helper()
	c := dialTLSFirst(t, b)
	c.mustConnect(admin)
	req, err := json.Marshal(map[string]uint64{"seq": seq})
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Error   json.RawMessage `json:"error"`
		Message storedMsg       `json:"message"`
	}
	if err := json.Unmarshal(c.request("$JS.API.STREAM.MSG.GET.X", "_INBOX.get", string(req)), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil {
		t.Fatalf("stream message get: %s", resp.Error)
	}
	return resp.Message
}
