package refhost

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/trigger"
)

// TestStatsOutcomeOutside: Outcome reads each outcome's own count and 0
// for the values just outside the list.
func TestStatsOutcomeOutside(t *testing.T) {
	var s Stats
	for i := range s.outcomes {
		s.outcomes[i] = uint64(i + 1)
	}
	got := []uint64{s.Outcome(0), s.Outcome(trigger.OutcomeSuccess), s.Outcome(trigger.OutcomePlatformFailure), s.Outcome(trigger.Outcome(trigger.NumOutcomes + 1))}
	if diff := cmp.Diff([]uint64{0, 1, uint64(trigger.NumOutcomes), 0}, got); diff != "" {
		t.Errorf("Outcome (-want +got):\n%s", diff)
	}
}
