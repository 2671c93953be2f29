package trigger

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCountsPerValue: each value of Outcome, ErrorClass, Resource and
// DialFailure has its own count, set by SetOutcome, SetError, SetRefusal
// and SetDialFailure and read by Outcome, Error, Refusal and DialFailure; the values just outside each list (0 and
// one past the last) read 0 and are not set.
func TestCountsPerValue(t *testing.T) {
	var c Counts
	for o := range Outcome(numOutcomes + 2) {
		c.SetOutcome(o, 100+uint64(o))
	}
	for e := range ErrorClass(numErrorClasses + 2) {
		c.SetError(e, 300+uint64(e))
	}
	for r := range Resource(numResources + 2) {
		c.SetRefusal(r, 500+uint64(r))
	}
	for f := range DialFailure(numDialFailures + 2) {
		c.SetDialFailure(f, 700+uint64(f))
	}
	var got, want []uint64
	for o := range Outcome(numOutcomes + 2) {
		got = append(got, c.Outcome(o))
		want = append(want, inList(int(o), numOutcomes, 100))
	}
	for e := range ErrorClass(numErrorClasses + 2) {
		got = append(got, c.Error(e))
		want = append(want, inList(int(e), numErrorClasses, 300))
	}
	for r := range Resource(numResources + 2) {
		got = append(got, c.Refusal(r))
		want = append(want, inList(int(r), numResources, 500))
	}
	for f := range DialFailure(numDialFailures + 2) {
		got = append(got, c.DialFailure(f))
		want = append(want, inList(int(f), numDialFailures, 700))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counts per value (-want +got):\n%s", diff)
	}
	if c.outcomes[0] != 0 || c.classes[0] != 0 || c.refusals[0] != 0 || c.dials[0] != 0 {
		t.Errorf("index 0 set: %d %d %d %d, want 0", c.outcomes[0], c.classes[0], c.refusals[0], c.dials[0])
	}
}

// inList is base+v for a value v of a list 1..n, else 0.
func inList(v, n int, base uint64) uint64 {
	if v < 1 || v > n {
		return 0
	}
	return base + uint64(v)
}

// TestCountsAdd: a Snapshot's Totals sum every count of its bindings, the
// per-value counts included.
func TestCountsAdd(t *testing.T) {
	var a, b Counts
	a.Visits, b.Visits = 1, 2
	a.SetOutcome(OutcomeSuccess, 3)
	b.SetOutcome(OutcomeSuccess, 4)
	a.SetError(ClassDial, 5)
	b.SetRefusal(ResourceProviderConnections, 6)
	a.SetDialFailure(DialTLS, 7)
	var sum Counts
	sum.add(&a)
	sum.add(&b)
	var want Counts
	want.Visits = 3
	want.SetOutcome(OutcomeSuccess, 7)
	want.SetError(ClassDial, 5)
	want.SetRefusal(ResourceProviderConnections, 6)
	want.SetDialFailure(DialTLS, 7)
	if sum != want {
		t.Errorf("sum %+v, want %+v", sum, want)
	}
}
