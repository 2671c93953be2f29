package trigger

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/pull"
)

// TestConnConfig: a tenant's connection gets its exact destination, its own
// credential, its own inbox prefix ("_INBOX.<tenant>"), the installation's
// read caps and a payload cap that holds both the largest binding's
// payload and a consumer-info reply.
// Regression: the read caps of the configuration never reached the
// connection, which always read with 8 KiB caps.
func TestConnConfig(t *testing.T) {
	cfg := rtConfig(t, 2, 1)
	cfg.MaxControlLineBytes = 2048
	cfg.MaxHeaderBytes = 1536
	cfg.Bindings[1].MaxPayloadBytes = MaxPayloadBytes
	r := newRig(t, cfg, PoolLimits{})

	type view struct {
		Addr, ServerName, Name, InboxPrefix   string
		MaxPayload, MaxControlLine, MaxHeader int
		SameCredential, AllowNonPublic        bool
		ThreadSocket                          bool
		KeepUnanswered                        bool
	}
	for i, tn := range cfg.Tenants {
		ts := &r.trig.tenants[i]
		got := r.trig.connConfig(ts)
		want := view{
			Addr: tn.Destination.Address.String(), ServerName: tn.Destination.ServerName, Name: ClientName,
			InboxPrefix:    "_INBOX." + tn.ID,
			MaxPayload:     max(jspull.MaxInfoSize, maxCeiling(cfg, tn.ID)),
			MaxControlLine: 2048, MaxHeader: 1536,
			SameCredential: true, AllowNonPublic: tn.Destination.AllowNonPublic,
			KeepUnanswered: true,
		}
		seen := view{
			Addr: got.Addr.String(), ServerName: got.ServerName, Name: got.Name, InboxPrefix: got.InboxPrefix,
			MaxPayload: got.MaxPayload, MaxControlLine: got.MaxControlLine, MaxHeader: got.MaxHeader,
			SameCredential: got.Credential == r.creds[i].Secret,
			AllowNonPublic: got.AllowNonPublic.IsValid() && got.AllowNonPublic == tn.Destination.Address.Addr(),
			ThreadSocket:   got.ThreadSocket,
			KeepUnanswered: got.KeepUnanswered,
		}
		if diff := cmp.Diff(want, seen); diff != "" {
			t.Errorf("tenant %s: connection config (-want +got):\n%s", tn.ID, diff)
		}
	}
}

// TestConnConfigThreadSocket: PoolConfig.ThreadSocket reaches every
// connection's configuration; it is off by default.
func TestConnConfigThreadSocket(t *testing.T) {
	for _, thread := range []bool{false, true} {
		pools, err := NewPools(PoolConfig{Limits: DefaultPoolLimits(), ThreadSocket: thread})
		if err != nil {
			t.Fatal(err)
		}
		cfg := rtConfig(t, 2, 1)
		trig, _, err := Install(pools, Installation{LogicalID: "orders", Epoch: 1, Config: cfg, Credentials: rtCredentials(t, cfg)})
		if err != nil {
			t.Fatalf("Install: %v", err)
		}
		for i := range trig.tenants {
			if got := trig.connConfig(&trig.tenants[i]).ThreadSocket; got != thread {
				t.Errorf("PoolConfig.ThreadSocket %v: tenant %d's connection has ThreadSocket %v", thread, i, got)
			}
		}
		trig.Close()
		pools.Close()
	}
}

func maxCeiling(cfg Config, tenant string) int {
	m := 0
	for _, b := range cfg.Bindings {
		if b.Tenant == tenant {
			m = max(m, b.MaxPayloadBytes)
		}
	}
	return m
}

// TestLameDuckDuringStep: a lame-duck INFO read during consumer info or
// during the pull leaves the connection to the rest of the step, so the
// message that ran is acknowledged on it (and not redelivered); the
// connection is closed when the step ends and the next step dials.
// Regression: the step closed the connection right after the exchange that
// read the INFO, the acknowledgement met a closed connection (no receipt)
// and the broker redelivered a message that had already run.
func TestLameDuckDuringStep(t *testing.T) {
	tests := []struct {
		name string
		// lame puts link 0 in lame-duck mode during the named exchange.
		lame func(n *fakeNet)
	}{
		{"during consumer info", func(n *fakeNet) {
			n.inspectErr = func(int) error { // called with n.mu held
				n.links[0].lame = true
				return nil
			}
		}},
		{"during the pull", func(n *fakeNet) {
			n.onNext = func() {
				n.mu.Lock()
				defer n.mu.Unlock()
				n.links[0].lame = true
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rtConfig(t, 1), PoolLimits{})
				r.net.publish(0, `["once"]`)
				tc.lame(r.net)
				rep := r.step(t)
				if rep.Result != ResultDelivered || rep.Ack != pull.AckVerified || rep.Error != 0 {
					t.Errorf("report %+v, want delivered and verified", rep)
				}
				if diff := cmp.Diff([]string{`b0 seq=1 n=1 +ACK`}, r.net.ackLog()); diff != "" {
					t.Errorf("acks (-want +got):\n%s", diff)
				}
				if u := r.pools.Usage(); u.Connections != 0 || r.net.openLinks() != 0 {
					t.Errorf("after the step: usage %+v, open links %d; want the lame-duck connection closed", u, r.net.openLinks())
				}
				r.net.inspectErr, r.net.onNext = nil, nil
				r.net.redeliver()
				rep = r.step(t)
				if rep.Result != ResultEmpty || r.net.dialCount() != 2 {
					t.Errorf("next step: report %+v, dials %d; want empty after a fresh dial", rep, r.net.dialCount())
				}
				if acts, _ := r.host.acts(); len(acts) != 1 {
					t.Errorf("%d activations, want 1", len(acts))
				}
			})
		})
	}
}

// TestLameDuckReadByCheck: the probe of a pooled connection reads a
// lame-duck INFO: the connection is replaced before anything is written
// on it. Regression: the probe's connection was handed out, closed after
// consumer info, and the pull failed on the closed connection.
func TestLameDuckReadByCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.step(t)
		r.net.mu.Lock()
		r.net.links[0].lameAtCheck = true
		r.net.mu.Unlock()
		r.net.publish(0, `[]`)
		r.ev.take()
		rep := r.step(t)
		want := []string{
			"eligible b0", "credential t0", "reserve b0", "check 0", "dial t0", "inspect b0",
			"eligible b0", "credential t0", "next b0", "activate b0", "credential t0", "ack b0 +ACK", "release b0",
		}
		if diff := cmp.Diff(want, r.ev.take()); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		if rep.Ack != pull.AckVerified {
			t.Errorf("report %+v", rep)
		}
		if u := r.pools.Usage(); u.Connections != 1 || r.net.openLinks() != 1 {
			t.Errorf("usage %+v, open links %d", u, r.net.openLinks())
		}
		if s := r.mon.Snapshot(); s.Replaced != 1 || s.Dials != 2 {
			t.Errorf("snapshot: replaced %d, dials %d; want 1, 2", s.Replaced, s.Dials)
		}
	})
}

// TestDialFailureBackoff: every failed dial starts the backoff, counted
// from the clock after the dial, a dial that the phase's deadline cut
// short included; only the owner stopping exempts it. Regression: a dial
// that stalled until the phase's deadline set no backoff, so a broker
// stalling the handshake was dialled at every visit, each one blocking the
// owner for the whole operation timeout; and the backoff was counted from
// before a slow dial.
func TestDialFailureBackoff(t *testing.T) {
	tests := []struct {
		name string
		wait func(ctx context.Context) error
	}{
		{"stalled until the deadline", func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		}},
		{"slow refusal", func(context.Context) error {
			time.Sleep(time.Second) // longer than DialBackoff
			return errTest
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rtConfig(t, 1), PoolLimits{})
				r.net.dialWait = tc.wait
				if rep := r.step(t); rep.Result != ResultFailed || rep.Error != ClassDial {
					t.Errorf("first step: report %+v, want a dial failure", rep)
				}
				if rep := r.step(t); rep.Error != ClassDialBackoff || r.net.dialCount() != 1 {
					t.Errorf("second step: report %+v, dials %d; want the backoff and no dial", rep, r.net.dialCount())
				}
				time.Sleep(r.pools.Limits().DialBackoff)
				r.net.dialWait = nil
				if rep := r.step(t); rep.Result != ResultEmpty || r.net.dialCount() != 2 {
					t.Errorf("after the backoff: report %+v, dials %d", rep, r.net.dialCount())
				}
			})
		})
	}
}

// TestDialOwnerStopNoBackoff: a dial cut short because the owner stopped
// is no failure of the broker: the next owner dials at once.
func TestDialOwnerStopNoBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		ctx, cancel := context.WithCancel(t.Context())
		r.net.dialWait = func(dctx context.Context) error {
			cancel()
			<-dctx.Done()
			return dctx.Err()
		}
		if _, err := r.trig.Step(ctx, r.host); !errors.Is(err, context.Canceled) {
			t.Fatalf("Step = %v, want context.Canceled", err)
		}
		r.net.dialWait = nil
		if rep := r.step(t); rep.Result != ResultEmpty || r.net.dialCount() != 2 {
			t.Errorf("next step: report %+v, dials %d; want a dial at once", rep, r.net.dialCount())
		}
	})
}

// TestSlowReservationKeepsConnection: a host reservation that takes the
// whole operation timeout leaves the phase before the pull its own T: the
// pooled connection is probed, kept and used. Regression: the phase's
// deadline ran from the start of the step, the probe met an expired
// context and a healthy connection was closed and redialled.
func TestSlowReservationKeepsConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := rtConfig(t, 1)
		r := newRig(t, cfg, PoolLimits{})
		r.step(t)
		r.host.reserve = func(InboundRequest) error {
			time.Sleep(cfg.Bindings[0].OperationTimeout() + time.Millisecond)
			return nil
		}
		r.net.publish(0, `[]`)
		rep := r.step(t)
		if rep.Result != ResultDelivered || rep.Ack != pull.AckVerified {
			t.Errorf("report %+v, want delivered and verified", rep)
		}
		if s := r.mon.Snapshot(); s.Dials != 1 || s.Replaced != 0 {
			t.Errorf("snapshot: dials %d, replaced %d; want 1, 0", s.Dials, s.Replaced)
		}
		if u := r.pools.Usage(); u.Connections != 1 || r.net.openLinks() != 1 {
			t.Errorf("usage %+v, open links %d", u, r.net.openLinks())
		}
	})
}

// TestAcquireUnprobed: a probe that did not run because its context was
// already done (conn.Check returns the bare context error and leaves the
// connection open) keeps the pooled connection and dials nothing; a
// context error that closed the connection replaces it.
func TestAcquireUnprobed(t *testing.T) {
	tests := []struct {
		name     string
		stale    bool
		wantErr  error
		wantKept bool
	}{
		{"context done before the probe", false, context.DeadlineExceeded, true},
		{"connection closed", true, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rtConfig(t, 1), PoolLimits{})
				r.step(t)
				ts := &r.trig.tenants[0]
				r.net.mu.Lock()
				r.net.links[0].stale = tc.stale
				r.net.mu.Unlock()
				ctx, cancel := context.WithDeadline(t.Context(), time.Now())
				defer cancel()
				if tc.stale {
					ctx = t.Context()
				}
				r.trig.mu.Lock()
				l, err := ts.client.acquire(ctx, time.Now().Add(time.Second), r.pools, ts, time.Now, r.trig.rand, r.trig.dial)
				r.trig.mu.Unlock()
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("acquire = %v, want %v", err, tc.wantErr)
				}
				kept := r.net.links[0] == ts.client.link && r.net.links[0].open()
				if kept != tc.wantKept || (err == nil) != (l != nil) {
					t.Errorf("link 0 kept %v, want %v (link %v)", kept, tc.wantKept, l)
				}
				wantReplaced, wantDials := uint64(0), 1
				if !tc.wantKept {
					wantReplaced, wantDials = 1, 2
				}
				if ts.client.replaced != wantReplaced || r.net.dialCount() != wantDials || r.pools.Usage().Connections != 1 {
					t.Errorf("replaced %d, dials %d, usage %+v", ts.client.replaced, r.net.dialCount(), r.pools.Usage())
				}
			})
		})
	}
}

// TestTenantConsumersShareScratch: the pull consumers of one tenant's
// bindings share one jspull.Scratch, the tenant's, made with its first link
// and kept when the link is replaced; another tenant has its own. An
// installation holds none before its first link.
func TestTenantConsumersShareScratch(t *testing.T) {
	r := newRig(t, rtConfig(t, 3, 2), PoolLimits{})
	trig := r.trig
	for i := range trig.tenants {
		if trig.tenants[i].scratch != nil {
			t.Errorf("tenant %d holds a scratch before any link", i)
		}
	}
	// Each tenant's first binding gets its consumer through the first
	// link, the others through a second one, as after a redial.
	links := make([][]*connLink, len(trig.tenants))
	for i := range trig.tenants {
		ts := &trig.tenants[i]
		links[i] = []*connLink{trig.newConnLink(nil, ts), trig.newConnLink(nil, ts)}
	}
	for i := range trig.bindings {
		b := &trig.bindings[i]
		l := links[b.tenant][min(1, i-trig.tenants[b.tenant].bindings[0])]
		pc, err := l.consumer(b)
		if err != nil {
			t.Fatalf("binding %d: %v", i, err)
		}
		if again, err := l.consumer(b); err != nil || again != pc {
			t.Errorf("binding %d: a second consumer %p, %v; want the first %p", i, again, err, pc)
		}
	}
	if trig.tenants[0].scratch == nil || trig.tenants[0].scratch == trig.tenants[1].scratch {
		t.Fatalf("tenant scratches %p and %p, want two", trig.tenants[0].scratch, trig.tenants[1].scratch)
	}
	// owner[i] is the tenant whose scratch binding i's consumer uses.
	var owner []int
	for i := range trig.bindings {
		s := trig.bindings[i].consumer.Scratch()
		switch s {
		case trig.tenants[0].scratch:
			owner = append(owner, 0)
		case trig.tenants[1].scratch:
			owner = append(owner, 1)
		default:
			owner = append(owner, -1)
		}
	}
	if diff := cmp.Diff([]int{0, 0, 0, 1, 1}, owner); diff != "" {
		t.Errorf("scratch owner per binding (-want +got):\n%s", diff)
	}
}

// TestJitter: a backoff wait is drawn from [d/2, d] by the pools' Rand; a
// failing source leaves d.
func TestJitter(t *testing.T) {
	const d = 1000 * time.Millisecond
	tests := []struct {
		name string
		rnd  io.Reader
		want time.Duration
	}{
		{"zero draw: half", bytes.NewReader(make([]byte, 8)), d / 2},
		{"largest draw", bytes.NewReader(binaryLE(uint64(d / 2))), d},
		{"past the range wraps", bytes.NewReader(binaryLE(uint64(d/2) + 1)), d / 2},
		{"failing source: the whole wait", iotest.ErrReader(errTest), d},
		{"short source: the whole wait", bytes.NewReader(make([]byte, 7)), d},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := jitter(d, tc.rnd); got != tc.want {
				t.Errorf("jitter(%v) = %v, want %v", d, got, tc.want)
			}
		})
	}
}

// TestJitterSpread: waits drawn from crypto/rand stay within [d/2, d] and
// are not all the same, so runtimes that failed together redial apart.
func TestJitterSpread(t *testing.T) {
	const d = 30 * time.Second
	lo, hi := d, time.Duration(0)
	for range 256 {
		w := jitter(d, rand.Reader)
		if w < d/2 || w > d {
			t.Fatalf("jitter(%v) = %v, outside [%v, %v]", d, w, d/2, d)
		}
		lo, hi = min(lo, w), max(hi, w)
	}
	if hi-lo < d/8 {
		t.Errorf("256 draws spread over %v only (%v to %v)", hi-lo, lo, hi)
	}
}

// TestDialBackoffJittered: the pools' Rand places the retry: with a zero
// draw the tenant dials again after half its backoff, not before.
func TestDialBackoffJittered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.trig.rand = bytes.NewReader(make([]byte, 64))
		r.net.dialWait = func(context.Context) error { return errTest }
		if rep := r.step(t); rep.Error != ClassDial {
			t.Fatalf("first step: report %+v, want a dial failure", rep)
		}
		r.net.dialWait = nil
		half := r.pools.Limits().DialBackoff / 2
		time.Sleep(half - time.Millisecond)
		if rep := r.step(t); rep.Error != ClassDialBackoff || r.net.dialCount() != 1 {
			t.Errorf("before half the backoff: report %+v, dials %d", rep, r.net.dialCount())
		}
		time.Sleep(time.Millisecond)
		if rep := r.step(t); rep.Result != ResultEmpty || r.net.dialCount() != 2 {
			t.Errorf("at half the backoff: report %+v, dials %d", rep, r.net.dialCount())
		}
	})
}

func binaryLE(v uint64) []byte {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return b[:]
}
