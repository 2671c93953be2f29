package metrics

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
)

// TestAppendEscaped pins the format's escapes: backslash and line feed
// everywhere, the double quote only in label values.
func TestAppendEscaped(t *testing.T) {
	tests := []struct {
		name, in string
		quote    bool
		want     string
	}{
		{"plain", "pool exhausted", true, "pool exhausted"},
		{"empty", "", true, ""},
		{"backslash", `a\b`, true, `a\\b`},
		{"newline", "a\nb", true, `a\nb`},
		{"quote in label", `a"b`, true, `a\"b`},
		{"quote in help", `a"b`, false, `a"b`},
		{"backslash in help", `a\b`, false, `a\\b`},
		{"newline in help", "a\nb", false, `a\nb`},
		{"all", "\\\"\n", true, `\\\"\n`},
		{"tab and CR kept", "a\tb\rc", true, "a\tb\rc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(appendEscaped(nil, tc.in, tc.quote)); got != tc.want {
				t.Errorf("appendEscaped(%q, %v) = %q, want %q", tc.in, tc.quote, got, tc.want)
			}
		})
	}
}

// TestAppendUnixSeconds pins the timestamp rendering.
func TestAppendUnixSeconds(t *testing.T) {
	tests := []struct {
		name string
		t    time.Time
		want string
	}{
		{"zero time", time.Time{}, "0"},
		{"epoch", time.Unix(0, 0), "0.000"},
		{"millisecond", time.Unix(1, 1_000_000), "1.001"},
		{"truncated below a millisecond", time.Unix(1, 999_999), "1.000"},
		{"tenths", time.Unix(1_700_000_000, 500_000_000), "1700000000.500"},
		{"before 1970", time.Unix(-2, 500_000_000), "-1.500"},
		{"zone ignored", time.Date(2026, 1, 2, 3, 4, 5, 60_000_000, time.FixedZone("x", 3600)), "1767319445.060"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(appendUnixSeconds(nil, tc.t)); got != tc.want {
				t.Errorf("appendUnixSeconds(%v) = %q, want %q", tc.t, got, tc.want)
			}
		})
	}
}

// TestSizeHint: with counts below a million the first buffer of Write and
// Handler is large enough, from no binding to MaxBindings, with a last
// step. Larger counts make Append grow the buffer once.
func TestSizeHint(t *testing.T) {
	for _, n := range []int{0, 1, 16, trigger.MaxBindings} {
		small := trigger.Snapshot{Epoch: 999_999, Steps: 999_999, Dials: 999_999, Replaced: 999_999,
			Bindings: make([]trigger.Counts, n), Consumers: make([]trigger.ConsumerState, n)}
		for i := range small.Bindings {
			fill(&small.Bindings[i], 999_999)
			small.Consumers[i] = trigger.ConsumerState{At: time.Unix(1<<40, 0), Pending: 999_999, AckPending: 1,
				Redelivered: 999_999, Leader: true}
		}
		last := trigger.StepReport{
			Step: 999_999, Epoch: 999_999, Binding: n, At: time.Unix(1<<40, 0), Result: trigger.ResultDelivered,
			StreamSeq: math.MaxUint64, Delivered: math.MaxUint64, RouteGeneration: math.MaxUint64,
			Outcome: trigger.OutcomeAuthenticationRejected, Action: pull.ActionExhausted, Ack: pull.AckVerifiedLate,
			Error: trigger.ClassBrokerUnavailable, Resource: trigger.ResourceProviderConnections, Wait: time.Second,
		}
		if got := len(Append(nil, small, last, true)); got > sizeHint(n) {
			t.Errorf("%d bindings: %d bytes, hint %d", n, got, sizeHint(n))
		}
	}
}

// FillCounts is fill for the external tests (package metrics_test).
var FillCounts = fill

// fill sets every count of c to x: the uint64 fields, and the count of
// every outcome, error class and resource.
func fill(c *trigger.Counts, x uint64) {
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Uint64 {
			f.SetUint(x)
		}
	}
	for o := range c.Outcomes() {
		c.SetOutcome(o, x)
	}
	for e := range c.Errors() {
		c.SetError(e, x)
	}
	for r := range c.Refusals() {
		c.SetRefusal(r, x)
	}
}
