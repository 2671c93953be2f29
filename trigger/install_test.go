package trigger

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func newPools(t testing.TB, lim PoolLimits) *Pools {
	t.Helper()
	p, err := NewPools(PoolConfig{Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestInstallCharge pins the profile's accounting: 64 KiB + 2 KiB per
// binding + 6x the retained root-certificate bytes.
func TestInstallCharge(t *testing.T) {
	cfg := rtConfig(t, 2, 1)
	roots := 0
	for _, tn := range cfg.Tenants {
		certs, err := tn.Destination.Certificates()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range certs {
			roots += len(c.Raw)
		}
	}
	if roots == 0 {
		t.Fatal("no root bytes")
	}
	want := int64(64<<10 + 3*2<<10 + 6*roots)
	if got := installCharge(cfg); got != want {
		t.Errorf("installCharge = %d, want %d", got, want)
	}
	if got := requestCharge(32768); got != 64<<10+2*32768 {
		t.Errorf("requestCharge(32768) = %d", got)
	}
	if connectionBytes != 256<<10 {
		t.Errorf("connectionBytes = %d", connectionBytes)
	}
	p := newPools(t, DefaultPoolLimits())
	trig, _, err := Install(p, Installation{LogicalID: "orders", Epoch: 1, Config: cfg, Credentials: rtCredentials(t, cfg)})
	if err != nil {
		t.Fatal(err)
	}
	want2 := Usage{Bytes: want, MetadataBytes: want, Installations: 1}
	if diff := cmp.Diff(want2, p.Usage()); diff != "" {
		t.Errorf("usage after Install (-want +got):\n%s", diff)
	}
	trig.Close()
	trig.Close()
	if diff := cmp.Diff(Usage{}, p.Usage()); diff != "" {
		t.Errorf("usage after Close (-want +got):\n%s", diff)
	}
}

// TestAccountingDuringStep: while an activation runs, the pools hold the
// installation, one ingress request, one client and one connection; after
// the step the request is returned, after CloseIdle the client and the
// connection, after Close everything.
func TestAccountingDuringStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := rtConfig(t, 1)
		r := newRig(t, cfg, PoolLimits{})
		install := installCharge(cfg)
		req := requestCharge(cfg.Bindings[0].MaxPayloadBytes)
		var during Usage
		r.host.activate = func(context.Context, Activation) Outcome {
			during = r.pools.Usage()
			return OutcomeSuccess
		}
		r.net.publish(0, `[]`)
		r.step(t)
		want := Usage{Bytes: install + req + connectionBytes, MetadataBytes: install, Installations: 1, Requests: 1, Clients: 1, Connections: 1}
		if diff := cmp.Diff(want, during); diff != "" {
			t.Errorf("during the activation (-want +got):\n%s", diff)
		}
		want = Usage{Bytes: install + connectionBytes, MetadataBytes: install, Installations: 1, Clients: 1, Connections: 1}
		if diff := cmp.Diff(want, r.pools.Usage()); diff != "" {
			t.Errorf("after the step (-want +got):\n%s", diff)
		}
		r.trig.CloseIdle()
		want = Usage{Bytes: install, MetadataBytes: install, Installations: 1}
		if diff := cmp.Diff(want, r.pools.Usage()); diff != "" {
			t.Errorf("after CloseIdle (-want +got):\n%s", diff)
		}
		if r.net.openLinks() != 0 {
			t.Errorf("open links after CloseIdle: %d", r.net.openLinks())
		}
		r.step(t)
		r.trig.Close()
		if diff := cmp.Diff(Usage{}, r.pools.Usage()); diff != "" {
			t.Errorf("after Close (-want +got):\n%s", diff)
		}
		if _, err := r.trig.Step(t.Context(), r.host); !errors.Is(err, ErrClosed) {
			t.Errorf("Step after Close: %v", err)
		}
		if err := r.trig.Run(t.Context(), r.host); !errors.Is(err, ErrClosed) {
			t.Errorf("Run after Close: %v", err)
		}
	})
}

// TestEpochTransitions lists checked transitions of one logical ID.
func TestEpochTransitions(t *testing.T) {
	type call struct {
		epoch, expected uint64
		ok              bool
	}
	tests := []struct {
		name  string
		calls []call
		final uint64
	}{
		{"first install", []call{{1, 0, true}}, 1},
		{"first install at a later epoch", []call{{5, 0, true}}, 5},
		{"first install expecting an epoch", []call{{2, 1, false}}, 0},
		{"epoch zero", []call{{0, 0, false}}, 0},
		{"replacement", []call{{1, 0, true}, {2, 1, true}}, 2},
		{"replacement skipping epochs", []call{{1, 0, true}, {9, 1, true}}, 9},
		{"stale expectation", []call{{1, 0, true}, {2, 1, true}, {3, 1, false}}, 2},
		{"same epoch", []call{{1, 0, true}, {1, 1, false}}, 1},
		{"older epoch", []call{{3, 0, true}, {2, 3, false}}, 3},
		{"reinstall from scratch", []call{{1, 0, true}, {2, 0, false}}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPools(t, DefaultPoolLimits())
			cfg := rtConfig(t, 1)
			creds := rtCredentials(t, cfg)
			for i, c := range tc.calls {
				trig, _, err := Install(p, Installation{LogicalID: "orders", Epoch: c.epoch, ExpectedEpoch: c.expected, Config: cfg, Credentials: creds})
				if c.ok != (err == nil) {
					t.Fatalf("call %d Install(%d, %d): %v", i, c.epoch, c.expected, err)
				}
				if err != nil {
					var ee *EpochError
					if !errors.As(err, &ee) || !errors.Is(err, ErrEpochConflict) || ee.Epoch != c.epoch || ee.Expected != c.expected {
						t.Errorf("call %d: error %v is not the *EpochError", i, err)
					}
					continue
				}
				defer trig.Close()
			}
			if got, _ := p.Epoch("orders"); got != tc.final {
				t.Errorf("epoch %d, want %d", got, tc.final)
			}
		})
	}
}

// TestSupersededInstallation: a newer epoch makes the old installation
// stop at its next step, without network; the registry keeps the newest
// epoch when the old one closes.
func TestSupersededInstallation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.step(t)
		newer, _, err := Install(r.pools, Installation{LogicalID: "orders", Epoch: 2, ExpectedEpoch: 1, Config: rtConfig(t, 1), Credentials: rtCredentials(t, rtConfig(t, 1))})
		if err != nil {
			t.Fatal(err)
		}
		defer newer.Close()
		r.ev.take()
		if _, err := r.trig.Step(t.Context(), r.host); !errors.Is(err, ErrSuperseded) {
			t.Errorf("old Step: %v, want ErrSuperseded", err)
		}
		if err := r.trig.Run(t.Context(), r.host); !errors.Is(err, ErrSuperseded) {
			t.Errorf("old Run: %v, want ErrSuperseded", err)
		}
		if len(r.ev.take()) != 0 {
			t.Errorf("a superseded installation did something")
		}
		if u := r.pools.Usage(); u.Installations != 2 || u.Connections != 0 {
			t.Errorf("usage %+v: Run's exit closes the old connection, both installations charged", u)
		}
		r.trig.Close()
		if e, live := r.pools.Epoch("orders"); e != 2 || !live {
			t.Errorf("epoch %d live %v after closing the old one", e, live)
		}
		newer.Close()
		if e, live := r.pools.Epoch("orders"); e != 2 || live {
			t.Errorf("epoch %d live %v after closing both", e, live)
		}
		again, _, err := Install(r.pools, Installation{LogicalID: "orders", Epoch: 3, ExpectedEpoch: 2, Config: rtConfig(t, 1), Credentials: rtCredentials(t, rtConfig(t, 1))})
		if err != nil {
			t.Fatalf("install after close: %v", err)
		}
		again.Close()
		if u := r.pools.Usage(); u != (Usage{}) {
			t.Errorf("usage %+v", u)
		}
	})
}

// TestInstallRefusals: invalid input and exhausted pools refuse, charging
// nothing.
func TestInstallRefusals(t *testing.T) {
	cfg := rtConfig(t, 1)
	creds := rtCredentials(t, cfg)
	charge := installCharge(cfg)
	bad := cfg.Clone()
	bad.PollIntervalMS = 0
	tests := []struct {
		name string
		lim  func(*PoolLimits)
		id   string
		cfg  Config
		cred []Credential
		want error
	}{
		{"empty logical id", nil, "", cfg, creds, ErrInvalidLogicalID},
		{"long logical id", nil, strings.Repeat("x", maxIDLen+1), cfg, creds, ErrInvalidLogicalID},
		{"space in logical id", nil, "a b", cfg, creds, ErrInvalidLogicalID},
		{"invalid config", nil, "orders", bad, creds, ErrInvalidConfig},
		{"missing credential", nil, "orders", cfg, nil, ErrInvalidCredentials},
		{"metadata bytes", func(l *PoolLimits) { l.MaxMetadataBytes = charge - 1 }, "orders", cfg, creds, ErrPoolExhausted},
		{"bytes", func(l *PoolLimits) { l.MaxBytes = charge - 1 }, "orders", cfg, creds, ErrPoolExhausted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lim := DefaultPoolLimits()
			if tc.lim != nil {
				tc.lim(&lim)
			}
			p := newPools(t, lim)
			_, _, err := Install(p, Installation{LogicalID: tc.id, Epoch: 1, Config: tc.cfg, Credentials: tc.cred})
			if !errors.Is(err, tc.want) {
				t.Errorf("Install: %v, want %v", err, tc.want)
			}
			if u := p.Usage(); u != (Usage{}) {
				t.Errorf("usage %+v", u)
			}
			if e, _ := p.Epoch(tc.id); e != 0 {
				t.Errorf("epoch %d recorded", e)
			}
		})
	}
	t.Run("logical id at its limit", func(t *testing.T) {
		p := newPools(t, DefaultPoolLimits())
		trig, _, err := Install(p, Installation{LogicalID: strings.Repeat("x", maxIDLen), Epoch: 1, Config: cfg, Credentials: creds})
		if err != nil {
			t.Fatal(err)
		}
		trig.Close()
	})
	t.Run("installations", func(t *testing.T) {
		lim := DefaultPoolLimits()
		lim.MaxInstallations = 1
		p := newPools(t, lim)
		trig, _, err := Install(p, Installation{LogicalID: "a", Epoch: 1, Config: cfg, Credentials: creds})
		if err != nil {
			t.Fatal(err)
		}
		defer trig.Close()
		_, _, err = Install(p, Installation{LogicalID: "b", Epoch: 1, Config: cfg, Credentials: creds})
		var re *ReservationError
		if !errors.As(err, &re) || re.Resource != ResourceInstallations {
			t.Errorf("second Install: %v", err)
		}
	})
}

// TestPoolsClose closes every live installation and refuses new ones.
func TestPoolsClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.step(t)
		r.pools.Close()
		if u := r.pools.Usage(); u != (Usage{}) || r.net.openLinks() != 0 {
			t.Errorf("usage %+v, open %d", u, r.net.openLinks())
		}
		if _, _, err := Install(r.pools, Installation{LogicalID: "other", Epoch: 1, Config: rtConfig(t, 1), Credentials: rtCredentials(t, rtConfig(t, 1))}); !errors.Is(err, ErrClosed) {
			t.Errorf("Install on closed pools: %v", err)
		}
	})
}

// TestPoolsCloseSuperseded: Pools.Close also closes an installation a newer
// epoch superseded and its owner never closed: every charge, client and
// connection returns. Regression: only the live installation was closed,
// and the superseded one kept its charge and its connection.
func TestPoolsCloseSuperseded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.step(t) // the old installation holds a connection
		cfg := rtConfig(t, 1)
		newer, _, err := Install(r.pools, Installation{LogicalID: "orders", Epoch: 2, ExpectedEpoch: 1, Config: cfg, Credentials: rtCredentials(t, cfg)})
		if err != nil {
			t.Fatal(err)
		}
		r.net.install(newer)
		if _, err := newer.Step(t.Context(), r.host); err != nil {
			t.Fatal(err)
		}
		if u := r.pools.Usage(); u.Installations != 2 || u.Connections != 2 {
			t.Fatalf("before Close: usage %+v", u)
		}
		r.pools.Close()
		if u := r.pools.Usage(); u != (Usage{}) || r.net.openLinks() != 0 {
			t.Errorf("after Close: usage %+v, open links %d; want nothing held", u, r.net.openLinks())
		}
		for i, tr := range []*Triggers{r.trig, newer} {
			if _, err := tr.Step(t.Context(), r.host); !errors.Is(err, ErrClosed) {
				t.Errorf("installation %d: Step = %v, want ErrClosed", i, err)
			}
		}
	})
}

// TestPoolLimitsBounds checks each limit at both bounds and one past each.
func TestPoolLimitsBounds(t *testing.T) {
	dur := func(d time.Duration) int64 { return int64(d) }
	tests := []struct {
		field     string
		low, high int64
		set       func(*PoolLimits, int64)
	}{
		{"max_bytes", 1, maxPoolBytes, func(l *PoolLimits, v int64) { l.MaxBytes = v }},
		{"max_metadata_bytes", 1, maxPoolBytes, func(l *PoolLimits, v int64) { l.MaxMetadataBytes = v }},
		{"max_installations", 1, maxPoolCount, func(l *PoolLimits, v int64) { l.MaxInstallations = int(v) }},
		{"max_requests", 1, maxPoolCount, func(l *PoolLimits, v int64) { l.MaxRequests = int(v) }},
		{"max_clients", 1, maxPoolCount, func(l *PoolLimits, v int64) { l.MaxClients = int(v) }},
		{"max_connections", 1, maxPoolCount, func(l *PoolLimits, v int64) { l.MaxConnections = int(v) }},
		{"max_tenant_requests", 1, maxPoolCount, func(l *PoolLimits, v int64) { l.MaxTenantRequests = int(v) }},
		{"max_tenant_connections", 1, maxPoolCount, func(l *PoolLimits, v int64) { l.MaxTenantConnections = int(v) }},
		{"max_provider_requests", 1, maxPoolCount, func(l *PoolLimits, v int64) { l.MaxProviderRequests = int(v) }},
		{"max_provider_connections", 1, maxPoolCount, func(l *PoolLimits, v int64) { l.MaxProviderConnections = int(v) }},
		{"max_idle_age", dur(minIdleAge), dur(maxIdleAge), func(l *PoolLimits, v int64) { l.MaxIdleAge = time.Duration(v) }},
		{"dial_backoff", dur(MinDialBackoff), dur(maxDialBackoffLimit), func(l *PoolLimits, v int64) {
			l.MaxDialBackoff = maxDialBackoffLimit
			l.DialBackoff = time.Duration(v)
		}},
		{"max_dial_backoff", dur(DefaultPoolLimits().DialBackoff), dur(maxDialBackoffLimit), func(l *PoolLimits, v int64) { l.MaxDialBackoff = time.Duration(v) }},
	}
	for _, tc := range tests {
		for _, end := range []struct {
			name     string
			at, past int64
		}{{"low", tc.low, tc.low - 1}, {"high", tc.high, tc.high + 1}} {
			t.Run(tc.field+"/"+end.name, func(t *testing.T) {
				at, past := DefaultPoolLimits(), DefaultPoolLimits()
				tc.set(&at, end.at)
				tc.set(&past, end.past)
				if err := at.Validate(); err != nil {
					t.Errorf("at the bound: %v", err)
				}
				err := past.Validate()
				var le *PoolLimitsError
				if !errors.As(err, &le) || !errors.Is(err, ErrInvalidPoolLimits) || le.Field != tc.field {
					t.Errorf("past the bound: %v, want field %s", err, tc.field)
				}
				if _, err := NewPools(PoolConfig{Limits: past}); !errors.Is(err, ErrInvalidPoolLimits) {
					t.Errorf("NewPools past the bound: %v", err)
				}
			})
		}
	}
	if err := DefaultPoolLimits().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	if err := (PoolLimits{}).Validate(); !errors.Is(err, ErrInvalidPoolLimits) {
		t.Errorf("zero limits: %v", err)
	}
}

// TestPoolCeilings: a second installation sharing the tenant and provider
// IDs finds each connection or client ceiling taken by the first, and
// each request ceiling taken while the first activates: no dial, a typed
// count, the host's reservation released.
func TestPoolCeilings(t *testing.T) {
	tests := []struct {
		name     string
		lim      func(*PoolLimits)
		resource Resource
		midStep  bool
	}{
		{"connections", func(l *PoolLimits) { l.MaxConnections = 1 }, ResourceConnections, false},
		{"tenant connections", func(l *PoolLimits) { l.MaxTenantConnections = 1 }, ResourceTenantConnections, false},
		{"provider connections", func(l *PoolLimits) { l.MaxProviderConnections = 1 }, ResourceProviderConnections, false},
		{"clients", func(l *PoolLimits) { l.MaxClients = 1 }, ResourceClients, false},
		{"requests", func(l *PoolLimits) { l.MaxRequests = 1 }, ResourceRequests, true},
		{"tenant requests", func(l *PoolLimits) { l.MaxTenantRequests = 1 }, ResourceTenantRequests, true},
		{"provider requests", func(l *PoolLimits) { l.MaxProviderRequests = 1 }, ResourceProviderRequests, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lim := DefaultPoolLimits()
				tc.lim(&lim)
				a := newRig(t, rtConfig(t, 1), lim)
				cfg := rtConfig(t, 1)
				b, _, err := Install(a.pools, Installation{LogicalID: "second", Epoch: 1, Config: cfg, Credentials: rtCredentials(t, cfg)})
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				bnet := newFakeNet(a.ev)
				bnet.install(b)
				bhost := newFakeHost(a.ev)

				release := make(chan struct{})
				done := make(chan struct{})
				if tc.midStep {
					a.net.publish(0, `[]`)
					a.host.activate = func(context.Context, Activation) Outcome {
						<-release
						return OutcomeSuccess
					}
					go func() {
						defer close(done)
						a.step(t)
					}()
					synctest.Wait()
				} else {
					a.step(t)
					close(done)
				}
				rep, err := b.Step(t.Context(), bhost)
				close(release)
				<-done
				if err != nil {
					t.Fatal(err)
				}
				if rep.Result != ResultSkipped || rep.Error != ClassPoolExhausted || rep.Resource != tc.resource {
					t.Errorf("report %+v, want resource %v", rep, tc.resource)
				}
				if got := b.Monitor().Snapshot().Totals.Refusal(tc.resource); got != 1 {
					t.Errorf("Refusals[%v] = %d", tc.resource, got)
				}
				if bnet.dialCount() != 0 || bhost.held() != 0 {
					t.Errorf("dials %d, host held %d", bnet.dialCount(), bhost.held())
				}
				if got := b.Monitor().Snapshot().Totals.Error(ClassPoolExhausted); got != 1 {
					t.Errorf("counted %d", got)
				}
				a.trig.Close()
				b.Close()
				if u := a.pools.Usage(); u != (Usage{}) {
					t.Errorf("usage %+v", u)
				}
			})
		})
	}
}
