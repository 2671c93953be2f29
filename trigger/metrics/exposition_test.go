package metrics_test

import (
	"flag"
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/metrics"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.prom")

// goldenPath holds the exposition of knownSnapshot and knownLast.
const goldenPath = "testdata/golden.prom"

// TestGolden pins the exact output for a known snapshot and last step.
func TestGolden(t *testing.T) {
	got := metrics.Append(nil, knownSnapshot(), knownLast(), true)
	if *update {
		if err := os.WriteFile(goldenPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("Append (-want +got):\n%s", diff)
	}
}

// TestWithoutLastStep: before a last step, the output is the golden one up
// to the last-step families, which are absent.
func TestWithoutLastStep(t *testing.T) {
	full := string(metrics.Append(nil, knownSnapshot(), knownLast(), true))
	got := string(metrics.Append(nil, knownSnapshot(), knownLast(), false))
	cut := strings.Index(full, "# HELP latent_nats_trigger_last_step_")
	if cut < 0 {
		t.Fatal("no last-step family in the full output")
	}
	if diff := cmp.Diff(full[:cut], got); diff != "" {
		t.Errorf("Append without the last step (-want +got):\n%s", diff)
	}
}

// TestAppendKeepsPrefix: Append appends to dst.
func TestAppendKeepsPrefix(t *testing.T) {
	got := string(metrics.Append([]byte("prefix\n"), knownSnapshot(), trigger.StepReport{}, false))
	want := "prefix\n" + string(metrics.Append(nil, knownSnapshot(), trigger.StepReport{}, false))
	if got != want {
		t.Errorf("Append did not keep dst's bytes: got %d bytes, want %d", len(got), len(want))
	}
}

// familyShape is what TestFamilies pins of a family.
type familyShape struct {
	Name, Type string
	Labels     []string
	Samples    int
}

// shapes returns the shape of each family.
func shapes(fams []family) []familyShape {
	var out []familyShape
	for _, f := range fams {
		s := familyShape{Name: f.Name, Type: f.Type, Samples: len(f.Samples)}
		if len(f.Samples) > 0 {
			for _, l := range f.Samples[0].Labels {
				s.Labels = append(s.Labels, l.Name)
			}
		}
		out = append(out, s)
	}
	return out
}

// TestFamilies pins every family's name, type, label names and sample
// count, in order, for two bindings and a last step.
func TestFamilies(t *testing.T) {
	fams, err := parseExposition(string(metrics.Append(nil, knownSnapshot(), knownLast(), true)))
	if err != nil {
		t.Fatal(err)
	}
	b := []string{"binding"}
	const n = 2
	want := []familyShape{
		{"latent_nats_trigger_epoch", "gauge", nil, 1},
		{"latent_nats_trigger_bindings", "gauge", nil, 1},
		{"latent_nats_trigger_steps_total", "counter", nil, 1},
		{"latent_nats_trigger_dials_total", "counter", nil, 1},
		{"latent_nats_trigger_connections_replaced_total", "counter", nil, 1},
		{"latent_nats_trigger_credential_rotations_total", "counter", nil, 1},
		{"latent_nats_trigger_visits_total", "counter", b, n},
		{"latent_nats_trigger_skipped_total", "counter", b, n},
		{"latent_nats_trigger_empty_total", "counter", b, n},
		{"latent_nats_trigger_empty_pulls_total", "counter", b, n},
		{"latent_nats_trigger_awaiting_redelivery_total", "counter", b, n},
		{"latent_nats_trigger_delivered_total", "counter", b, n},
		{"latent_nats_trigger_acknowledgements_total", "counter", []string{"binding", "action"}, n * 4},
		{"latent_nats_trigger_acknowledgements_uncertain_total", "counter", b, n},
		{"latent_nats_trigger_acknowledgements_late_total", "counter", b, n},
		{"latent_nats_trigger_unacknowledged_total", "counter", b, n},
		{"latent_nats_trigger_failed_total", "counter", b, n},
		{"latent_nats_trigger_outcomes_total", "counter", []string{"binding", "outcome"}, n * len(valuesOf[trigger.Outcome]())},
		{"latent_nats_trigger_errors_total", "counter", []string{"binding", "class"}, n * len(valuesOf[trigger.ErrorClass]())},
		{"latent_nats_trigger_pool_refusals_total", "counter", []string{"binding", "resource"}, n * len(valuesOf[trigger.Resource]())},
		{"latent_nats_trigger_dial_failures_total", "counter", []string{"binding", "dial_failure"}, n * len(valuesOf[trigger.DialFailure]())},
		{"latent_nats_trigger_consumer_pending", "gauge", b, n},
		{"latent_nats_trigger_consumer_ack_pending", "gauge", b, n},
		{"latent_nats_trigger_consumer_redelivered", "gauge", b, n},
		{"latent_nats_trigger_consumer_info_leader", "gauge", b, n},
		{"latent_nats_trigger_consumer_info_timestamp_seconds", "gauge", b, n},
		{"latent_nats_trigger_last_step_info", "gauge", []string{"binding", "result", "outcome", "action", "ack", "class", "resource", "dial_failure"}, 1},
		{"latent_nats_trigger_last_step_number", "gauge", nil, 1},
		{"latent_nats_trigger_last_step_epoch", "gauge", nil, 1},
		{"latent_nats_trigger_last_step_timestamp_seconds", "gauge", nil, 1},
		{"latent_nats_trigger_last_step_stream_sequence", "gauge", nil, 1},
		{"latent_nats_trigger_last_step_delivery_count", "gauge", nil, 1},
		{"latent_nats_trigger_last_step_route_generation", "gauge", nil, 1},
		{"latent_nats_trigger_last_step_wait_seconds", "gauge", nil, 1},
	}
	if diff := cmp.Diff(want, shapes(fams)); diff != "" {
		t.Errorf("families (-want +got):\n%s", diff)
	}
}

// maxSnapshot has n bindings with every count and consumer figure at its
// largest.
func maxSnapshot(n int) trigger.Snapshot {
	s := trigger.Snapshot{
		Epoch: math.MaxUint64, Steps: math.MaxUint64, Dials: math.MaxUint64, Replaced: math.MaxUint64,
		Bindings: make([]trigger.Counts, n), Consumers: make([]trigger.ConsumerState, n),
	}
	for i := range s.Bindings {
		metrics.FillCounts(&s.Bindings[i], math.MaxUint64)
		s.Consumers[i] = trigger.ConsumerState{At: time.Unix(1<<40, 999_000_000), Pending: math.MaxUint64,
			AckPending: math.MaxInt, Redelivered: math.MaxInt, Waiting: math.MaxInt, Leader: true}
	}
	return s
}

// TestFormatValid reads back the output of edge cases with the strict
// reader: HELP and TYPE once per family and before its samples, samples
// contiguous, one label set per family, escaped label values, a value per
// line, a trailing newline.
func TestFormatValid(t *testing.T) {
	odd := knownLast()
	odd.Result = trigger.StepResult(200)
	odd.Outcome = trigger.Outcome(201)
	odd.Action = pull.Action(202)
	odd.Ack = pull.AckState(203)
	odd.Error = trigger.ErrorClass(204)
	odd.Resource = trigger.Resource(205)
	odd.Dial = trigger.DialFailure(206)
	odd.Binding = -1
	odd.At = time.Time{}
	zero := trigger.StepReport{Result: trigger.ResultFailed, Ack: pull.AckNone, Error: trigger.ClassDial}
	pre := knownLast()
	pre.At = time.Date(1969, 12, 31, 23, 59, 58, 500_000_000, time.UTC)
	tests := []struct {
		name    string
		s       trigger.Snapshot
		last    trigger.StepReport
		hasLast bool
		samples int
	}{
		{"no bindings", trigger.Snapshot{}, trigger.StepReport{}, false, installationSamples},
		{"one binding, zero counts", trigger.Snapshot{Bindings: make([]trigger.Counts, 1)}, trigger.StepReport{}, false, installationSamples + perBinding},
		{"one binding, no consumer info yet", trigger.Snapshot{Bindings: make([]trigger.Counts, 1), Consumers: make([]trigger.ConsumerState, 1)},
			trigger.StepReport{}, false, installationSamples + perBinding + 1},
		{"known", knownSnapshot(), knownLast(), true, installationSamples + 2*(perBinding+perConsumer) + 8},
		{"max bindings, max counts", maxSnapshot(trigger.MaxBindings), knownLast(), true, installationSamples + trigger.MaxBindings*(perBinding+perConsumer) + 8},
		{"enums out of range", knownSnapshot(), odd, true, installationSamples + 2*(perBinding+perConsumer) + 8},
		{"zero enums", knownSnapshot(), zero, true, installationSamples + 2*(perBinding+perConsumer) + 8},
		{"before 1970", knownSnapshot(), pre, true, installationSamples + 2*(perBinding+perConsumer) + 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fams, err := parseExposition(string(metrics.Append(nil, tc.s, tc.last, tc.hasLast)))
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			for _, f := range fams {
				got += len(f.Samples)
			}
			if got != tc.samples {
				t.Errorf("%d samples, want %d", got, tc.samples)
			}
		})
	}
}

// installationSamples is the number of installation samples: epoch,
// bindings, steps, dials, replaced connections and credential rotations.
const installationSamples = 6

// perBinding is the number of counter samples one binding adds.
var perBinding = 10 + 4 + len(valuesOf[trigger.Outcome]()) + len(valuesOf[trigger.ErrorClass]()) +
	len(valuesOf[trigger.Resource]()) + len(valuesOf[trigger.DialFailure]())

// valuesOf returns the String names of an enum's values from 1 up to the
// first one String does not know (it writes that one as "Type(n)"): the
// values the package declares, found without a count from it.
func valuesOf[E interface {
	~uint8
	String() string
}]() []string {
	var out []string
	for v := E(1); v != 0; v++ {
		s := v.String()
		if strings.HasSuffix(s, "("+strconv.Itoa(int(v))+")") {
			break
		}
		out = append(out, s)
	}
	return out
}

// perConsumer is the number of consumer samples a binding with consumer
// info adds: pending, ack pending, redelivered, leader and the timestamp
// (a binding without writes the timestamp alone).
const perConsumer = 5

// TestLastStepLabels pins the last-step labels of zero and out-of-range
// enum values: empty for zero (not applicable), the String form otherwise.
func TestLastStepLabels(t *testing.T) {
	odd := trigger.StepReport{
		Binding: 3, Result: trigger.StepResult(200), Outcome: trigger.Outcome(201), Action: pull.Action(202),
		Ack: pull.AckState(203), Error: trigger.ErrorClass(204), Resource: trigger.Resource(205),
		Dial: trigger.DialFailure(206),
	}
	tests := []struct {
		name string
		r    trigger.StepReport
		want []label
	}{
		{"zero", trigger.StepReport{}, []label{
			{"binding", "0"}, {"result", ""}, {"outcome", ""}, {"action", ""}, {"ack", ""}, {"class", ""}, {"resource", ""},
			{"dial_failure", ""},
		}},
		{"known", knownLast(), []label{
			{"binding", "1"}, {"result", "delivered"}, {"outcome", "timeout"}, {"action", "nak"}, {"ack", "uncertain"},
			{"class", "ack uncertain"}, {"resource", ""}, {"dial_failure", ""},
		}},
		{"refused", trigger.StepReport{Result: trigger.ResultFailed, Ack: pull.AckNone, Error: trigger.ClassPoolExhausted, Resource: trigger.ResourceTenantConnections}, []label{
			{"binding", "0"}, {"result", "failed"}, {"outcome", ""}, {"action", ""}, {"ack", "none"},
			{"class", "pool exhausted"}, {"resource", "tenant connections"}, {"dial_failure", ""},
		}},
		{"dial refused", trigger.StepReport{Result: trigger.ResultFailed, Ack: pull.AckNone, Error: trigger.ClassDial, Dial: trigger.DialRefused}, []label{
			{"binding", "0"}, {"result", "failed"}, {"outcome", ""}, {"action", ""}, {"ack", "none"},
			{"class", "dial"}, {"resource", ""}, {"dial_failure", "refused"},
		}},
		{"out of range", odd, []label{
			{"binding", "3"}, {"result", "StepResult(200)"}, {"outcome", "Outcome(201)"}, {"action", "Action(202)"},
			{"ack", "AckState(203)"}, {"class", "ErrorClass(204)"}, {"resource", "Resource(205)"},
			{"dial_failure", "DialFailure(206)"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fams, err := parseExposition(string(metrics.Append(nil, trigger.Snapshot{}, tc.r, true)))
			if err != nil {
				t.Fatal(err)
			}
			info := find(fams, "latent_nats_trigger_last_step_info")
			if len(info.Samples) != 1 {
				t.Fatalf("%d info samples", len(info.Samples))
			}
			if diff := cmp.Diff(tc.want, info.Samples[0].Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if info.Samples[0].Value != 1 {
				t.Errorf("info value %v, want 1", info.Samples[0].Value)
			}
		})
	}
}

// find returns the family called name, or a zero family.
func find(fams []family, name string) family {
	for _, f := range fams {
		if f.Name == name {
			return f
		}
	}
	return family{}
}

// TestReaderRejects: the strict reader the tests rely on refuses what is
// not valid exposition, so its acceptance means something.
func TestReaderRejects(t *testing.T) {
	const ok = "# HELP a_total h\n# TYPE a_total counter\na_total{binding=\"0\"} 1\n"
	if _, err := parseExposition(ok); err != nil {
		t.Fatalf("valid input refused: %v", err)
	}
	tests := []struct{ name, text string }{
		{"empty", ""},
		{"no trailing newline", strings.TrimSuffix(ok, "\n")},
		{"blank line", ok + "\n"},
		{"second HELP", ok + "# HELP a_total h\n"},
		{"sample before TYPE", "# HELP a_total h\na_total 1\n"},
		{"TYPE without HELP", "# TYPE a_total counter\na_total 1\n"},
		{"counter without _total", "# HELP a h\n# TYPE a counter\na 1\n"},
		{"gauge with _total", "# HELP a_total h\n# TYPE a_total gauge\na_total 1\n"},
		{"unknown type", "# HELP a h\n# TYPE a summary\na 1\n"},
		{"sample of another family", ok + "b_total 1\n"},
		{"interleaved family", ok + "# HELP b h\n# TYPE b gauge\nb 1\na_total{binding=\"1\"} 1\n"},
		{"unescaped quote", "# HELP a h\n# TYPE a gauge\na{l=\"x\"y\"} 1\n"},
		{"bad escape", "# HELP a h\n# TYPE a gauge\na{l=\"x\\ty\"} 1\n"},
		{"unterminated value", "# HELP a h\n# TYPE a gauge\na{l=\"x} 1\n"},
		{"bad label name", "# HELP a h\n# TYPE a gauge\na{0l=\"x\"} 1\n"},
		{"reserved label name", "# HELP a h\n# TYPE a gauge\na{__l=\"x\"} 1\n"},
		{"label twice", "# HELP a h\n# TYPE a gauge\na{l=\"x\",l=\"y\"} 1\n"},
		{"label sets differ", "# HELP a h\n# TYPE a gauge\na{l=\"x\"} 1\na{m=\"x\"} 1\n"},
		{"duplicate series", ok + "a_total{binding=\"0\"} 2\n"},
		{"no value", "# HELP a h\n# TYPE a gauge\na\n"},
		{"bad value", "# HELP a h\n# TYPE a gauge\na x\n"},
		{"timestamp", "# HELP a h\n# TYPE a gauge\na 1 1700000000\n"},
		{"negative counter", "# HELP a_total h\n# TYPE a_total counter\na_total -1\n"},
		{"fractional counter", "# HELP a_total h\n# TYPE a_total counter\na_total 1.5\n"},
		{"comment", ok + "# note\n"},
		{"bad metric name", "# HELP 1a h\n# TYPE 1a gauge\n1a 1\n"},
		{"escaped quote in HELP", "# HELP a h\\\"\n# TYPE a gauge\na 1\n"},
		{"not UTF-8", "# HELP a h\xff\n# TYPE a gauge\na 1\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseExposition(tc.text); err == nil {
				t.Errorf("accepted %q", tc.text)
			}
		})
	}
}

// Family names of the tests: the public names, written out.
const (
	famAcks     = "latent_nats_trigger_acknowledgements_total"
	famOutcomes = "latent_nats_trigger_outcomes_total"
	famErrors   = "latent_nats_trigger_errors_total"
	famRefusals = "latent_nats_trigger_pool_refusals_total"
	famDials    = "latent_nats_trigger_dial_failures_total"
	famInfo     = "latent_nats_trigger_last_step_info"
)

// seriesKey names one binding's series within a family: its family, its
// label other than binding ("" for none) and that label's value.
type seriesKey struct{ Family, Label, Value string }

// TestCountsFieldsExported maps every field of trigger.Counts to its
// series and checks it with distinct values: a field added to Counts fails
// here until it is mapped and written. The per-value counts (unexported
// arrays, set with SetOutcome, SetError and SetRefusal) are indexed by
// the enums, which start at 1: index 0 is unused and is not written.
func TestCountsFieldsExported(t *testing.T) {
	type target struct {
		family, label string
		value         func(i int) string
		// set sets the count of value i of a per-value field.
		set func(c *trigger.Counts, i int, n uint64)
	}
	fixed := func(v string) func(int) string { return func(int) string { return v } }
	per := func(name string) target { return target{"latent_nats_trigger_" + name + "_total", "", fixed(""), nil} }
	want := map[string]target{
		"Visits":         per("visits"),
		"Skipped":        per("skipped"),
		"Empty":          per("empty"),
		"EmptyPulls":     per("empty_pulls"),
		"Awaiting":       per("awaiting_redelivery"),
		"Delivered":      per("delivered"),
		"Acked":          {famAcks, "action", fixed(pull.ActionAck.String()), nil},
		"Termed":         {famAcks, "action", fixed(pull.ActionTerm.String()), nil},
		"Nacked":         {famAcks, "action", fixed(pull.ActionNak.String()), nil},
		"Exhausted":      {famAcks, "action", fixed(pull.ActionExhausted.String()), nil},
		"Uncertain":      per("acknowledgements_uncertain"),
		"Late":           per("acknowledgements_late"),
		"Unacknowledged": per("unacknowledged"),
		"Failed":         per("failed"),
		"outcomes": {famOutcomes, "outcome", func(i int) string { return trigger.Outcome(i).String() },
			func(c *trigger.Counts, i int, n uint64) { c.SetOutcome(trigger.Outcome(i), n) }},
		"classes": {famErrors, "class", func(i int) string { return trigger.ErrorClass(i).String() },
			func(c *trigger.Counts, i int, n uint64) { c.SetError(trigger.ErrorClass(i), n) }},
		"refusals": {famRefusals, "resource", func(i int) string { return trigger.Resource(i).String() },
			func(c *trigger.Counts, i int, n uint64) { c.SetRefusal(trigger.Resource(i), n) }},
		"dials": {famDials, "dial_failure", func(i int) string { return trigger.DialFailure(i).String() },
			func(c *trigger.Counts, i int, n uint64) { c.SetDialFailure(trigger.DialFailure(i), n) }},
	}
	var c trigger.Counts
	v := reflect.ValueOf(&c).Elem()
	expect := map[seriesKey]float64{}
	next := uint64(1_000_001)
	fields := map[string]bool{}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		fields[f.Name] = true
		tg, ok := want[f.Name]
		if !ok {
			t.Errorf("trigger.Counts.%s is not mapped to a metric", f.Name)
			continue
		}
		fv := v.Field(i)
		switch {
		case f.Type.Kind() == reflect.Uint64:
			fv.SetUint(next)
			expect[seriesKey{tg.family, tg.label, tg.value(0)}] = float64(next)
			next++
		case f.Type.Kind() == reflect.Array && f.Type.Elem().Kind() == reflect.Uint64 && tg.set != nil:
			for j := 1; j < fv.Len(); j++ {
				tg.set(&c, j, next)
				expect[seriesKey{tg.family, tg.label, tg.value(j)}] = float64(next)
				next++
			}
		default:
			t.Errorf("trigger.Counts.%s has type %s: extend the mapping", f.Name, f.Type)
		}
	}
	for name := range want {
		if !fields[name] {
			t.Errorf("mapping names %s, which trigger.Counts lacks", name)
		}
	}

	// Binding 1 holds the values, binding 0 zeros.
	fams, err := parseExposition(string(metrics.Append(nil, trigger.Snapshot{Bindings: []trigger.Counts{{}, c}}, trigger.StepReport{}, false)))
	if err != nil {
		t.Fatal(err)
	}
	got := map[seriesKey]float64{}
	for _, f := range fams {
		for _, s := range f.Samples {
			b, ok := s.get("binding")
			if !ok {
				continue
			}
			if b == "0" {
				if s.Value != 0 {
					t.Errorf("%s{binding=\"0\"} = %v, want 0", f.Name, s.Value)
				}
				continue
			}
			k := seriesKey{Family: f.Name}
			if len(s.Labels) > 1 {
				k.Label, k.Value = s.Labels[1].Name, s.Labels[1].Value
			}
			got[k] = s.Value
		}
	}
	if diff := cmp.Diff(expect, got); diff != "" {
		t.Errorf("binding 1's series (-want +got):\n%s", diff)
	}
}

// TestSnapshotFieldsExported maps every field of trigger.Snapshot to its
// family, or to why it is not written: a new field fails here.
func TestSnapshotFieldsExported(t *testing.T) {
	want := map[string]string{
		"LogicalID": "", // an identifier: never written
		"Epoch":     "latent_nats_trigger_epoch",
		"Steps":     "latent_nats_trigger_steps_total",
		"Dials":     "latent_nats_trigger_dials_total",
		"Replaced":  "latent_nats_trigger_connections_replaced_total",
		"Rotations": "latent_nats_trigger_credential_rotations_total",
		"Totals":    "", // the sum of the binding series: not written
		"Bindings":  "latent_nats_trigger_bindings",
		"Consumers": "", // per binding: TestConsumerStateFieldsExported
	}
	s := trigger.Snapshot{LogicalID: "logical-zqx", Epoch: 41, Steps: 42, Dials: 43, Replaced: 44, Rotations: 45, Bindings: make([]trigger.Counts, 3)}
	s.Totals.Visits = 77
	values := map[string]float64{"Epoch": 41, "Steps": 42, "Dials": 43, "Replaced": 44, "Rotations": 45, "Bindings": 3}
	text := string(metrics.Append(nil, s, trigger.StepReport{}, false))
	fams, err := parseExposition(text)
	if err != nil {
		t.Fatal(err)
	}
	typ := reflect.TypeFor[trigger.Snapshot]()
	fields := map[string]bool{}
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		fields[name] = true
		fam, ok := want[name]
		switch {
		case !ok:
			t.Errorf("trigger.Snapshot.%s is not mapped to a metric", name)
		case fam != "":
			f := find(fams, fam)
			if len(f.Samples) != 1 || f.Samples[0].Value != values[name] {
				t.Errorf("%s: samples %v, want one of value %v", fam, f.Samples, values[name])
			}
		}
	}
	for name := range want {
		if !fields[name] {
			t.Errorf("mapping names %s, which trigger.Snapshot lacks", name)
		}
	}
	for _, absent := range []string{"zqx", " 77\n"} {
		if strings.Contains(text, absent) {
			t.Errorf("output holds %q", absent)
		}
	}
}

// TestStepReportFieldsExported maps every field of trigger.StepReport to
// a gauge or a label of the info series and checks its value: a new field
// fails here until it is mapped and written, or listed in unexported with
// the reason.
func TestStepReportFieldsExported(t *testing.T) {
	type target struct{ family, label string }
	unexported := map[string]string{
		// The host's typed reason: an error value, not a fixed set of
		// label values.
		"Cause": "the host's error value",
	}
	gauge := func(name string) target { return target{"latent_nats_trigger_last_step_" + name, ""} }
	want := map[string]target{
		"Step":            gauge("number"),
		"Epoch":           gauge("epoch"),
		"Binding":         {famInfo, "binding"},
		"At":              gauge("timestamp_seconds"),
		"Result":          {famInfo, "result"},
		"StreamSeq":       gauge("stream_sequence"),
		"Delivered":       gauge("delivery_count"),
		"RouteGeneration": gauge("route_generation"),
		"Outcome":         {famInfo, "outcome"},
		"Action":          {famInfo, "action"},
		"Ack":             {famInfo, "ack"},
		"Error":           {famInfo, "class"},
		"Resource":        {famInfo, "resource"},
		"Dial":            {famInfo, "dial_failure"},
		"Wait":            gauge("wait_seconds"),
	}
	r := knownLast()
	r.Resource = trigger.ResourceClients
	r.Dial = trigger.DialTLS
	fams, err := parseExposition(string(metrics.Append(nil, trigger.Snapshot{}, r, true)))
	if err != nil {
		t.Fatal(err)
	}
	v := reflect.ValueOf(r)
	fields := map[string]bool{}
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		fields[name] = true
		if _, skip := unexported[name]; skip {
			continue
		}
		tg, ok := want[name]
		if !ok {
			t.Errorf("trigger.StepReport.%s is not mapped to a metric", name)
			continue
		}
		f := find(fams, tg.family)
		if len(f.Samples) != 1 {
			t.Errorf("%s: %d samples, want 1", tg.family, len(f.Samples))
			continue
		}
		s := f.Samples[0]
		var wantValue float64
		var wantLabel string
		switch x := v.Field(i).Interface().(type) {
		case uint64:
			wantValue = float64(x)
		case time.Time:
			wantValue = float64(x.UnixMilli()) / 1e3
		case time.Duration:
			wantValue = x.Seconds()
		case int:
			wantLabel = strconv.Itoa(x)
		case fmt.Stringer:
			wantLabel = x.String()
		default:
			t.Errorf("trigger.StepReport.%s has type %T: extend the mapping", name, x)
			continue
		}
		if tg.label == "" {
			if s.Value != wantValue || wantValue == 0 {
				t.Errorf("%s = %v, want %v (non-zero)", tg.family, s.Value, wantValue)
			}
			continue
		}
		if got, _ := s.get(tg.label); got != wantLabel || wantLabel == "" {
			t.Errorf("%s label %s = %q, want %q (non-empty)", tg.family, tg.label, got, wantLabel)
		}
	}
	for name := range want {
		if !fields[name] {
			t.Errorf("mapping names %s, which trigger.StepReport lacks", name)
		}
	}
	for name := range unexported {
		if !fields[name] {
			t.Errorf("unexported names %s, which trigger.StepReport lacks", name)
		}
	}
}

// TestEnumLabelValues: each labelled family writes exactly its enum's
// values, 1 through the last, by their String names.
func TestEnumLabelValues(t *testing.T) {
	tests := []struct {
		family, label string
		want          []string
	}{
		{famAcks, "action", []string{"ack", "term", "nak", "exhausted"}},
		{famOutcomes, "outcome", valuesOf[trigger.Outcome]()},
		{famErrors, "class", valuesOf[trigger.ErrorClass]()},
		{famRefusals, "resource", valuesOf[trigger.Resource]()},
		{famDials, "dial_failure", valuesOf[trigger.DialFailure]()},
	}
	fams, err := parseExposition(string(metrics.Append(nil, trigger.Snapshot{Bindings: make([]trigger.Counts, 1)}, trigger.StepReport{}, false)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.family, func(t *testing.T) {
			var got []string
			for _, s := range find(fams, tc.family).Samples {
				v, _ := s.get(tc.label)
				got = append(got, v)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("label values (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConsumerStateFieldsExported maps every field of
// trigger.ConsumerState to its gauge and checks it with distinct values,
// binding 1 holding them; binding 0, without consumer info yet, writes
// the timestamp 0 alone. A field added to ConsumerState fails here until
// it is mapped and written, or listed in unexported with the reason.
func TestConsumerStateFieldsExported(t *testing.T) {
	unexported := map[string]string{
		// Pull requests waiting at the consumer: at most the profile's
		// max_waiting of 1, another puller's; the busy class counts it.
		"Waiting": "in the snapshot only",
	}
	const fam = "latent_nats_trigger_consumer_"
	want := map[string]string{
		"At":          fam + "info_timestamp_seconds",
		"Pending":     fam + "pending",
		"AckPending":  fam + "ack_pending",
		"Redelivered": fam + "redelivered",
		"Leader":      fam + "info_leader",
	}
	c := trigger.ConsumerState{At: time.Unix(1_767_000_000, 250_000_000), Pending: 1_000_001, AckPending: 1_000_002,
		Redelivered: 1_000_003, Waiting: 1_000_004, Leader: true}
	values := map[string]float64{"At": 1_767_000_000.25, "Pending": 1_000_001, "AckPending": 1_000_002, "Redelivered": 1_000_003, "Leader": 1}
	s := trigger.Snapshot{Bindings: make([]trigger.Counts, 2), Consumers: []trigger.ConsumerState{{}, c}}
	fams, err := parseExposition(string(metrics.Append(nil, s, trigger.StepReport{}, false)))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]sample{}
	for _, f := range fams {
		if strings.HasPrefix(f.Name, fam) {
			got[f.Name] = f.Samples
		}
	}
	expect := map[string][]sample{}
	typ := reflect.TypeFor[trigger.ConsumerState]()
	fields := map[string]bool{}
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		fields[name] = true
		if _, skip := unexported[name]; skip {
			continue
		}
		f, ok := want[name]
		if !ok {
			t.Errorf("trigger.ConsumerState.%s is not mapped to a metric", name)
			continue
		}
		one := sample{Name: f, Labels: []label{{"binding", "1"}}, Value: values[name]}
		expect[f] = []sample{one}
	}
	expect[want["At"]] = append([]sample{{Name: want["At"], Labels: []label{{"binding", "0"}}, Value: 0}}, expect[want["At"]]...)
	for name := range want {
		if !fields[name] {
			t.Errorf("mapping names %s, which trigger.ConsumerState lacks", name)
		}
	}
	for name := range unexported {
		if !fields[name] {
			t.Errorf("unexported names %s, which trigger.ConsumerState lacks", name)
		}
	}
	if diff := cmp.Diff(expect, got); diff != "" {
		t.Errorf("consumer series (-want +got):\n%s", diff)
	}
}
