package trigger

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSplit: each binding in exactly one part, contiguous runs whose sizes
// differ by at most one, each part a valid configuration with only the
// tenants its bindings name and their credentials, and the parts installed
// side by side on one Pools charged the sum of their charges.
func TestSplit(t *testing.T) {
	cfg := rtConfig(t, 2, 3) // t0: b0 b1; t1: b2 b3 b4
	creds := rtCredentials(t, cfg)
	tests := []struct {
		name     string
		n        int
		bindings [][]string
		tenants  [][]string
	}{
		{"one", 1, [][]string{{"b0", "b1", "b2", "b3", "b4"}}, [][]string{{"t0", "t1"}}},
		{"two", 2, [][]string{{"b0", "b1"}, {"b2", "b3", "b4"}}, [][]string{{"t0"}, {"t1"}}},
		{"three", 3, [][]string{{"b0"}, {"b1", "b2"}, {"b3", "b4"}}, [][]string{{"t0"}, {"t0", "t1"}, {"t1"}}},
		{"five", 5, [][]string{{"b0"}, {"b1"}, {"b2"}, {"b3"}, {"b4"}}, [][]string{{"t0"}, {"t0"}, {"t1"}, {"t1"}, {"t1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts, err := Split(cfg, creds, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			var bindings, tenants [][]string
			pools := newPools(t, DefaultPoolLimits())
			defer pools.Close()
			var charged int64
			for k, p := range parts {
				var bs, ts []string
				for _, b := range p.Config.Bindings {
					bs = append(bs, b.ID)
				}
				for i, tn := range p.Config.Tenants {
					ts = append(ts, tn.ID)
					if p.Credentials[i].Tenant != tn.ID || p.Credentials[i].Secret != creds[cfg.TenantIndex(tn.ID)].Secret {
						t.Errorf("part %d: credential %d is %v, want tenant %s's", k, i, p.Credentials[i], tn.ID)
					}
				}
				bindings, tenants = append(bindings, bs), append(tenants, ts)
				if _, _, err := Install(pools, Installation{LogicalID: fmt.Sprintf("orders.%d", k), Epoch: 1, Config: p.Config, Credentials: p.Credentials}); err != nil {
					t.Fatalf("Install part %d: %v", k, err)
				}
				charged += installCharge(p.Config)
			}
			if diff := cmp.Diff(tt.bindings, bindings); diff != "" {
				t.Errorf("bindings per part (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.tenants, tenants); diff != "" {
				t.Errorf("tenants per part (-want +got):\n%s", diff)
			}
			if got := pools.Usage(); got.MetadataBytes != charged || got.Installations != tt.n {
				t.Errorf("usage %+v, want %d installations charged %d", got, tt.n, charged)
			}
		})
	}
}

// TestSplitCopies: a part shares no slice with the configuration it came
// from, and keeps its global settings.
func TestSplitCopies(t *testing.T) {
	cfg := rtConfig(t, 2, 1)
	parts, err := Split(cfg, rtCredentials(t, cfg), 2)
	if err != nil {
		t.Fatal(err)
	}
	parts[0].Config.Bindings[0].ID = "changed"
	parts[0].Config.Tenants[0].ID = "changed"
	if cfg.Bindings[0].ID != "b0" || cfg.Tenants[0].ID != "t0" {
		t.Errorf("Split's part aliases the configuration: %+v", cfg)
	}
	if got := parts[1].Config; got.PollIntervalMS != cfg.PollIntervalMS || got.MaxControlLineBytes != cfg.MaxControlLineBytes ||
		got.MaxHeaderBytes != cfg.MaxHeaderBytes || got.Profile != cfg.Profile {
		t.Errorf("part's global settings %+v, want those of %+v", got, cfg)
	}
}

// TestSplitRefuses: a count outside 1..bindings, an invalid configuration
// and credentials that do not match it.
func TestSplitRefuses(t *testing.T) {
	cfg := rtConfig(t, 1, 1)
	creds := rtCredentials(t, cfg)
	bad := cfg.Clone()
	bad.PollIntervalMS = 0
	tests := []struct {
		name  string
		cfg   Config
		creds []Credential
		n     int
		want  error
		parts int
	}{
		{"zero parts", cfg, creds, 0, ErrInvalidSplit, 0},
		{"negative parts", cfg, creds, -1, ErrInvalidSplit, 0},
		{"more parts than bindings", cfg, creds, 3, ErrInvalidSplit, 0},
		{"as many parts as bindings", cfg, creds, 2, nil, 2},
		{"invalid config", bad, creds, 1, ErrInvalidConfig, 0},
		{"missing credential", cfg, creds[:1], 1, ErrInvalidCredentials, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts, err := Split(tt.cfg, tt.creds, tt.n)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Split: %v, want %v", err, tt.want)
			}
			if len(parts) != tt.parts {
				t.Errorf("Split returned %d parts, want %d", len(parts), tt.parts)
			}
		})
	}
}
