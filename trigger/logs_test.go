package trigger

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/pull"
)

// logRec is one captured record: its level, message and attributes as
// key=value in order.
type logRec struct {
	Level slog.Level
	Msg   string
	Attrs []string
}

// capture is a slog.Handler that keeps every record.
type capture struct {
	mu   sync.Mutex
	recs []logRec
}

func (*capture) Enabled(context.Context, slog.Level) bool { return true }

func (h *capture) Handle(_ context.Context, r slog.Record) error {
	rec := logRec{Level: r.Level, Msg: r.Message}
	r.Attrs(func(a slog.Attr) bool {
		rec.Attrs = append(rec.Attrs, a.Key+"="+a.Value.String())
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, rec)
	return nil
}

// WithAttrs and WithGroup are not used by the runtime.
func (h *capture) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *capture) WithGroup(string) slog.Handler      { return h }

// take returns the records and empties the list.
func (h *capture) take() []logRec {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.recs
	h.recs = nil
	return r
}

// newLogRig is newRig with a logger writing to h (none for nil h) and an
// all-zero random source (the dial backoff's jitter draws its shortest
// wait, half of it).
func newLogRig(t testing.TB, cfg Config, lim PoolLimits, h *capture) *rig {
	t.Helper()
	if lim == (PoolLimits{}) {
		lim = DefaultPoolLimits()
	}
	pc := PoolConfig{Limits: lim, Rand: zeroRand{}}
	if h != nil {
		pc.Logger = slog.New(h)
	}
	pools, err := NewPools(pc)
	if err != nil {
		t.Fatal(err)
	}
	creds := rtCredentials(t, cfg)
	trig, mon, err := Install(pools, Installation{LogicalID: "orders", Epoch: 1, Config: cfg, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	r := &rig{pools: pools, trig: trig, mon: mon, host: newFakeHost(ev), net: newFakeNet(ev), ev: ev, creds: creds}
	r.net.install(trig)
	t.Cleanup(func() { pools.Close() })
	return r
}

// tenantAttrs and bindingAttrs are the attributes of installation
// "orders" epoch 1 naming tenant t0 and binding b0.
func tenantAttrs(extra ...string) []string {
	return append([]string{"logical_id=orders", "epoch=1", "tenant=t0"}, extra...)
}

func bindingAttrs(extra ...string) []string {
	return append(tenantAttrs("binding=b0", "stream=ORDERS", "consumer=c0"), extra...)
}

// TestLogTransitions drives the fake runtime through each state change and
// asserts the exact records, after the installation's own.
func TestLogTransitions(t *testing.T) {
	dialled := logRec{slog.LevelInfo, msgDialled, tenantAttrs()}
	tests := []struct {
		name   string
		lim    func(*PoolLimits)
		cfg    func(*Config)
		script func(t *testing.T, r *rig)
		want   []logRec
	}{
		{
			name: "dial, loss, backoff, redial",
			script: func(t *testing.T, r *rig) {
				r.step(t)
				r.net.inspectErr = func(int) error { return &conn.ClosedError{Err: conn.ErrServerClosed} }
				r.step(t)
				r.net.inspectErr = nil
				r.net.dialErr = func(string) error { return errTest }
				r.step(t) // fails: backoff starts
				r.step(t) // in backoff: silent
				time.Sleep(time.Second)
				r.step(t) // fails again: silent
				time.Sleep(time.Second)
				r.net.dialErr = nil
				r.step(t)
				r.step(t) // steady: silent
			},
			want: []logRec{
				dialled,
				{slog.LevelWarn, msgLost, tenantAttrs("class=connection")},
				{slog.LevelWarn, msgBackoffStarted, tenantAttrs("class=dial", "dial_failure=other", "backoff=250ms")},
				{slog.LevelInfo, msgBackoffEnded, tenantAttrs()},
				dialled,
			},
		},
		{
			// Issue 20: a pooled connection the broker closed while idle
			// was replaced without a line.
			name: "idle connection lost, redialled",
			script: func(t *testing.T, r *rig) {
				r.step(t)
				r.net.links[0].makeStale()
				r.step(t)
				r.step(t) // steady: silent
			},
			want: []logRec{dialled, {slog.LevelWarn, msgLost, tenantAttrs("class=connection")}, dialled},
		},
		{
			// Issue 20: a broker stopped while the connection was idle
			// gave only the backoff line: a loss, one backoff line and
			// the recovery.
			name: "idle connection lost, broker down, back",
			script: func(t *testing.T, r *rig) {
				r.step(t)
				r.net.links[0].makeStale()
				r.net.dialErr = func(string) error { return &conn.HandshakeError{Step: conn.StepDial, Err: conn.ErrRefused} }
				r.step(t) // the loss, then the first failed dial
				for range 5 {
					time.Sleep(time.Second)
					r.step(t) // in backoff or failing again: silent
				}
				r.net.dialErr = nil
				time.Sleep(time.Minute)
				r.step(t)
				r.step(t) // steady: silent
			},
			want: []logRec{
				dialled,
				{slog.LevelWarn, msgLost, tenantAttrs("class=connection")},
				{slog.LevelWarn, msgBackoffStarted, tenantAttrs("class=dial", "dial_failure=refused", "backoff=250ms")},
				{slog.LevelInfo, msgBackoffEnded, tenantAttrs()},
				dialled,
			},
		},
		{
			name: "lame-duck connection replaced",
			script: func(t *testing.T, r *rig) {
				r.step(t)
				r.net.links[0].lameAtCheck = true
				r.step(t)
				r.step(t)
			},
			want: []logRec{dialled, {slog.LevelInfo, msgReplaced, tenantAttrs()}},
		},
		{
			name: "connection idle past MaxIdleAge replaced",
			lim:  func(l *PoolLimits) { l.MaxIdleAge = time.Second },
			script: func(t *testing.T, r *rig) {
				r.step(t)
				time.Sleep(2 * time.Second)
				r.step(t)
				r.step(t)
			},
			want: []logRec{dialled, {slog.LevelInfo, msgReplaced, tenantAttrs()}},
		},
		{
			// Issue 20: a deleted consumer was never logged, though a
			// profile mismatch is.
			name: "consumer missing found then cleared",
			script: func(t *testing.T, r *rig) {
				r.net.inspectErr = func(int) error { return jspull.ErrConsumerNotFound }
				r.step(t)
				r.step(t)
				r.step(t)
				r.net.inspectErr = nil
				r.step(t)
				r.step(t)
			},
			want: []logRec{
				dialled,
				{slog.LevelWarn, msgConsumerMissing, bindingAttrs("class=consumer missing")},
				{slog.LevelInfo, msgConsumerFound, bindingAttrs()},
			},
		},
		{
			name: "profile mismatch found then cleared",
			script: func(t *testing.T, r *rig) {
				r.net.inspectErr = func(int) error {
					return &jspull.ProfileError{Mismatches: []jspull.Mismatch{{Field: "ack_policy"}}}
				}
				r.step(t)
				r.step(t)
				r.step(t)
				r.net.inspectErr = nil
				r.step(t)
				r.step(t)
			},
			want: []logRec{
				dialled,
				{slog.LevelWarn, msgProfileMismatch, bindingAttrs("class=profile")},
				{slog.LevelInfo, msgProfileCleared, bindingAttrs()},
			},
		},
		{
			name: "uncertain ack",
			script: func(t *testing.T, r *rig) {
				r.net.publish(0, `[]`)
				r.net.ackReply = func(int, jspull.Command) (jspull.Receipt, bool, error) {
					return jspull.Receipt{Outcome: pull.AckUncertain, Action: pull.ActionAck},
						true, &jspull.ReceiptError{Err: &conn.ClosedError{Err: context.DeadlineExceeded}}
				}
				r.step(t)
			},
			want: []logRec{
				dialled,
				{slog.LevelWarn, msgLost, tenantAttrs("class=connection")},
				{slog.LevelWarn, msgAckUncertain, bindingAttrs("stream_seq=1", "delivered=1", "class=ack uncertain")},
			},
		},
		{
			name: "late ack",
			script: func(t *testing.T, r *rig) {
				r.net.publish(0, `[]`)
				r.net.ackReply = func(int, jspull.Command) (jspull.Receipt, bool, error) {
					return jspull.Receipt{Outcome: pull.AckVerifiedLate, Action: pull.ActionAck}, true, nil
				}
				r.step(t)
			},
			want: []logRec{dialled, {slog.LevelWarn, msgAckLate, bindingAttrs("stream_seq=1", "delivered=1")}},
		},
		{
			name: "delivery exhausted",
			cfg:  func(c *Config) { c.Bindings[0].MaxDeliver = 2 },
			script: func(t *testing.T, r *rig) {
				r.host.activate = func(context.Context, Activation) Outcome { return OutcomeTimeout }
				r.net.publish(0, `[]`)
				r.net.queues[0][0].delivered = 1
				r.step(t)
			},
			want: []logRec{dialled, {slog.LevelWarn, msgExhausted, bindingAttrs("stream_seq=1", "delivered=2")}},
		},
		{
			name: "credential expired then current",
			script: func(t *testing.T, r *rig) {
				r.host.credential = func(string, int) error { return errTest }
				r.step(t)
				r.step(t)
				r.host.credential = nil
				r.step(t)
				r.step(t)
			},
			want: []logRec{
				{slog.LevelWarn, msgCredentialExpired, tenantAttrs("class=credential")},
				dialled,
				{slog.LevelInfo, msgCredentialRestored, tenantAttrs()},
			},
		},
		{
			name: "pool exhausted then cleared",
			lim:  func(l *PoolLimits) { l.MaxConnections = 1 },
			script: func(t *testing.T, r *rig) {
				other, _, err := Install(r.pools, Installation{LogicalID: "refunds", Epoch: 1, Config: rtConfig(t, 1), Credentials: r.creds})
				if err != nil {
					t.Fatal(err)
				}
				r.net.install(other)
				if _, err := other.Step(t.Context(), r.host); err != nil {
					t.Fatal(err)
				}
				r.step(t)
				r.step(t)
				other.Close()
				r.step(t)
			},
			want: []logRec{
				{slog.LevelInfo, msgInstalled, []string{"logical_id=refunds", "epoch=1"}},
				{slog.LevelInfo, msgDialled, []string{"logical_id=refunds", "epoch=1", "tenant=t0"}},
				{slog.LevelWarn, msgPoolExhausted, tenantAttrs("class=pool exhausted", "resource=connections")},
				dialled,
				{slog.LevelInfo, msgPoolCleared, tenantAttrs()},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lim := DefaultPoolLimits()
				cfg := rtConfig(t, 1)
				if tc.lim != nil {
					tc.lim(&lim)
				}
				if tc.cfg != nil {
					tc.cfg(&cfg)
				}
				h := &capture{}
				r := newLogRig(t, cfg, lim, h)
				if diff := cmp.Diff([]logRec{{slog.LevelInfo, msgInstalled, []string{"logical_id=orders", "epoch=1"}}}, h.take()); diff != "" {
					t.Errorf("install records (-want +got):\n%s", diff)
				}
				tc.script(t, r)
				if diff := cmp.Diff(tc.want, h.take()); diff != "" {
					t.Errorf("records (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// TestLogInstallSupersede: a newer epoch logs the one it supersedes, then
// itself; an installation after a closed one supersedes nothing.
func TestLogInstallSupersede(t *testing.T) {
	h := &capture{}
	pools, err := NewPools(PoolConfig{Limits: DefaultPoolLimits(), Logger: slog.New(h)})
	if err != nil {
		t.Fatal(err)
	}
	defer pools.Close()
	cfg := rtConfig(t, 1)
	creds := rtCredentials(t, cfg)
	first, _, err := Install(pools, Installation{LogicalID: "orders", Epoch: 1, Config: cfg, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	second, _, err := Install(pools, Installation{LogicalID: "orders", Epoch: 2, ExpectedEpoch: 1, Config: cfg, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	second.Close()
	if _, _, err := Install(pools, Installation{LogicalID: "orders", Epoch: 3, ExpectedEpoch: 2, Config: cfg, Credentials: creds}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Install(pools, Installation{LogicalID: "orders", Epoch: 3, ExpectedEpoch: 2, Config: cfg, Credentials: creds}); err == nil {
		t.Fatal("a refused installation: no error")
	}
	want := []logRec{
		{slog.LevelInfo, msgInstalled, []string{"logical_id=orders", "epoch=1"}},
		{slog.LevelInfo, msgSuperseded, []string{"logical_id=orders", "epoch=1"}},
		{slog.LevelInfo, msgInstalled, []string{"logical_id=orders", "epoch=2"}},
		{slog.LevelInfo, msgInstalled, []string{"logical_id=orders", "epoch=3"}},
	}
	if diff := cmp.Diff(want, h.take()); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

// TestLogNilAllocs: the step's log hook (the one logging code every step
// runs) allocates nothing with a nil logger, transitions included, nor
// with a logger on a step that changes no state. The other hooks run on a
// dial or a dropped connection only, and return at once without a logger.
func TestLogNilAllocs(t *testing.T) {
	quiet := newLogRig(t, rtConfig(t, 1), PoolLimits{}, nil)
	loud := newLogRig(t, rtConfig(t, 1), PoolLimits{}, &capture{})
	tests := []struct {
		name string
		r    *rig
		rep  StepReport
	}{
		{"nil logger, mismatch", quiet, StepReport{Result: ResultFailed, Error: ClassProfile}},
		{"nil logger, consumer missing", quiet, StepReport{Result: ResultFailed, Error: ClassConsumerMissing}},
		{"nil logger, credential", quiet, StepReport{Result: ResultSkipped, Error: ClassCredential}},
		{"nil logger, uncertain", quiet, StepReport{Result: ResultDelivered, StreamSeq: 1, Delivered: 1, Action: pull.ActionExhausted, Ack: pull.AckUncertain}},
		{"logger, steady", loud, StepReport{Result: ResultEmpty}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &tc.r.trig.bindings[0]
			if n := testing.AllocsPerRun(100, func() { tc.r.trig.logStep(b, &tc.rep) }); n != 0 {
				t.Errorf("%v allocations, want 0", n)
			}
		})
	}
}
