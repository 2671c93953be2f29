package soak_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/soak"
)

// TestSoakShort is the short soak of make test: two tenants of two
// bindings under every fault for a few seconds, against the pinned broker.
// Nothing may be lost and the runtime must be back to its baseline; the
// figures are logged.
func TestSoakShort(t *testing.T) {
	bin, err := broker.ServerBinary(t.Context())
	if err != nil {
		t.Fatalf("the pinned broker: %v", err)
	}
	var out strings.Builder
	res, err := soak.Run(t.Context(), soak.Options{
		Duration: 8 * time.Second, Tenants: 2, Bindings: 2, EventsPerRound: 8,
		Binary: bin, Out: &out,
	})
	t.Log(out.String())
	if err != nil {
		t.Fatalf("soak: %v", err)
	}
	if res.Rounds < 2 || res.Verdict.Published == 0 || res.Verdict.Executions < res.Verdict.Published {
		t.Errorf("soak did too little: %d rounds, %s", res.Rounds, res.Verdict)
	}
	faults := 0
	for _, n := range res.Faults {
		faults += n
	}
	if faults != res.Rounds {
		t.Errorf("%d faults in %d rounds, want one a round", faults, res.Rounds)
	}
	// The verdict was held to every verified acknowledgement unless a
	// kill was injected.
	want := "durable (no kill injected)"
	if res.Faults[soak.FaultKill] > 0 {
		want = "no loss (kills injected)"
	}
	if !strings.HasPrefix(res.Rule, want) || !strings.Contains(out.String(), "soak: verdict rule: "+want) {
		t.Errorf("rule %q after %d kills; want it to start %q, and reported", res.Rule, res.Faults[soak.FaultKill], want)
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		name string
		opts soak.Options
	}{
		{"short", soak.Options{Duration: time.Second}},
		{"too many tenants", soak.Options{Tenants: soak.MaxTenants + 1}},
		{"too many bindings", soak.Options{Bindings: soak.MaxBindingsPerTenant + 1}},
		{"events", soak.Options{EventsPerRound: soak.MaxEventsRound + 1}},
		{"no fault", soak.Options{Faults: []soak.Fault{}}},
		{"unknown fault", soak.Options{Faults: []soak.Fault{soak.Fault(soak.NumFaults + 1)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := soak.Run(t.Context(), tc.opts); !errors.Is(err, soak.ErrInvalidOptions) {
				t.Errorf("Run = %v, want ErrInvalidOptions", err)
			}
		})
	}
	for f := soak.Fault(1); int(f) <= soak.NumFaults; f++ {
		if got, err := soak.ParseFault(f.String()); err != nil || got != f {
			t.Errorf("ParseFault(%q) = %v, %v", f, got, err)
		}
	}
	if _, err := soak.ParseFault("flood"); !errors.Is(err, soak.ErrInvalidOptions) {
		t.Errorf("ParseFault(flood) = %v", err)
	}
}

// TestSoakSync: the broker runs with the sync interval asked for, which the
// report's first line names; a value the broker refuses fails the setup,
// before any fault.
func TestSoakSync(t *testing.T) {
	bin, err := broker.ServerBinary(t.Context())
	if err != nil {
		t.Fatalf("the pinned broker: %v", err)
	}
	var out strings.Builder
	res, err := soak.Run(t.Context(), soak.Options{
		Duration: soak.MinDuration, Tenants: 1, Bindings: 1, EventsPerRound: 4,
		Faults: []soak.Fault{soak.FaultKill}, SyncInterval: "always", Binary: bin, Out: &out,
	})
	if err != nil || res.Rounds == 0 || !strings.Contains(out.String(), ", sync always\n") {
		t.Fatalf("soak with sync always: %v after %d rounds:\n%s", err, res.Rounds, out.String())
	}
	_, err = soak.Run(t.Context(), soak.Options{
		Duration: soak.MinDuration, Tenants: 1, Bindings: 1, SyncInterval: "sometimes", Binary: bin, Out: io.Discard,
	})
	if !errors.Is(err, soak.ErrSetup) {
		t.Errorf("soak with sync %q: %v, want ErrSetup", "sometimes", err)
	}
}
