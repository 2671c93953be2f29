package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/tools/provision"
	"github.com/latent-systems/latent-nats/tools/validate"
	"github.com/latent-systems/latent-nats/trigger"
)

// testDeadline bounds the runtime phase in tests; the scenario settles in
// well under a second.
const testDeadline = 15 * time.Second

// guestCache is the compilation cache every test's guests share
// (options.GuestCache): the guest, which takes seconds to compile under the
// race detector, is compiled once per test binary.
var guestCache string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "demo-guest-cache")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	guestCache = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildGuest builds the demo's guest (./guest) as make demo does
// (guestBuild), with the go command on PATH, which go test puts first: the
// toolchain running this test. It returns the module's path, in a
// directory of its own that the test removes.
func buildGuest(t *testing.T) string {
	t.Helper()
	goBinary, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "demo-guest.wasm")
	cmd := exec.Command(goBinary, "build", "-buildmode=c-shared", "-o", out, "./guest")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./guest: %v\n%s", err, msg)
	}
	return out
}

// assertNoPayload fails when out holds any event's payload: progress,
// table and reports never carry one.
func assertNoPayload(t *testing.T, out string) {
	t.Helper()
	for _, e := range newScenario().Events {
		if strings.Contains(out, e.Payload) {
			t.Errorf("output holds the payload of a %s event", e.Kind)
		}
	}
}

// assertRemoved fails unless dir, the broker's parent directory, is empty.
func assertRemoved(t *testing.T, dir string) {
	t.Helper()
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("%d entries left in %s after the demo, want none", len(left), dir)
	}
}

// TestDemo runs the whole demo in-process against the pinned broker and
// checks its final table, the broker's view of the consumers, what was left
// held (reservations, goroutines), and that it removed every file.
func TestDemo(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	goroutines := runtime.NumGoroutine()
	start := time.Now()
	sum, err := demo(t.Context(), &out, options{Guest: buildGuest(t), GuestCache: guestCache, Deadline: testDeadline, Dir: dir, Verbose: true})
	t.Logf("demo took %v", time.Since(start))
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Errorf("%d goroutines after the demo, %d before", n, goroutines)
	}
	sc := newScenario()
	want := expectedRows(sc.Bindings, sc.Events)
	if diff := cmp.Diff(want, sum.Rows); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	if sum.Settled != uint64(len(sc.Events)) || sum.Events != uint64(len(sc.Events)) {
		t.Errorf("settled %d of %d events, want %d of %d", sum.Settled, sum.Events, len(sc.Events), len(sc.Events))
	}
	wantConsumers := make([]consumerState, len(sc.Bindings))
	for i, b := range sc.Bindings {
		wantConsumers[i] = consumerState{Binding: b.ID, Checked: true}
	}
	if diff := cmp.Diff(wantConsumers, sum.Consumers); diff != "" {
		t.Errorf("consumers (-want +got):\n%s", diff)
	}
	if sum.Usage != (trigger.Usage{}) {
		t.Errorf("pools still hold %+v", sum.Usage)
	}
	if sum.Host.Slots != 0 || sum.Host.InputBytes != 0 || sum.Host.MemoryBytes != 0 || sum.Host.Running != 0 {
		t.Errorf("host still holds %d slots, %d input bytes, %d guest memory bytes, %d running",
			sum.Host.Slots, sum.Host.InputBytes, sum.Host.MemoryBytes, sum.Host.Running)
	}
	wantGuest := expectedActivations(sc.Bindings, sc.Events)
	if diff := cmp.Diff(wantGuest, sum.Guest); diff != "" {
		t.Errorf("guest activations (-want +got):\n%s", diff)
	}
	if sum.GuestLive != 0 {
		t.Errorf("%d guest instances live after the demo", sum.GuestLive)
	}
	assertActivations(t, out.String(), wantGuest)
	if !sum.HasLast || sum.Last.Epoch != 1 {
		t.Errorf("last step %+v (present %v), want one of epoch 1", sum.Last, sum.HasLast)
	}
	var table strings.Builder
	writeTable(&table, want)
	if !strings.Contains(out.String(), table.String()) {
		t.Errorf("output lacks the expected table:\n%s\ngot:\n%s", table.String(), out.String())
	}
	assertNoPayload(t, out.String())
	assertRemoved(t, dir)
	assertLogged(t, out.String())
}

// assertActivations checks the activation lines: one per activation, each
// in a fresh instance, and every ok result's call count 1.
func assertActivations(t *testing.T, out string, want activationCounts) {
	t.Helper()
	var n, ok uint64
	for l := range strings.Lines(out) {
		if !strings.HasPrefix(l, "  activation ") {
			continue
		}
		if !strings.Contains(l, " (fresh)") {
			t.Errorf("activation line %q: want a fresh instance", l)
		}
		n++
		if strings.Contains(l, "-> ok(") || strings.Contains(l, "guest call count") {
			ok++
			if !strings.Contains(l, "guest call count 1,") {
				t.Errorf("activation line %q: want a guest call count of 1", l)
			}
		}
	}
	if n != want.Activations || ok != want.Counted {
		t.Errorf("%d activation lines, %d with a call count; want %d and %d", n, ok, want.Activations, want.Counted)
	}
}

// assertLogged checks the runtime's log that -v writes: the installation,
// a connection per tenant and the exhausted delivery of the scenario, each
// a line after "  log " with the fixed message and its attributes, and
// nothing logged per visit (fewer lines than the scenario has events).
func assertLogged(t *testing.T, out string) {
	t.Helper()
	var lines []string
	for l := range strings.Lines(out) {
		if rest, ok := strings.CutPrefix(l, "  log "); ok {
			lines = append(lines, rest)
		}
	}
	count := func(msg string) int {
		n := 0
		for _, l := range lines {
			if strings.Contains(l, `msg="`+msg+`"`) {
				n++
			}
		}
		return n
	}
	sc := newScenario()
	tenants := map[string]bool{}
	for _, b := range sc.Bindings {
		tenants[b.Tenant] = true
	}
	// The messages as docs/OPERATIONS.md's Logs table writes them.
	const (
		installed = "trigger configuration installed"
		dialled   = "trigger broker connection dialled"
		exhausted = "trigger delivery exhausted"
	)
	if n := count(installed); n != 1 {
		t.Errorf("%d lines %q, want 1", n, installed)
	}
	if n := count(dialled); n < len(tenants) {
		t.Errorf("%d lines %q, want at least one per tenant (%d)", n, dialled, len(tenants))
	}
	if n := count(exhausted); n != 1 {
		t.Errorf("%d lines %q, want the scenario's one exhausted delivery", n, exhausted)
	}
	if len(lines) >= len(sc.Events) {
		t.Errorf("%d log lines for %d events: the log is not per visit", len(lines), len(sc.Events))
	}
	t.Logf("log:\n%s", strings.Join(lines, ""))
}

// TestDemoKeep runs the demo with -keep: the files it describes let the
// validator accept the configuration with both credentials files and the
// provisioning tool assert every stream and consumer, and the runtime's
// user reach the broker; when the context ends the broker is stopped and
// every file removed.
func TestDemoKeep(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var kept access
	ready := func(a access) {
		defer cancel()
		kept = a
		for _, creds := range []string{a.RuntimeCredentials, a.AdminCredentials} {
			res := validate.Check(validate.Input{ConfigPath: a.Config, CredentialsPath: creds})
			if !res.OK() {
				t.Errorf("validate %s: %v", creds, res.Err())
			}
			res.Wipe()
		}
		var stdout, stderr bytes.Buffer
		args := []string{"-assert", "-permissions", "none", "-config", a.Config, "-credentials", a.AdminCredentials}
		if code := provision.Main(ctx, args, &stdout, &stderr); code != provision.ExitOK {
			t.Errorf("provision -assert: exit %d\n%s", code, stderr.String())
		}
		for _, tf := range a.Tenants {
			dialRuntime(t, a, tf)
		}
	}
	var out bytes.Buffer
	_, err := demo(ctx, &out, options{Guest: buildGuest(t), GuestCache: guestCache, Keep: true, Deadline: testDeadline, Dir: dir, KeepReady: ready})
	if err != nil {
		t.Fatalf("demo -keep: %v\n%s", err, out.String())
	}
	if kept.Dir == "" {
		t.Fatal("KeepReady was not called")
	}
	for _, want := range []string{kept.Addr.String(), kept.ServerName, kept.CAFile, kept.Config, kept.RuntimeCredentials} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output does not say %q", want)
		}
	}
	assertNoPayload(t, out.String())
	assertRemoved(t, dir)
}

// dialRuntime connects to the kept broker with a tenant's runtime .creds
// file and its private inbox prefix, as the trigger runtime does; with the
// account-wide default prefix the same user is refused its inbox.
func dialRuntime(t *testing.T, a access, tf tenantFiles) {
	t.Helper()
	if want := trigger.InboxPrefix(tf.Tenant); tf.InboxPrefix != want {
		t.Errorf("tenant %s: inbox prefix %q, want %q", tf.Tenant, tf.InboxPrefix, want)
	}
	credsPath := tf.Runtime
	raw, err := os.ReadFile(credsPath)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := credential.ParseCreds(raw)
	clear(raw)
	if err != nil {
		t.Fatal(err)
	}
	defer secret.Wipe()
	ca, err := os.ReadFile(a.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	d := trigger.Destination{Address: a.Addr, ServerName: a.ServerName, RootCAsPEM: string(ca), AllowNonPublic: true}
	cc, err := provision.ConnConfig(d, secret)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), requestTimeout)
	defer cancel()
	if c, err := conn.Dial(ctx, cc); err == nil {
		c.Close()
		t.Errorf("runtime user %s: dial with the default inbox prefix succeeded, want a permission violation", credsPath)
	} else {
		var se *conn.ServerError
		if !errors.As(err, &se) || se.Kind != conn.KindPermission {
			t.Errorf("runtime user %s: dial with the default inbox prefix: %v, want a permission violation", credsPath, err)
		}
	}
	cc.InboxPrefix = tf.InboxPrefix
	c, err := conn.Dial(ctx, cc)
	if err != nil {
		t.Errorf("runtime user %s: dial: %v", credsPath, err)
		return
	}
	c.Close()
}

// TestDemoInterrupted: a context that ends before the demo starts its
// broker stops it with errInterrupted and leaves nothing behind.
func TestDemoInterrupted(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := demo(ctx, io.Discard, options{Guest: buildGuest(t), GuestCache: guestCache, Deadline: testDeadline, Dir: dir})
	if !isInterrupt(err) {
		t.Errorf("demo with a cancelled context: %v, want errInterrupted", err)
	}
	assertRemoved(t, dir)
}

// cancelOn is a writer that ends a context when a write holds marker.
type cancelOn struct {
	buf    bytes.Buffer
	marker string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(c.marker)) {
		c.cancel()
	}
	return c.buf.Write(p)
}

// TestDemoInterruptedWhileRunning: a signal while the runtime runs stops
// it, and the broker, and leaves nothing behind.
func TestDemoInterruptedWhileRunning(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w := &cancelOn{marker: "running the runtime", cancel: cancel}
	_, err := demo(ctx, w, options{Guest: buildGuest(t), GuestCache: guestCache, Deadline: testDeadline, Dir: dir})
	if !isInterrupt(err) {
		t.Errorf("demo interrupted while running: %v, want errInterrupted\n%s", err, w.buf.String())
	}
	assertRemoved(t, dir)
}
