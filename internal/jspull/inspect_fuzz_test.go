package jspull

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/conn"
)

// refProfile is the reference decoding with encoding/json (keys matched
// exactly, see exactUnmarshal) of every field the profile check reads; a
// pointer is nil when the field is absent.
type refProfile struct {
	Type       string      `json:"type"`
	StreamName *string     `json:"stream_name"`
	Name       *string     `json:"name"`
	NumAck     int         `json:"num_ack_pending"`
	NumRedel   int         `json:"num_redelivered"`
	NumWaiting int         `json:"num_waiting"`
	NumPending uint64      `json:"num_pending"`
	Paused     bool        `json:"paused"`
	Cluster    *refCluster `json:"cluster"`
	Error      *struct {
		Code    int `json:"code"`
		ErrCode int `json:"err_code"`
	} `json:"error"`
	Config *refProfileConfig `json:"config"`
}

type refProfileConfig struct {
	Durable        *string  `json:"durable_name"`
	DeliverPolicy  *string  `json:"deliver_policy"`
	AckPolicy      *string  `json:"ack_policy"`
	ReplayPolicy   *string  `json:"replay_policy"`
	AckWait        *int64   `json:"ack_wait"`
	MaxDeliver     *int64   `json:"max_deliver"`
	MaxWaiting     *int64   `json:"max_waiting"`
	MaxAckPending  *int64   `json:"max_ack_pending"`
	MaxBatch       *int64   `json:"max_batch"`
	MaxExpires     *int64   `json:"max_expires"`
	MaxBytes       *int64   `json:"max_bytes"`
	FilterSubject  *string  `json:"filter_subject"`
	FilterSubjects []string `json:"filter_subjects"`
	DeliverSubject *string  `json:"deliver_subject"`
	PriorityPolicy *string  `json:"priority_policy"`
	Backoff        []int64  `json:"backoff"`
	HeadersOnly    bool     `json:"headers_only"`
	FlowControl    bool     `json:"flow_control"`
}

// FuzzInspect sends arbitrary consumer-info bytes through Inspect, the
// decoder and the profile check together, for validBinding with the
// stream name replaced by stream when that binding is valid, and checks
// the outcome against a reading of the same bytes with encoding/json and
// of the profile from its documentation:
//
//   - accepted: every profile field holds the binding's or the profile's
//     value, and the pending counts are the reply's;
//   - *ProfileError: exactly the fields that differ, each listed once, in
//     the fixed order, then every config field the package does not know
//     whose value is not empty or zero, in reply order, with the wanted and
//     the given value, and the pending counts still returned;
//   - ErrConsumerPaused: nothing differs and the reply says "paused";
//   - an API error: the typed error of its err_code;
//   - anything else is a malformed or oversized reply (ErrMalformedInfo,
//     ErrInfoTooLarge).
//
// The committed corpus is in testdata/fuzz/FuzzInspect.
func FuzzInspect(f *testing.F) {
	for _, s := range inspectSeeds(f) {
		f.Add(s.body, s.stream)
	}
	f.Fuzz(func(t *testing.T, body []byte, stream string) {
		b := validBinding()
		if alt := b; stream != "" {
			alt.Stream = stream
			if alt.Validate() == nil {
				b = alt
			}
		}
		c, err := NewConsumer(b, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := &fakeRequester{reply: conn.Reply{Subject: []byte("_INBOX.x.1"), Payload: body}}
		p, err := c.Inspect(t.Context(), r)
		var pe *ProfileError
		switch {
		case err == nil || errors.As(err, &pe) || errors.Is(err, ErrConsumerPaused):
		case errors.Is(err, ErrMalformedInfo), errors.Is(err, ErrInfoTooLarge):
			return // FuzzDecodeInfo compares what the decoder accepts
		case errors.Is(err, ErrAPI), errors.Is(err, ErrStreamNotFound), errors.Is(err, ErrConsumerNotFound):
			checkAPIError(t, body, err)
			return
		default:
			t.Fatalf("Inspect: untyped error %v", err)
		}
		var ref refProfile
		if err := exactUnmarshal(body, &ref); err != nil {
			t.Fatalf("accepted %q that encoding/json refuses: %v", body, err)
		}
		if ref.Error != nil {
			t.Fatalf("an API error reply passed as consumer info")
		}
		want := Pending{NumPending: ref.NumPending, NumAckPending: ref.NumAck, NumRedelivered: ref.NumRedel, NumWaiting: ref.NumWaiting,
			Leader: ref.Cluster.leader()}
		if p != want {
			t.Fatalf("pending %+v, encoding/json %+v", p, want)
		}
		wantMs := append(referenceMismatches(&b, &ref), referenceUnknownSettings(t, body)...)
		if pe == nil {
			if len(wantMs) != 0 {
				t.Fatalf("accepted a consumer whose settings differ from the profile: %+v", wantMs)
			}
			if paused := errors.Is(err, ErrConsumerPaused); paused != ref.Paused {
				t.Fatalf("Inspect: %v for a reply with paused %v", err, ref.Paused)
			}
			return
		}
		seen := make(map[string]bool, len(pe.Mismatches))
		for _, m := range pe.Mismatches {
			if seen[m.Field] {
				t.Fatalf("field %s listed twice: %+v", m.Field, pe.Mismatches)
			}
			seen[m.Field] = true
		}
		if diff := cmp.Diff(wantMs, pe.Mismatches); diff != "" {
			t.Fatalf("mismatches (-reference +Inspect):\n%s", diff)
		}
	})
}

// inspectSeed is one input of FuzzInspect.
type inspectSeed struct {
	body   []byte
	stream string
}

// inspectSeeds are the matching reply, replies with mismatches and API
// errors.
func inspectSeeds(t testing.TB) []inspectSeed {
	seeds := []inspectSeed{
		{[]byte(matchingInfo), ""},
		{[]byte(matchingInfo), "S\u00e9@%~"},
	}
	for _, edit := range []struct{ from, to string }{
		{`"ack_policy":"explicit"`, `"ack_policy":"all"`},
		{`"filter_subject":"orders.new"`, `"filter_subjects":["orders.new"]`},
		{`"filter_subject":"orders.new"`, `"filter_subject":"","filter_subjects":["orders.new","orders.old"]`},
		{`"filter_subject":"orders.new"`, `"filter_subject":"orders.old"`},
		{`"max_bytes":10240`, `"max_bytes":10240,"deliver_subject":"push","backoff":[1,2],"priority_policy":"pinned_client","flow_control":true`},
		{`"max_bytes":10240`, `"max_bytes":10240,"priority_policy":"none","deliver_subject":""`},
		{`"headers_only":false`, `"headers_only":true`},
		{`"name":"worker","created"`, `"name":"w\u006frker","created"`},
		{`"stream_name":"ORDERS"`, `"stream_name":"OTHER"`},
		{`"durable_name":"worker"`, `"durable_name":"other"`},
		{`"replay_policy":"instant"`, `"replay_policy":"original"`},
		{`"deliver_policy":"all"`, `"deliver_policy":"last"`},
		{`"max_waiting":1`, `"max_waiting":2`},
		{`"max_ack_pending":1`, `"max_ack_pending":1000`},
		{`"max_batch":1`, `"max_batch":0`},
		{`"max_expires":100000000`, `"max_expires":0`},
		{`"ack_wait":2000000000`, `"ack_wait":30000000000`},
		{`"max_deliver":3`, `"max_deliver":-1`},
		{`"num_replicas":0`, `"num_replicas":0,"future":true,"empty":{},"Ack_Policy":"none"`},
		{`"ts":`, `"future":{"a":[1]},"paused":true,"ts":`},
	} {
		seeds = append(seeds, inspectSeed{replaceOnce(t, matchingInfo, edit.from, edit.to), ""})
	}
	return append(seeds,
		inspectSeed{[]byte(pausedInfo), ""},
		inspectSeed{[]byte(`{"type":"io.nats.jetstream.api.v1.consumer_info_response","error":{"code":404,"err_code":10014,"description":"consumer not found"}}`), ""},
		inspectSeed{[]byte(`{"type":"io.nats.jetstream.api.v1.consumer_info_response","stream_name":"ORDERS","name":"worker","num_ack_pending":0,"num_redelivered":0,"num_waiting":0,"num_pending":3}`), ""},
	)
}

// TestInspectSeedsDecode keeps the seeds of FuzzInspect within the
// strict grammar, so that each reaches the profile check or the API error
// it was written for.
func TestInspectSeedsDecode(t *testing.T) {
	for i, s := range inspectSeeds(t) {
		var ci consumerInfo
		if err := decodeInfo(s.body, &ci); err != nil {
			t.Errorf("seed %d: %v", i, err)
		}
	}
}

// replaceOnce returns s with from replaced by to, which it must contain.
func replaceOnce(t testing.TB, s, from, to string) []byte {
	t.Helper()
	if !strings.Contains(s, from) {
		t.Fatalf("seed edit %q not found", from)
	}
	return []byte(strings.Replace(s, from, to, 1))
}

// checkAPIError compares a typed API error with the reply's codes.
func checkAPIError(t *testing.T, body []byte, err error) {
	t.Helper()
	var ref refProfile
	if jerr := json.Unmarshal(body, &ref); jerr != nil || ref.Error == nil {
		t.Fatalf("API error %v from a reply without one (encoding/json: %v)", err, jerr)
	}
	var api *APIError
	switch ref.Error.ErrCode {
	case CodeStreamNotFound:
		if !errors.Is(err, ErrStreamNotFound) {
			t.Fatalf("err_code %d gave %v", ref.Error.ErrCode, err)
		}
	case CodeConsumerNotFound:
		if !errors.Is(err, ErrConsumerNotFound) {
			t.Fatalf("err_code %d gave %v", ref.Error.ErrCode, err)
		}
	default:
		if !errors.As(err, &api) || api.Code != ref.Error.Code || api.ErrCode != ref.Error.ErrCode {
			t.Fatalf("codes %d/%d gave %v", ref.Error.Code, ref.Error.ErrCode, err)
		}
	}
}

// referenceMismatches is the profile as the package documents it, read
// from the encoding/json decoding: every field that differs from the
// binding or the profile, in the documented order.
func referenceMismatches(b *Binding, ref *refProfile) []Mismatch {
	var ms []Mismatch
	add := func(field, want, got string) { ms = append(ms, Mismatch{Field: field, Want: want, Got: got}) }
	str := func(field string, v *string, want string) {
		switch {
		case v == nil:
			add(field, want, "absent")
		case *v != want:
			add(field, want, *v)
		}
	}
	num := func(field string, v *int64, want int64) {
		switch {
		case v == nil:
			add(field, strconv.FormatInt(want, 10), "absent")
		case *v != want:
			add(field, strconv.FormatInt(want, 10), strconv.FormatInt(*v, 10))
		}
	}
	entries := func(n int) string { return strconv.Itoa(n) + " entries" }

	str("stream_name", ref.StreamName, b.Stream)
	str("name", ref.Name, b.Consumer)
	c := ref.Config
	if c == nil {
		add("config", "present", "absent")
		return ms
	}
	str("durable_name", c.Durable, b.Consumer)
	// Exactly one filter subject equal to the binding's: filter_subject
	// (an empty one counts as absent) or a single filter_subjects entry.
	single := c.FilterSubject
	if single != nil && *single == "" {
		single = nil
	}
	switch n := len(c.FilterSubjects); {
	case n > 1:
		add("filter_subjects", "one filter subject", entries(n))
	case n == 1 && single != nil:
		add("filter_subjects", "absent", entries(n))
	case n == 1:
		str("filter_subject", &c.FilterSubjects[0], b.FilterSubject)
	default:
		str("filter_subject", single, b.FilterSubject)
	}
	str("ack_policy", c.AckPolicy, "explicit")
	str("replay_policy", c.ReplayPolicy, "instant")
	str("deliver_policy", c.DeliverPolicy, "all")
	num("max_waiting", c.MaxWaiting, 1)
	num("max_ack_pending", c.MaxAckPending, 1)
	num("max_batch", c.MaxBatch, 1)
	num("max_expires", c.MaxExpires, int64(100*time.Millisecond))
	num("max_bytes", c.MaxBytes, int64(b.PayloadCeiling+9216))
	num("ack_wait", c.AckWait, int64(b.AckWait))
	num("max_deliver", c.MaxDeliver, int64(b.MaxDeliver))
	if c.DeliverSubject != nil && *c.DeliverSubject != "" {
		add("deliver_subject", "absent", *c.DeliverSubject)
	}
	if c.HeadersOnly {
		add("headers_only", "false", "true")
	}
	if c.FlowControl {
		add("flow_control", "false", "true")
	}
	if len(c.Backoff) > 0 {
		add("backoff", "absent", entries(len(c.Backoff)))
	}
	if c.PriorityPolicy != nil && *c.PriorityPolicy != "none" {
		add("priority_policy", "none", *c.PriorityPolicy)
	}
	return ms
}

// knownConfigFields are the ConsumerConfig fields of nats-server 2.14.6
// (consumer.go), which the profile check reads or ignores by name.
var knownConfigFields = map[string]bool{
	"durable_name": true, "name": true, "description": true, "deliver_policy": true,
	"opt_start_seq": true, "opt_start_time": true, "ack_policy": true, "ack_wait": true,
	"max_deliver": true, "backoff": true, "filter_subject": true, "filter_subjects": true,
	"replay_policy": true, "rate_limit_bps": true, "sample_freq": true, "max_waiting": true,
	"max_ack_pending": true, "flow_control": true, "headers_only": true, "max_batch": true,
	"max_expires": true, "max_bytes": true, "deliver_subject": true, "deliver_group": true,
	"idle_heartbeat": true, "inactive_threshold": true, "num_replicas": true, "mem_storage": true,
	"direct": true, "sourcing": true, "metadata": true, "pause_until": true,
	"priority_groups": true, "priority_policy": true, "priority_timeout": true,
}

// referenceUnknownSettings reads, with encoding/json's tokenizer, the
// config fields of a reply that knownConfigFields does not list and whose
// value is not null, false, 0, "", [] or {}: the mismatches the package
// documents for them, in reply order.
func referenceUnknownSettings(t *testing.T, body []byte) []Mismatch {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		t.Fatal(err)
	}
	cfg, ok := top["config"]
	if !ok {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(cfg))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("config: %v %v", tok, err)
	}
	var ms []Mismatch
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		key := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		if knownConfigFields[key] {
			continue
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, raw); err != nil {
			t.Fatal(err)
		}
		switch compact.String() {
		case "null", "false", "0", `""`, "[]", "{}":
			continue
		}
		ms = append(ms, Mismatch{Field: referenceName(key), Want: "absent or empty", Got: referenceValue(raw)})
	}
	return ms
}

// referenceName is the documented rendering of an unknown field's name:
// itself when plain printable ASCII, else quoted with
// strconv.QuoteToASCII; cut at 64 bytes.
func referenceName(key string) string {
	cut := len(key) > 64
	if cut {
		key = key[:64]
	}
	plain := key != "" && !strings.ContainsFunc(key, func(r rune) bool {
		return r <= ' ' || r > '~' || r == '"' || r == '\\'
	})
	if !plain {
		key = strconv.QuoteToASCII(key)
	}
	if cut {
		key += "..."
	}
	return key
}

// referenceValue is the documented rendering of an unknown field's value:
// its JSON text up to 64 bytes, else its type and size.
func referenceValue(raw []byte) string {
	if len(raw) <= 64 {
		return string(raw)
	}
	switch raw[0] {
	case '"':
		return "string of " + strconv.Itoa(len(raw)) + " bytes"
	case '[':
		return "array of " + strconv.Itoa(len(raw)) + " bytes"
	case '{':
		return "object of " + strconv.Itoa(len(raw)) + " bytes"
	}
	return "number of " + strconv.Itoa(len(raw)) + " bytes"
}
