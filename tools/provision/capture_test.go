package provision

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/latent-systems/latent-nats/internal/jspull"
)

// TestDesiredCaptureJSON pins the exact stream-create bodies of the two
// capture streams.
func TestDesiredCaptureJSON(t *testing.T) {
	o := DefaultOptions().Capture
	tests := []struct {
		name string
		cfg  StreamConfig
		want string
	}{
		{"dead letters", DesiredDeadLetterStream(o, 1),
			`{"name":"LATENT_DEADLETTER","subjects":["$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.\u003e","$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.\u003e"],` +
				`"retention":"limits","max_consumers":-1,"max_msgs":-1,"max_bytes":8388608,"max_age":2592000000000000,` +
				`"max_msgs_per_subject":-1,"max_msg_size":-1,"discard":"old","storage":"file","num_replicas":1}`},
		{"copies", DesiredCopyStream(o, 3),
			`{"name":"LATENT_COPIES","subjects":["latent.copy.\u003e"],` +
				`"retention":"limits","max_consumers":-1,"max_msgs":-1,"max_bytes":67108864,"max_age":604800000000000,` +
				`"max_msgs_per_subject":-1,"max_msg_size":-1,"discard":"old","storage":"file","num_replicas":3}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("stream create body (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRePublishOf pins the republish setting of a stream created with
// copies, and that it is written into the stream-create body.
func TestRePublishOf(t *testing.T) {
	cfg := DesiredStream("ORDERS", []jspull.Binding{testPullBinding()}, DefaultOptions().Stream)
	rp := RePublishOf("ORDERS")
	cfg.RePublish = &rp
	got, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"ORDERS","subjects":["acme.orders.created"],"retention":"workqueue","max_consumers":-1,"max_msgs":-1,` +
		`"max_bytes":-1,"max_age":0,"max_msgs_per_subject":-1,"max_msg_size":4096,"discard":"new","storage":"file","num_replicas":1,` +
		`"republish":{"src":"\u003e","dest":"latent.copy.ORDERS.\u003e"}}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("stream create body (-want +got):\n%s", diff)
	}
}

func TestSubsetOf(t *testing.T) {
	tests := []struct {
		sub, pattern string
		want         bool
	}{
		{"a.>", "a.>", true},
		{"a.>", ">", true},
		{"a.>", "a.*", false},
		{"a.>", "a.*.*", false},
		{"a.>", "a.b", false},
		{"a.>", "a", false},
		{"a.b.>", "a.*.>", true},
		{"a.*", "a.*", true},
		{"a.*", "a.>", true},
		{"a.*", "a.b", false},
		{"a.b", "a.*", true},
		{"a.b", "a.b", true},
		{"a.b", "a.b.c", false},
		{"a.b.c", "a.b", false},
		{"$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.>", "$JS.EVENT.ADVISORY.>", true},
		{"$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.>", "$JS.EVENT.ADVISORY.CONSUMER.*.>", true},
		{"$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.>", "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>", false},
	}
	for _, tc := range tests {
		if got := subsetOf(tc.sub, tc.pattern); got != tc.want {
			t.Errorf("subsetOf(%q, %q) = %v, want %v", tc.sub, tc.pattern, got, tc.want)
		}
	}
}

func TestCheckCapture(t *testing.T) {
	desired := DesiredDeadLetterStream(DefaultOptions().Capture, 3)
	tests := []struct {
		name string
		st   streamState
		want []jspull.Mismatch
	}{
		{"exact", streamState{subjects: desired.Subjects, replicas: 3}, nil},
		{"wider", streamState{subjects: []string{"$JS.EVENT.ADVISORY.>"}, replicas: 3}, nil},
		{"one advisory missing", streamState{subjects: []string{"$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.>"}, replicas: 3},
			[]jspull.Mismatch{{Field: "subjects", Want: "a subject capturing $JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>",
				Got: "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.>"}}},
		{"one stream only", streamState{subjects: []string{"$JS.EVENT.ADVISORY.CONSUMER.*.ORDERS.*"}, replicas: 3}, []jspull.Mismatch{
			{Field: "subjects", Want: "a subject capturing $JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>", Got: "$JS.EVENT.ADVISORY.CONSUMER.*.ORDERS.*"},
			{Field: "subjects", Want: "a subject capturing $JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.>", Got: "$JS.EVENT.ADVISORY.CONSUMER.*.ORDERS.*"},
		}},
		{"replicas", streamState{subjects: desired.Subjects, replicas: 1}, []jspull.Mismatch{{Field: "num_replicas", Want: "3", Got: "1"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, checkCapture(tc.st, desired), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("mismatches (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckRePublish(t *testing.T) {
	want := RePublishOf("ORDERS")
	other := RePublish{Source: "acme.>", Destination: "copies.>"}
	tests := []struct {
		name string
		st   streamState
		want []jspull.Mismatch
	}{
		{"set", streamState{republish: &want}, nil},
		{"none", streamState{}, []jspull.Mismatch{{Field: "republish", Want: "src > dest latent.copy.ORDERS.>", Got: "none"}}},
		{"another", streamState{republish: &other}, []jspull.Mismatch{{Field: "republish", Want: "src > dest latent.copy.ORDERS.>", Got: "src acme.> dest copies.>"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, checkRePublish(tc.st, want), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("mismatches (-want +got):\n%s", diff)
			}
		})
	}
}
