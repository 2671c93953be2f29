package conformance_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nkeys"

	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/trigger"
)

// logMessages is a slog.Handler that keeps the message of every record.
type logMessages struct {
	mu   sync.Mutex
	msgs []string
}

func (*logMessages) Enabled(context.Context, slog.Level) bool { return true }

func (h *logMessages) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, r.Message)
	return nil
}

func (h *logMessages) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logMessages) WithGroup(string) slog.Handler      { return h }

func (h *logMessages) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.msgs
	h.msgs = nil
	return m
}

// TestTriggerLogIdleBrokerDown kills the broker while the runtime's
// connection is idle, steps through the outage and restarts it (issue 20:
// this gave only "dial backoff started"). The log holds what the Logs
// table promises for a broker that goes down: a loss, one backoff line and
// the recovery, each once however many visits the outage lasted.
func TestTriggerLogIdleBrokerDown(t *testing.T) {
	t.Parallel()
	h := &logMessages{}
	e := trigStart(t, trigSpec{tenants: []string{"logs"}, perTenant: []int{1}, storage: "file", logger: slog.New(h)})
	reached := func(r trigger.StepReport) bool { return r.Result == trigger.ResultEmpty }
	e.stepUntil(t, "a visit that reaches the broker", 4, reached)
	e.stepUntil(t, "a second one on the pooled connection", 4, reached)

	if err := e.b.Kill(); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	gone := e.stepUntil(t, "a visit that finds the broker gone", 4, func(r trigger.StepReport) bool {
		return r.Result == trigger.ResultFailed
	})
	if gone.Error != trigger.ClassDial || gone.Dial != trigger.DialRefused {
		t.Errorf("report %+v, want a dial refused", gone)
	}
	for range 20 {
		e.step(t) // in backoff or failing again: silent
	}
	ctx, cancel := context.WithTimeout(t.Context(), trigWait)
	defer cancel()
	if err := e.b.Restart(ctx); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	e.stepUntil(t, "a visit that reaches the restarted broker", 1_000_000, reached)
	e.stepUntil(t, "a second one", 4, reached)

	// The messages as docs/OPERATIONS.md's Logs table writes them.
	want := []string{
		"trigger configuration installed",
		"trigger broker connection dialled",
		"trigger broker connection lost",
		"trigger dial backoff started",
		"trigger dial backoff ended",
		"trigger broker connection dialled",
	}
	if diff := cmp.Diff(want, h.take()); diff != "" {
		t.Errorf("log messages (-want +got):\n%s", diff)
	}
}

// TestTriggerDialAuthorization installs the case's configuration with a
// credential the broker does not know (a user nkey no account signed):
// the dial fails at CONNECT and says so (issue 20: every dial failure was
// one class), in the report, the counts and the backoff log line.
func TestTriggerDialAuthorization(t *testing.T) {
	t.Parallel()
	e := trigStart(t, trigSpec{tenants: []string{"authz"}, perTenant: []int{1}})
	kp, err := nkeys.CreateUser()
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
	t.Cleanup(secret.Wipe)
	wrong := append([]trigger.Credential(nil), e.creds...)
	wrong[0].Secret = secret

	h := &logMessages{}
	lim := trigger.DefaultPoolLimits()
	pools, err := trigger.NewPools(trigger.PoolConfig{Limits: lim, Logger: slog.New(h)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pools.Close)
	trig, mon, err := trigger.Install(pools, trigger.Installation{LogicalID: "conformance-authz", Epoch: 1, Config: e.cfg, Credentials: wrong})
	if err != nil {
		t.Fatal(err)
	}
	r, err := trig.Step(t.Context(), e.host)
	if err != nil {
		t.Fatalf("Step: %v", err)
	}
	if r.Result != trigger.ResultFailed || r.Error != trigger.ClassDial || r.Dial != trigger.DialAuthorization {
		t.Errorf("report %+v, want a dial refused for authorization", r)
	}
	if n := mon.Snapshot().Totals.DialFailure(trigger.DialAuthorization); n != 1 {
		t.Errorf("authorization dial failures %d, want 1", n)
	}
	// The messages as docs/OPERATIONS.md's Logs table writes them.
	want := []string{"trigger configuration installed", "trigger dial backoff started"}
	if diff := cmp.Diff(want, h.take()); diff != "" {
		t.Errorf("log messages (-want +got):\n%s", diff)
	}
}
