package jspull

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/conn"
)

// pausedInfo is matchingInfo for a consumer paused until a future time, as
// nats-server 2.14.6 writes it (config.pause_until, then "paused" and
// "pause_remaining" after num_pending).
const pausedInfo = `{"type":"io.nats.jetstream.api.v1.consumer_info_response","stream_name":"ORDERS","name":"worker","created":"2026-01-02T03:04:05.123456789Z","config":{"durable_name":"worker","name":"worker","deliver_policy":"all","ack_policy":"explicit","ack_wait":2000000000,"max_deliver":3,"filter_subject":"orders.new","replay_policy":"instant","max_waiting":1,"max_ack_pending":1,"headers_only":false,"max_batch":1,"max_expires":100000000,"max_bytes":10240,"num_replicas":0,"metadata":{"_nats.level":"4","_nats.req.level":"0","_nats.ver":"2.14.6"},"pause_until":"2026-01-02T04:04:05Z"},"delivered":{"consumer_seq":4,"stream_seq":4},"ack_floor":{"consumer_seq":3,"stream_seq":3},"num_ack_pending":0,"num_redelivered":0,"num_waiting":0,"num_pending":7,"paused":true,"pause_remaining":3598000000000,"ts":"2026-01-02T03:04:07.5Z"}`

// TestUnknownStateSkipped: a field the client does not know outside
// "config" is broker state; it is validated and skipped, and the reply
// reads as without it (issue 13: a broker upgrade that adds state must not
// stop the triggers).
func TestUnknownStateSkipped(t *testing.T) {
	wantP := Pending{NumPending: 7, NumAckPending: 1, NumRedelivered: 2, Leader: true}
	for _, tc := range []struct{ name, old, new string }{
		{"top-level number", `"ts":`, `"num_future":12,"ts":`},
		{"top-level object", `"ts":`, `"future":{"a":[1,{"b":null}],"c":"d"},"ts":`},
		{"top-level every json type", `"ts":`, `"f1":null,"f2":true,"f3":-1.5e3,"f4":"\u00e9","f5":[],"f6":{},"ts":`},
		{"top-level first", `{"type":`, `{"future":"x","type":`},
		{"top-level escaped name", `"ts":`, `"fut\u0075re":1,"ts":`},
		{"delivered", `"stream_seq":4,`, `"stream_seq":4,"future":{"x":1},`},
		{"ack_floor", `"consumer_seq":3,`, `"consumer_seq":3,"future":[1,2],`},
		{"cluster", `"ts":`, `"cluster":{"name":"c","leader":"n1","future":{"x":[true]}},"ts":`},
		{"a known key's other case", `"ts":`, `"Num_Pending":99,"ts":`},
		{"at the limit of unknown fields", `"ts":`, manyFields("f", maxUnknownFields, "1") + `,"ts":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := replaceOnce(t, matchingInfo, tc.old, tc.new)
			p, ms, err := inspectBody(validBinding(), body)
			if err != nil {
				t.Fatal(err)
			}
			if ms != nil {
				t.Errorf("mismatches %v, want none", ms)
			}
			if diff := cmp.Diff(wantP, p); diff != "" {
				t.Errorf("pending (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("api error", func(t *testing.T) {
		body := `{"type":"io.nats.jetstream.api.v1.consumer_info_response","error":{"code":404,"err_code":10014,"description":"consumer not found","future":{"x":1}},"future":2}`
		if _, _, err := inspectBody(validBinding(), []byte(body)); !errors.Is(err, ErrConsumerNotFound) {
			t.Errorf("error %v, want ErrConsumerNotFound", err)
		}
	})
}

// manyFields returns n members "<prefix>0":v, ... joined by commas.
func manyFields(prefix string, n int, v string) string {
	fs := make([]string, n)
	for i := range fs {
		fs[i] = `"` + prefix + strconv.Itoa(i) + `":` + v
	}
	return strings.Join(fs, ",")
}

// TestUnknownFieldLimit: each object read member by member holds at most
// maxUnknownFields unknown fields (each kept to refuse a repeated key).
func TestUnknownFieldLimit(t *testing.T) {
	for _, tc := range []struct{ name, old, new string }{
		{"top level", `"ts":`, manyFields("f", maxUnknownFields+1, "1") + `,"ts":`},
		{"config", `"num_replicas":0`, `"num_replicas":0,` + manyFields("f", maxUnknownFields+1, "0")},
		{"delivered", `"stream_seq":4,`, `"stream_seq":4,` + manyFields("f", maxUnknownFields+1, "1") + `,`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ci consumerInfo
			err := decodeInfo(replaceOnce(t, matchingInfo, tc.old, tc.new), &ci)
			var ie *InfoError
			if !errors.As(err, &ie) || !errors.Is(ie.err, errJSONUnknown) {
				t.Errorf("decodeInfo() = %v, want too many unknown fields", err)
			}
		})
	}
	// At the limit a config of empty unknown settings passes.
	body := replaceOnce(t, matchingInfo, `"num_replicas":0`, `"num_replicas":0,`+manyFields("f", maxUnknownFields, "null"))
	if _, ms, err := inspectBody(validBinding(), body); err != nil || ms != nil {
		t.Errorf("config at the limit: %v, mismatches %v", err, ms)
	}
}

// TestUnknownConfigSettings: a config field the client does not know may
// change delivery: empty or zero it is accepted, anything else is a
// mismatch naming it, after the known fields' mismatches, in reply order.
func TestUnknownConfigSettings(t *testing.T) {
	long := `{"a":"` + strings.Repeat("x", 70) + `"}`
	tests := []struct {
		name  string
		extra string
		want  []Mismatch
	}{
		{"null", `"future":null`, nil},
		{"false", `"future":false`, nil},
		{"zero", `"future":0`, nil},
		{"empty string", `"future":""`, nil},
		{"empty array", `"future":[]`, nil},
		{"empty object", `"future":{}`, nil},
		{"empty with spaces", `"f1":[ ],"f2":{` + "\n\t" + `}`, nil},
		{"true", `"future":true`, []Mismatch{{"future", "absent or empty", "true"}}},
		{"one", `"future":1`, []Mismatch{{"future", "absent or empty", "1"}}},
		{"negative zero", `"future":-0`, []Mismatch{{"future", "absent or empty", "-0"}}},
		{"zero as a float", `"future":0.0`, []Mismatch{{"future", "absent or empty", "0.0"}}},
		{"a string", `"future_policy":"newest"`, []Mismatch{{"future_policy", "absent or empty", `"newest"`}}},
		{"a null array element", `"future":[null]`, []Mismatch{{"future", "absent or empty", "[null]"}}},
		{"an object", `"future":{"a":0}`, []Mismatch{{"future", "absent or empty", `{"a":0}`}}},
		{"long value", `"future":` + long, []Mismatch{{"future", "absent or empty", "object of 78 bytes"}}},
		{"escaped name", `"fut\u0075re":2`, []Mismatch{{"future", "absent or empty", "2"}}},
		{"name not plain", `"f\u00e9 x":2`, []Mismatch{{`"f\u00e9 x"`, "absent or empty", "2"}}},
		{"long name", `"` + strings.Repeat("n", 70) + `":2`, []Mismatch{{strings.Repeat("n", 64) + "...", "absent or empty", "2"}}},
		{"a known key's other case", `"Ack_Policy":"none"`, []Mismatch{{"Ack_Policy", "absent or empty", `"none"`}}},
		{"in reply order, empty ones left out", `"z":1,"e":null,"a":"x"`, []Mismatch{
			{"z", "absent or empty", "1"},
			{"a", "absent or empty", `"x"`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := replaceOnce(t, matchingInfo, `"num_replicas":0`, `"num_replicas":0,`+tt.extra)
			_, ms, err := inspectBody(validBinding(), body)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ms); diff != "" {
				t.Errorf("mismatches (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("after the known mismatches", func(t *testing.T) {
		body := replaceOnce(t, matchingInfo, `"ack_policy":"explicit"`, `"future":true,"ack_policy":"none"`)
		_, ms, err := inspectBody(validBinding(), body)
		if err != nil {
			t.Fatal(err)
		}
		want := []Mismatch{{"ack_policy", "explicit", "none"}, {"future", "absent or empty", "true"}}
		if diff := cmp.Diff(want, ms); diff != "" {
			t.Errorf("mismatches (-want +got):\n%s", diff)
		}
	})
	t.Run("through Inspect", func(t *testing.T) {
		c, err := NewConsumer(validBinding(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		body := replaceOnce(t, matchingInfo, `"num_replicas":0`, `"num_replicas":0,"future":"on"`)
		r := &fakeRequester{reply: conn.Reply{Subject: []byte("_INBOX.x.1"), Payload: body}}
		p, err := c.Inspect(t.Context(), r)
		var pe *ProfileError
		if !errors.As(err, &pe) || errors.Is(err, ErrMalformedInfo) {
			t.Fatalf("Inspect: %v, want a *ProfileError", err)
		}
		if got, want := err.Error(), "pull: consumer does not match the profile: future"; got != want {
			t.Errorf("Error() = %q, want %q", got, want)
		}
		if p.NumPending != 7 {
			t.Errorf("pending %+v, want the reply's", p)
		}
	})
}

// TestConsumerPaused: a paused consumer that matches the profile is
// ErrConsumerPaused with its pending counts, not a profile mismatch; a
// paused consumer that does not match is a *ProfileError as any other.
func TestConsumerPaused(t *testing.T) {
	c, err := NewConsumer(validBinding(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	inspect := func(body []byte) (Pending, error) {
		r := &fakeRequester{reply: conn.Reply{Subject: []byte("_INBOX.x.1"), Payload: body}}
		return c.Inspect(t.Context(), r)
	}
	p, err := inspect([]byte(pausedInfo))
	if !errors.Is(err, ErrConsumerPaused) || errors.Is(err, ErrProfileMismatch) || errors.Is(err, ErrMalformedInfo) {
		t.Fatalf("paused: %v, want ErrConsumerPaused alone", err)
	}
	if diff := cmp.Diff(Pending{NumPending: 7, Leader: true}, p); diff != "" {
		t.Errorf("paused: pending (-want +got):\n%s", diff)
	}

	// Resumed: nats-server keeps pause_until but reports paused false (or
	// leaves it out) once it passed.
	for _, resumed := range []string{
		strings.Replace(pausedInfo, `"paused":true,`, `"paused":false,`, 1),
		strings.Replace(pausedInfo, `"paused":true,"pause_remaining":3598000000000,`, ``, 1),
	} {
		if resumed == pausedInfo {
			t.Fatal("the case changed nothing")
		}
		if _, err := inspect([]byte(resumed)); err != nil {
			t.Errorf("resumed: %v", err)
		}
	}

	body := replaceOnce(t, pausedInfo, `"max_batch":1`, `"max_batch":2`)
	_, err = inspect(body)
	var pe *ProfileError
	if !errors.As(err, &pe) || errors.Is(err, ErrConsumerPaused) {
		t.Fatalf("paused with a mismatch: %v, want a *ProfileError", err)
	}
	if diff := cmp.Diff([]Mismatch{{"max_batch", "1", "2"}}, pe.Mismatches); diff != "" {
		t.Errorf("mismatches (-want +got):\n%s", diff)
	}
}

// TestUnknownFieldsDoNotAllocate: skipping unknown state and checking empty
// unknown settings keeps the decode and the check allocation-free.
func TestUnknownFieldsDoNotAllocate(t *testing.T) {
	b := validBinding()
	body := []byte(strings.NewReplacer(
		`"ts":`, `"future":{"a":[1,{"b":null}]},"fut\u0075re2":"x","ts":`,
		`"num_replicas":0`, `"num_replicas":0,"future":null,"future2":{},"fut\u0075re3":0`,
		`"stream_seq":4,`, `"stream_seq":4,"future":1,`,
	).Replace(matchingInfo))
	allocs := testing.AllocsPerRun(100, func() {
		var ci consumerInfo
		if err := decodeInfo(body, &ci); err != nil {
			t.Fatal(err)
		}
		if ms := checkProfile(&b, &ci); ms != nil {
			t.Fatal(ms)
		}
	})
	if allocs != 0 {
		t.Errorf("decode and check allocate %v times, want 0", allocs)
	}
}
