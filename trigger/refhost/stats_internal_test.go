package refhost

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/trigger"
)

// TestStatsOutcomeOutside: Outcome reads each outcome's own count, 0 for
// one never counted and for the values just outside the list.
func TestStatsOutcomeOutside(t *testing.T) {
	s := Stats{outcomes: map[trigger.Outcome]uint64{trigger.OutcomeSuccess: 1, trigger.OutcomePlatformFailure: 9}}
	got := []uint64{s.Outcome(0), s.Outcome(trigger.OutcomeSuccess), s.Outcome(trigger.OutcomeTimeout), s.Outcome(trigger.OutcomePlatformFailure), s.Outcome(trigger.OutcomePlatformFailure + 1)}
	if diff := cmp.Diff([]uint64{0, 1, 0, 9, 0}, got); diff != "" {
		t.Errorf("Outcome (-want +got):\n%s", diff)
	}
}
