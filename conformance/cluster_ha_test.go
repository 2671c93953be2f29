package conformance_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// The second process of TestClusterTwoProcesses (and the fresh processes
// of TestTriggerRestartFreshProcess) is the test binary started again
// with haChildEnv naming a directory that holds the installation's
// configuration (haConfigFile, Config.MarshalJSON bytes) and the tenant's
// credentials (haCredsFile). It installs them and runs until killed, its
// standard input closes or haChildLife passes; it writes one line per
// event to standard output: "ready" once Run started, "run <binding>
// <seq> <delivered>" when its function starts on a delivery, "step
// <json>" for each step report of a delivery. Its function blocks until
// its activation's deadline, unless haChildOKEnv is set: then it returns
// at once (a success).
const (
	haChildEnv   = "LATENT_CONFORMANCE_HA_CHILD"
	haChildOKEnv = "LATENT_CONFORMANCE_HA_CHILD_OK"
	haConfigFile = "config.json"
	haCredsFile  = "runtime.creds"
	haChildLife  = 2 * time.Minute
	// haLineWait bounds the wait for one line of the second process.
	haLineWait = 90 * time.Second
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(haChildEnv); dir != "" {
		os.Exit(haChild(dir))
	}
	os.Exit(m.Run())
}

// haChild is the second process: ParseConfig of the persisted bytes, the
// credentials from their file, Install on pools of its own, Run with a
// reference host whose function blocks.
func haChild(dir string) int {
	fail := func(what string, err error) int {
		fmt.Fprintf(os.Stderr, "second process: %s: %v\n", what, err)
		return 2
	}
	raw, err := os.ReadFile(filepath.Join(dir, haConfigFile))
	if err != nil {
		return fail("config", err)
	}
	cfg, err := trigger.ParseConfig(raw)
	if err != nil {
		return fail("config", err)
	}
	file, err := os.ReadFile(filepath.Join(dir, haCredsFile))
	if err != nil {
		return fail("credentials", err)
	}
	secret, err := credential.ParseCreds(file)
	clear(file)
	if err != nil {
		return fail("credentials", err)
	}
	defer secret.Wipe()
	tc := cfg.Tenants[0]
	creds := []trigger.Credential{{Tenant: tc.ID, ProviderID: tc.ProviderID, Destination: tc.Destination, Secret: secret}}
	pools, err := trigger.NewPools(trigger.PoolConfig{Limits: trigger.DefaultPoolLimits()})
	if err != nil {
		return fail("pools", err)
	}
	defer pools.Close()
	trig, _, err := trigger.Install(pools, trigger.Installation{LogicalID: "conformance", Epoch: 1, Config: cfg, Credentials: creds})
	if err != nil {
		return fail("install", err)
	}
	defer trig.Close()

	out := &haWriter{w: bufio.NewWriter(os.Stdout)}
	host, err := refhost.New(refhost.Config{MaxActivations: 4, MaxInputBytes: 4 * 256})
	if err != nil {
		return fail("host", err)
	}
	err = host.Register(refhost.Function{
		Service: trigService, Revision: "r1", Contract: trigContract, Name: trigFunction,
		Params: []refhost.Type{refhost.String()}, Failures: []string{trigDeclared},
		Func: func(ctx context.Context, c refhost.Call) error {
			out.line(fmt.Sprintf("run %s %d %d", c.Binding.ID, c.StreamSeq, c.Delivered))
			if os.Getenv(haChildOKEnv) != "" {
				return nil
			}
			<-ctx.Done()
			return ctx.Err()
		},
	})
	if err != nil {
		return fail("register", err)
	}
	if err := host.Publish(refhost.PublicationKey{Service: trigService, Contract: trigContract, Function: trigFunction}); err != nil {
		return fail("publish", err)
	}
	if _, err := host.SetRoute(trigService, "", "r1"); err != nil {
		return fail("route", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), haChildLife)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	done := make(chan error, 1)
	go func() { done <- trig.Run(ctx, &haChildHost{Host: host, out: out}) }()
	out.line("ready")
	<-done
	return 0
}

// haWriter writes whole lines from any goroutine.
type haWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (h *haWriter) line(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, _ = h.w.WriteString(s + "\n")
	_ = h.w.Flush()
}

// haChildHost reports each step of a delivery on standard output.
type haChildHost struct {
	*refhost.Host
	out *haWriter
}

func (h *haChildHost) ObserveStep(r trigger.StepReport) {
	if r.Delivered == 0 {
		return
	}
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	h.out.line("step " + string(b))
}

// haProcess is the parent's handle on the second process: its lines go
// into the parent's ledger as they come.
type haProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

// startHA starts the second process for ce's installation and returns
// once it is running ("ready").
func startHA(t *testing.T, ce *clusterEnv) *haProcess {
	t.Helper()
	file, err := ce.runtime[0].File()
	if err != nil {
		t.Fatal(err)
	}
	defer clear(file)
	return startChild(t, ce.trigEnv, file, false)
}

// startChild starts a process of the test binary that installs e's
// configuration, persisted as Config.MarshalJSON bytes, with the tenant's
// credentials file, its function blocking (ok false) or succeeding; its
// runs and step reports go into e's ledger. It returns once the process
// runs ("ready").
func startChild(t *testing.T, e *trigEnv, creds []byte, ok bool) *haProcess {
	t.Helper()
	dir := t.TempDir()
	raw, err := e.cfg.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, haConfigFile), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, haCredsFile), creds, 0o600); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), haChildEnv+"="+dir)
	if ok {
		cmd.Env = append(cmd.Env, haChildOKEnv+"=1")
	}
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &haProcess{cmd: cmd, stdin: stdin, lines: make(chan string, 64)}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "run "):
				var id string
				var seq, delivered uint64
				if _, err := fmt.Sscanf(line, "run %s %d %d", &id, &seq, &delivered); err == nil {
					e.led.Activated(id, seq, delivered)
				}
			case strings.HasPrefix(line, "step "):
				var r trigger.StepReport
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "step ")), &r); err == nil {
					e.led.ObserveStep(r)
				}
			}
			p.lines <- line
		}
	}()
	p.await(t, "ready")
	return p
}

// await waits for the second process's next line with prefix, within
// haLineWait, and returns it.
func (p *haProcess) await(t *testing.T, prefix string) string {
	t.Helper()
	timer := time.NewTimer(haLineWait)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("the second process ended before a %q line", prefix)
			}
			if strings.HasPrefix(line, prefix) {
				return line
			}
		case <-timer.C:
			t.Fatalf("no %q line from the second process within %v", prefix, haLineWait)
		}
	}
}

// TestClusterTwoProcesses runs one installation in two OS processes
// against a three-node cluster (R3 stream and consumer): the test's own
// and a second one started from the same persisted configuration bytes
// and credentials file. The second process takes the first event and its
// function blocks; with the test's runtime running beside it, the second
// process is killed (SIGKILL) in the middle of that activation. The broker
// redelivers the event after the ack wait, and the test's runtime runs
// and acknowledges it, then the events published after the kill. The
// ledger, which records the second process's runs and step reports
// through its output: nothing lost, no re-execution after a verified
// acknowledgement, one re-execution, caused by the run no report
// followed (the killed process).
func TestClusterTwoProcesses(t *testing.T) {
	// Not parallel: one cluster at a time, before the parallel tests,
	// whose timing bounds three more broker processes would strain.
	const tenant = "ha"
	c := brokertest.StartCluster(t, broker.Options{Tenants: []string{tenant}}, broker.DefaultClusterSize)
	ce := clusterInstall(t, c, clusterSpec{
		tenants: []string{tenant}, pins: []int{0}, admin: 1,
		binding: func(_ int, b *trigger.Binding) {
			// Room to kill the second process during its activation.
			b.OperationTimeoutMS, b.RootBudgetMS, b.AckWaitMS = 4000, 4000, 5000
		},
	})
	ce.leaders(t, 0)
	child := startHA(t, ce)

	seq := ce.publishReady(t, 0, 0, argOK)
	line := child.await(t, "run ")
	ran := time.Now()
	want := fmt.Sprintf("run %s %d 1", ce.bindingID(0, 0), seq)
	if line != want {
		t.Fatalf("the second process ran %q, want %q", line, want)
	}

	// Both processes run; then the second one dies mid-activation.
	h := newProcHost(ce.trigEnv)
	run := ce.runProc(t, h)
	if err := child.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.cmd.Wait()
	killed := time.Now()
	var more []uint64
	for range 5 {
		more = append(more, ce.publish(0, 0, argOK))
	}
	ce.waitRan(t, ce.bindingID(0, 0), append([]uint64{seq}, more...)...)
	v, took := ce.settleVerdict(t)
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkVerdict(t, v, true)
	wantRe := []ledger.Reexecution{{Key: ledger.Key{Binding: ce.bindingID(0, 0), Seq: seq}, Delivered: 2, Cause: ledger.CauseUnreported}}
	if diff := cmp.Diff(wantRe, v.Reexecutions); diff != "" {
		t.Errorf("re-executions (-want +got):\n%s", diff)
	}
	calls := ce.callsOf(ce.bindingID(0, 0))
	if len(calls) == 0 || calls[0].StreamSeq != seq || calls[0].Delivered != 2 {
		t.Fatalf("the test's first run %+v, want the killed process's event, delivery 2", calls)
	}
	ackWait := ce.cfg.Bindings[0].AckWait()
	if d := calls[0].At.Sub(ran); d < ackWait-500*time.Millisecond {
		t.Errorf("redelivered %v after the second process's run, before the ack wait %v", d, ackWait)
	}
	t.Logf("figures: the killed process's event ran again here %v after its first run (ack wait %v), %v after the kill; settled %v later",
		calls[0].At.Sub(ran).Round(time.Millisecond), ackWait, calls[0].At.Sub(killed).Round(time.Millisecond), took.Round(time.Millisecond))
}

// publishReady publishes arg's payload for binding i of tenant k like
// trigEnv.publish, asking again (trigEventually's bounded polling) while
// the cluster answers with a status and no PubAck: a stream just created,
// whose interest has not yet reached the node the administrator is
// connected to; nothing was stored.
func (ce *clusterEnv) publishReady(t *testing.T, k, i int, arg string) uint64 {
	t.Helper()
	te := ce.tenants[k]
	subject := trigSubject(te.id, i)
	var seq uint64
	trigEventually(t, "a PubAck from "+subject, trigWait, func() bool {
		ctx, cancel := context.WithTimeout(t.Context(), pullTimeout)
		defer cancel()
		r, err := te.adm.c.Request(ctx, subject, nil, trigPayload(arg))
		if err != nil {
			t.Fatalf("publish to %s: %v", subject, err)
		}
		if r.Status != 0 || len(r.Payload) == 0 {
			return false
		}
		var ack struct {
			Seq uint64 `json:"seq"`
		}
		if err := json.Unmarshal(r.Payload, &ack); err != nil || ack.Seq == 0 {
			t.Fatalf("publish to %s: %v", subject, err)
		}
		seq = ack.Seq
		return true
	})
	ce.led.Published(ce.cfg.Bindings[ce.bindingIndex(k, i)].ID, seq)
	return seq
}
