package pull

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStrings: every value's spelling, the zero Action read as "none", and
// values outside the enumerations named by their number.
func TestStrings(t *testing.T) {
	got := []string{
		ActionAck.String(), ActionNak.String(), ActionTerm.String(), ActionExhausted.String(), ActionNone.String(), Action(0).String(), Action(6).String(),
		AckVerified.String(), AckVerifiedLate.String(), AckUncertain.String(), AckNone.String(), AckState(0).String(), AckState(9).String(),
	}
	want := []string{
		"ack", "nak", "term", "exhausted", "none", "none", "Action(6)",
		"verified", "verified late", "uncertain", "none", "AckState(0)", "AckState(9)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("String() (-want +got):\n%s", diff)
	}
}

// TestVerified: a receipt seen, in time or late, is verified; nothing else
// is, the zero value included.
func TestVerified(t *testing.T) {
	verified := map[AckState]bool{AckVerified: true, AckVerifiedLate: true, AckUncertain: false, AckNone: false, 0: false}
	for s, want := range verified {
		if s.Verified() != want {
			t.Errorf("%v.Verified() = %v", s, !want)
		}
	}
}
