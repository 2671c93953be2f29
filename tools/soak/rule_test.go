package soak

import (
	"strings"
	"testing"
)

// TestDurableRule: the verdict holds the broker to every verified
// acknowledgement when asked to and whenever no kill was injected; only
// after a kill, unasked, does it list the broker's kept messages and
// dropped retries instead of failing on them.
func TestDurableRule(t *testing.T) {
	var killed, unkilled [NumFaults + 1]int
	killed[FaultKill], killed[FaultPause] = 1, 3
	unkilled[FaultRestart], unkilled[FaultSever] = 2, 5
	tests := []struct {
		name   string
		opts   Options
		faults [NumFaults + 1]int
		want   bool
		prefix string
	}{
		{"kills, unasked", Options{}, killed, false, "no loss (kills injected)"},
		{"kills, asked", Options{Durable: true}, killed, true, "durable (asked)"},
		{"no kill", Options{}, unkilled, true, "durable (no kill injected)"},
		{"no fault", Options{}, [NumFaults + 1]int{}, true, "durable (no kill injected)"},
	}
	for _, tc := range tests {
		if got := durable(tc.opts, tc.faults); got != tc.want {
			t.Errorf("%s: durable = %v, want %v", tc.name, got, tc.want)
		}
		if got := rule(tc.opts, tc.faults); !strings.HasPrefix(got, tc.prefix) {
			t.Errorf("%s: rule = %q, want it to start %q", tc.name, got, tc.prefix)
		}
	}
}
