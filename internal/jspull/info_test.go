package jspull

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// matchingInfo is a consumer-info reply as nats-server 2.14.6 writes it for
// validBinding's consumer (field order and metadata as the server emits).
const matchingInfo = `{"type":"io.nats.jetstream.api.v1.consumer_info_response","stream_name":"ORDERS","name":"worker","created":"2026-01-02T03:04:05.123456789Z","config":{"durable_name":"worker","name":"worker","deliver_policy":"all","ack_policy":"explicit","ack_wait":2000000000,"max_deliver":3,"filter_subject":"orders.new","replay_policy":"instant","max_waiting":1,"max_ack_pending":1,"headers_only":false,"max_batch":1,"max_expires":100000000,"max_bytes":10240,"num_replicas":0,"metadata":{"_nats.created.level":"4","_nats.created.version":"2.14.6","_nats.level":"4","_nats.req.level":"0","_nats.ver":"2.14.6"}},"delivered":{"consumer_seq":4,"stream_seq":4,"last_active":"2026-01-02T03:04:06.1Z"},"ack_floor":{"consumer_seq":3,"stream_seq":3,"last_active":"2026-01-02T03:04:06.2Z"},"num_ack_pending":1,"num_redelivered":2,"num_waiting":0,"num_pending":7,"ts":"2026-01-02T03:04:07.5Z"}`

// infoWith returns matchingInfo with top-level and config fields replaced
// (a nil value deletes the field). Keys come out sorted, which the decoder
// must not care about.
func infoWith(t *testing.T, top, config map[string]any) []byte {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(matchingInfo))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	cfg := m["config"].(map[string]any)
	for k, v := range config {
		if v == nil {
			delete(cfg, k)
			continue
		}
		cfg[k] = v
	}
	for k, v := range top {
		if v == nil {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func inspectBody(b Binding, body []byte) (Pending, []Mismatch, error) {
	var ci consumerInfo
	if err := decodeInfo(body, &ci); err != nil {
		return Pending{}, nil, err
	}
	if ci.apiErr {
		return Pending{}, nil, ci.infoError()
	}
	return ci.pending, checkProfile(&b, &ci), nil
}

func TestDecodeMatchingInfo(t *testing.T) {
	p, ms, err := inspectBody(validBinding(), []byte(matchingInfo))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Mismatch(nil), ms); diff != "" {
		t.Errorf("mismatches (-want +got):\n%s", diff)
	}
	want := Pending{NumPending: 7, NumAckPending: 1, NumRedelivered: 2, NumWaiting: 0, Leader: true}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
}

func TestProfileMismatches(t *testing.T) {
	tests := []struct {
		name   string
		top    map[string]any
		config map[string]any
		want   []Mismatch
	}{
		{"key order does not matter", nil, nil, nil},
		{"stream", map[string]any{"stream_name": "OTHER"}, nil, []Mismatch{{"stream_name", "ORDERS", "OTHER"}}},
		{"stream absent", map[string]any{"stream_name": nil}, nil, []Mismatch{{"stream_name", "ORDERS", "absent"}}},
		{"name", map[string]any{"name": "other"}, nil, []Mismatch{{"name", "worker", "other"}}},
		{"config absent", map[string]any{"config": nil}, nil, []Mismatch{{"config", "present", "absent"}}},
		{"not durable", nil, map[string]any{"durable_name": nil}, []Mismatch{{"durable_name", "worker", "absent"}}},
		{"other durable", nil, map[string]any{"durable_name": "x"}, []Mismatch{{"durable_name", "worker", "x"}}},
		{"other filter", nil, map[string]any{"filter_subject": "orders.old"}, []Mismatch{{"filter_subject", "orders.new", "orders.old"}}},
		{"wildcard filter", nil, map[string]any{"filter_subject": "orders.*"}, []Mismatch{{"filter_subject", "orders.new", "orders.*"}}},
		{"no filter", nil, map[string]any{"filter_subject": nil}, []Mismatch{{"filter_subject", "orders.new", "absent"}}},
		{"empty filter", nil, map[string]any{"filter_subject": ""}, []Mismatch{{"filter_subject", "orders.new", "absent"}}},
		{"one filter in filter_subjects", nil, map[string]any{"filter_subject": nil, "filter_subjects": []string{"orders.new"}}, nil},
		{"other filter in filter_subjects", nil, map[string]any{"filter_subject": nil, "filter_subjects": []string{"orders.old"}}, []Mismatch{{"filter_subject", "orders.new", "orders.old"}}},
		{"several filters", nil, map[string]any{"filter_subject": nil, "filter_subjects": []string{"orders.new", "orders.old"}}, []Mismatch{{"filter_subjects", "one filter subject", "2 entries"}}},
		{"both filter forms", nil, map[string]any{"filter_subjects": []string{"orders.new"}}, []Mismatch{{"filter_subjects", "absent", "1 entries"}}},
		{"ack none", nil, map[string]any{"ack_policy": "none"}, []Mismatch{{"ack_policy", "explicit", "none"}}},
		{"ack all", nil, map[string]any{"ack_policy": "all"}, []Mismatch{{"ack_policy", "explicit", "all"}}},
		{"ack case", nil, map[string]any{"ack_policy": "Explicit"}, []Mismatch{{"ack_policy", "explicit", "Explicit"}}},
		{"replay original", nil, map[string]any{"replay_policy": "original"}, []Mismatch{{"replay_policy", "instant", "original"}}},
		{"deliver new", nil, map[string]any{"deliver_policy": "new"}, []Mismatch{{"deliver_policy", "all", "new"}}},
		{"max waiting default", nil, map[string]any{"max_waiting": 512}, []Mismatch{{"max_waiting", "1", "512"}}},
		{"max waiting absent", nil, map[string]any{"max_waiting": nil}, []Mismatch{{"max_waiting", "1", "absent"}}},
		{"max ack pending", nil, map[string]any{"max_ack_pending": 1000}, []Mismatch{{"max_ack_pending", "1", "1000"}}},
		{"max ack pending unlimited", nil, map[string]any{"max_ack_pending": -1}, []Mismatch{{"max_ack_pending", "1", "-1"}}},
		{"max batch", nil, map[string]any{"max_batch": 2}, []Mismatch{{"max_batch", "1", "2"}}},
		{"max batch absent", nil, map[string]any{"max_batch": nil}, []Mismatch{{"max_batch", "1", "absent"}}},
		{"max expires", nil, map[string]any{"max_expires": 1000000000}, []Mismatch{{"max_expires", "100000000", "1000000000"}}},
		{"max bytes one less", nil, map[string]any{"max_bytes": 10239}, []Mismatch{{"max_bytes", "10240", "10239"}}},
		{"max bytes one more", nil, map[string]any{"max_bytes": 10241}, []Mismatch{{"max_bytes", "10240", "10241"}}},
		{"ack wait", nil, map[string]any{"ack_wait": 30000000000}, []Mismatch{{"ack_wait", "2000000000", "30000000000"}}},
		{"ack wait absent", nil, map[string]any{"ack_wait": nil}, []Mismatch{{"ack_wait", "2000000000", "absent"}}},
		{"max deliver", nil, map[string]any{"max_deliver": -1}, []Mismatch{{"max_deliver", "3", "-1"}}},
		{"push", nil, map[string]any{"deliver_subject": "push.here"}, []Mismatch{{"deliver_subject", "absent", "push.here"}}},
		{"headers only", nil, map[string]any{"headers_only": true}, []Mismatch{{"headers_only", "false", "true"}}},
		{"flow control", nil, map[string]any{"flow_control": true}, []Mismatch{{"flow_control", "false", "true"}}},
		{"backoff", nil, map[string]any{"backoff": []int64{1000000000, 2000000000}}, []Mismatch{{"backoff", "absent", "2 entries"}}},
		{"empty backoff", nil, map[string]any{"backoff": []int64{}}, nil},
		{"priority policy none", nil, map[string]any{"priority_policy": "none"}, nil},
		{"priority policy pinned", nil, map[string]any{"priority_policy": "pinned_client"}, []Mismatch{{"priority_policy", "none", "pinned_client"}}},
		{"escaped names", map[string]any{"stream_name": "ORD<&>"}, map[string]any{"filter_subject": "o.\u2028"}, []Mismatch{
			{"stream_name", "ORDERS", "ORD<&>"},
			{"filter_subject", "orders.new", "o.\u2028"},
		}},
		{"every mismatch at once", map[string]any{"stream_name": "S2", "name": "n2"}, map[string]any{
			"durable_name": "d2", "filter_subject": "f2", "ack_policy": "none", "replay_policy": "original",
			"deliver_policy": "last", "max_waiting": 2, "max_ack_pending": 3, "max_batch": 4, "max_expires": 5,
			"max_bytes": 6, "ack_wait": 7, "max_deliver": 8, "deliver_subject": "d", "headers_only": true,
			"flow_control": true, "backoff": []int{1}, "priority_policy": "overflow",
		}, []Mismatch{
			{"stream_name", "ORDERS", "S2"},
			{"name", "worker", "n2"},
			{"durable_name", "worker", "d2"},
			{"filter_subject", "orders.new", "f2"},
			{"ack_policy", "explicit", "none"},
			{"replay_policy", "instant", "original"},
			{"deliver_policy", "all", "last"},
			{"max_waiting", "1", "2"},
			{"max_ack_pending", "1", "3"},
			{"max_batch", "1", "4"},
			{"max_expires", "100000000", "5"},
			{"max_bytes", "10240", "6"},
			{"ack_wait", "2000000000", "7"},
			{"max_deliver", "3", "8"},
			{"deliver_subject", "absent", "d"},
			{"headers_only", "false", "true"},
			{"flow_control", "false", "true"},
			{"backoff", "absent", "1 entries"},
			{"priority_policy", "none", "overflow"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ms, err := inspectBody(validBinding(), infoWith(t, tt.top, tt.config))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ms); diff != "" {
				t.Errorf("mismatches (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInfoAPIErrors(t *testing.T) {
	tests := []struct {
		name string
		body string
		want error
	}{
		{"consumer not found", `{"type":"io.nats.jetstream.api.v1.consumer_info_response","error":{"code":404,"err_code":10014,"description":"consumer not found"}}`, ErrConsumerNotFound},
		{"stream not found", `{"type":"io.nats.jetstream.api.v1.consumer_info_response","error":{"code":404,"err_code":10059,"description":"stream not found"}}`, ErrStreamNotFound},
		{"jetstream not enabled", `{"type":"io.nats.jetstream.api.v1.consumer_info_response","error":{"code":503,"err_code":10039,"description":"jetstream not enabled for account"}}`, ErrAPI},
		{"error without err_code", `{"type":"io.nats.jetstream.api.v1.consumer_info_response","error":{"code":500,"description":"x"}}`, ErrAPI},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := inspectBody(validBinding(), []byte(tt.body))
			if !errors.Is(err, tt.want) {
				t.Fatalf("error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestAPIErrorCarriesCodes(t *testing.T) {
	body := `{"type":"io.nats.jetstream.api.v1.consumer_info_response","error":{"code":503,"err_code":10039,"description":"secret broker text"}}`
	_, _, err := inspectBody(validBinding(), []byte(body))
	var ae *APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error = %v, want *APIError", err)
	}
	if diff := cmp.Diff(&APIError{Code: 503, ErrCode: 10039}, ae); diff != "" {
		t.Errorf("APIError (-want +got):\n%s", diff)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("error message %q carries broker text", err.Error())
	}
}

// TestMalformedInfo is the should-fail table of the consumer-info grammar.
func TestMalformedInfo(t *testing.T) {
	const typ = `"type":"io.nats.jetstream.api.v1.consumer_info_response"`
	const counters = `"num_ack_pending":0,"num_redelivered":0,"num_waiting":0,"num_pending":0`
	tests := []struct {
		name string
		body string
	}{
		{"empty", ``},
		{"not an object", `[]`},
		{"null", `null`},
		{"truncated", matchingInfo[:len(matchingInfo)-1]},
		{"trailing data", matchingInfo + `{}`},
		{"trailing garbage", matchingInfo + ` x`},
		{"missing type", `{` + counters + `}`},
		{"other type", `{"type":"io.nats.jetstream.api.v1.stream_info_response",` + counters + `}`},
		{"type not a string", `{"type":1,` + counters + `}`},
		{"missing counters", `{` + typ + `}`},
		{"missing num_pending", `{` + typ + `,"num_ack_pending":0,"num_redelivered":0,"num_waiting":0}`},
		{"unknown top field twice", `{` + typ + `,` + counters + `,"extra":1,"extra":2}`},
		{"unknown top field twice via escape", `{` + typ + `,` + counters + `,"extra":1,"e\u0078tra":2}`},
		{"unknown config field twice", `{` + typ + `,` + counters + `,"config":{"extra":0,"extra":0}}`},
		{"unknown sequence field twice", `{` + typ + `,` + counters + `,"delivered":{"seq":1,"seq":1}}`},
		{"unknown error field twice", `{` + typ + `,"error":{"code":404,"text":"x","text":"y"}}`},
		{"unknown top field not json", `{` + typ + `,` + counters + `,"extra":tru}`},
		{"unknown config field not json", `{` + typ + `,` + counters + `,"config":{"extra":[1,]}}`},
		{"unknown sequence field not json", `{` + typ + `,` + counters + `,"ack_floor":{"seq":01}}`},
		{"unknown top field too deep", `{` + typ + `,` + counters + `,"extra":` + strings.Repeat(`[`, maxJSONDepth+1) + strings.Repeat(`]`, maxJSONDepth+1) + `}`},
		{"unknown config field too deep", `{` + typ + `,` + counters + `,"config":{"extra":` + strings.Repeat(`[`, maxJSONDepth) + strings.Repeat(`]`, maxJSONDepth) + `}}`},
		{"paused not a bool", `{` + typ + `,` + counters + `,"paused":1}`},
		{"paused twice", `{` + typ + `,` + counters + `,"paused":false,"paused":true}`},
		{"duplicate top field", `{` + typ + `,` + counters + `,"stream_name":"A","stream_name":"ORDERS"}`},
		{"duplicate type", `{` + typ + `,` + typ + `,` + counters + `}`},
		{"duplicate config field", `{` + typ + `,` + counters + `,"config":{"ack_policy":"none","ack_policy":"explicit"}}`},
		{"duplicate via escape", `{` + typ + `,` + counters + `,"stream_name":"A","stream\u005fname":"B"}`},
		{"negative counter", `{` + typ + `,"num_ack_pending":-1,"num_redelivered":0,"num_waiting":0,"num_pending":0}`},
		{"negative num_pending", `{` + typ + `,"num_ack_pending":0,"num_redelivered":0,"num_waiting":0,"num_pending":-1}`},
		{"float counter", `{` + typ + `,"num_ack_pending":1.0,"num_redelivered":0,"num_waiting":0,"num_pending":0}`},
		{"exponent counter", `{` + typ + `,"num_ack_pending":1e0,"num_redelivered":0,"num_waiting":0,"num_pending":0}`},
		{"leading zero", `{` + typ + `,"num_ack_pending":01,"num_redelivered":0,"num_waiting":0,"num_pending":0}`},
		{"num_pending overflow", `{` + typ + `,"num_ack_pending":0,"num_redelivered":0,"num_waiting":0,"num_pending":18446744073709551616}`},
		{"int64 overflow", `{` + typ + `,` + counters + `,"config":{"ack_wait":9223372036854775808}}`},
		{"counter as string", `{` + typ + `,"num_ack_pending":"0","num_redelivered":0,"num_waiting":0,"num_pending":0}`},
		{"counter null", `{` + typ + `,"num_ack_pending":null,"num_redelivered":0,"num_waiting":0,"num_pending":0}`},
		{"config null", `{` + typ + `,` + counters + `,"config":null}`},
		{"checked string null", `{` + typ + `,` + counters + `,"stream_name":null}`},
		{"bool as string", `{` + typ + `,` + counters + `,"config":{"headers_only":"true"}}`},
		{"filters not strings", `{` + typ + `,` + counters + `,"config":{"filter_subjects":[1]}}`},
		{"backoff not numbers", `{` + typ + `,` + counters + `,"config":{"backoff":["1s"]}}`},
		{"invalid utf-8", `{` + typ + `,` + counters + `,"stream_name":"` + "\xff" + `"}`},
		{"lone high surrogate", `{` + typ + `,` + counters + `,"stream_name":"\ud800"}`},
		{"lone low surrogate", `{` + typ + `,` + counters + `,"stream_name":"\udc00"}`},
		{"bad escape", `{` + typ + `,` + counters + `,"stream_name":"\x"}`},
		{"short unicode escape", `{` + typ + `,` + counters + `,"stream_name":"\u12"}`},
		{"control byte in string", `{` + typ + `,` + counters + `,"stream_name":"a` + "\n" + `b"}`},
		{"unterminated string", `{` + typ + `,` + counters + `,"stream_name":"abc`},
		{"missing colon", `{` + typ + `,` + counters + `,"stream_name" "A"}`},
		{"trailing comma", `{` + typ + `,` + counters + `,}`},
		{"single quotes", `{'type':1}`},
		{"bare word", `{` + typ + `,` + counters + `,"created":nope}`},
		{"negative sequence", `{` + typ + `,` + counters + `,"delivered":{"consumer_seq":-1}}`},
		{"duplicate sequence field", `{` + typ + `,` + counters + `,"ack_floor":{"stream_seq":1,"stream_seq":2}}`},
		{"sequence info not an object", `{` + typ + `,` + counters + `,"delivered":[]}`},
		{"bad number in skipped field", `{` + typ + `,` + counters + `,"cluster":{"lag":-}}`},
		{"too deep", `{` + typ + `,` + counters + `,"priority_groups":` + strings.Repeat(`[`, maxJSONDepth+1) + strings.Repeat(`]`, maxJSONDepth+1) + `}`},
		{"error without code", `{` + typ + `,"error":{"err_code":10014}}`},
		{"error duplicate code", `{` + typ + `,"error":{"code":404,"code":500}}`},
		{"error not an object", `{` + typ + `,"error":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ci consumerInfo
			err := decodeInfo([]byte(tt.body), &ci)
			var ie *InfoError
			if !errors.Is(err, ErrMalformedInfo) || !errors.As(err, &ie) {
				t.Fatalf("decodeInfo() = %v, want an *InfoError", err)
			}
		})
	}
}

func TestInfoDepthLimit(t *testing.T) {
	const typ = `"type":"io.nats.jetstream.api.v1.consumer_info_response"`
	const counters = `"num_ack_pending":0,"num_redelivered":0,"num_waiting":0,"num_pending":0`
	// The top-level object is depth 0 and "priority_groups" is skipped
	// from depth 1, so maxJSONDepth-1 brackets reach exactly maxJSONDepth.
	at := `{` + typ + `,` + counters + `,"priority_groups":` + strings.Repeat(`[`, maxJSONDepth) + strings.Repeat(`]`, maxJSONDepth) + `}`
	past := `{` + typ + `,` + counters + `,"priority_groups":` + strings.Repeat(`[`, maxJSONDepth+1) + strings.Repeat(`]`, maxJSONDepth+1) + `}`
	var ci consumerInfo
	if err := decodeInfo([]byte(at), &ci); err != nil {
		t.Errorf("at the depth limit: %v", err)
	}
	if err := decodeInfo([]byte(past), &ci); !errors.Is(err, ErrMalformedInfo) {
		t.Errorf("past the depth limit: %v, want ErrMalformedInfo", err)
	}
}

func TestInfoSizeLimit(t *testing.T) {
	pad := func(n int) []byte {
		b := []byte(matchingInfo)
		return append(b, bytes.Repeat([]byte(" "), n-len(b))...)
	}
	var ci consumerInfo
	if err := decodeInfo(pad(MaxInfoSize), &ci); err != nil {
		t.Errorf("at MaxInfoSize: %v", err)
	}
	if err := decodeInfo(pad(MaxInfoSize+1), &ci); !errors.Is(err, ErrInfoTooLarge) {
		t.Errorf("at MaxInfoSize+1: %v, want ErrInfoTooLarge", err)
	}
}

func TestInfoEscapes(t *testing.T) {
	// Keys and values with escapes decode to the same thing as without.
	body := strings.NewReplacer(
		`"stream_name":"ORDERS"`, `"stream\u005Fname":"\u004FRDERS"`,
		`"filter_subject":"orders.new"`, `"filter_subject":"orders\/new"`,
	).Replace(matchingInfo)
	b := validBinding()
	b.FilterSubject = "orders/new"
	_, ms, err := inspectBody(b, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Mismatch(nil), ms); diff != "" {
		t.Errorf("mismatches (-want +got):\n%s", diff)
	}
	// A surrogate pair names a non-BMP character.
	b.Stream = "S\U0001F600"
	body = strings.Replace(matchingInfo, `"stream_name":"ORDERS"`, `"stream_name":"S\ud83d\ude00"`, 1)
	_, ms, err = inspectBody(b, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []Mismatch{{"filter_subject", "orders/new", "orders.new"}}
	if diff := cmp.Diff(want, ms); diff != "" {
		t.Errorf("mismatches (-want +got):\n%s", diff)
	}
}

func TestPendingEmpty(t *testing.T) {
	tests := []struct {
		name string
		p    Pending
		want bool
	}{
		{"nothing", Pending{}, true},
		{"redelivered count alone", Pending{NumRedelivered: 3}, true},
		{"waiting requests alone", Pending{NumWaiting: 1}, true},
		{"undelivered", Pending{NumPending: 1}, false},
		{"awaiting ack or redelivery", Pending{NumAckPending: 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Empty(); got != tt.want {
				t.Errorf("Empty() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestInspectDecodeDoesNotAllocate(t *testing.T) {
	b := validBinding()
	body := []byte(matchingInfo)
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

func TestProfileErrorMessage(t *testing.T) {
	err := error(&ProfileError{Mismatches: []Mismatch{{"ack_policy", "explicit", "none"}, {"stream_name", "ORDERS", "SECRETISH"}}})
	if got, want := err.Error(), "pull: consumer does not match the profile: ack_policy, stream_name"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, ErrProfileMismatch) {
		t.Errorf("%v does not match ErrProfileMismatch", err)
	}
}

// TestInfoEveryPrefixFails: no strict prefix of a valid reply decodes.
func TestInfoEveryPrefixFails(t *testing.T) {
	for i := range len(matchingInfo) {
		var ci consumerInfo
		if err := decodeInfo([]byte(matchingInfo[:i]), &ci); err == nil {
			t.Fatalf("prefix of %d bytes decoded", i)
		}
	}
}

// TestInfoEveryKeyCaseMutation: keys match exactly, unlike encoding/json.
// Changing the case of any key of a valid reply makes it a key the decoder
// does not know: the reply decodes exactly as if that key had any other
// unknown name (state skipped, a config setting checked for emptiness),
// never as the field it resembles.
func TestInfoEveryKeyCaseMutation(t *testing.T) {
	b := validBinding()
	keys, malformed, mismatched := 0, 0, 0
	for i := 0; i < len(matchingInfo); i++ {
		// A key is a string followed by ':'; upper-case its first letter.
		if matchingInfo[i] != '"' || i+1 >= len(matchingInfo) || matchingInfo[i+1] < 'a' || matchingInfo[i+1] > 'z' {
			continue
		}
		end := strings.IndexByte(matchingInfo[i+1:], '"') + i + 1
		if end+1 >= len(matchingInfo) || matchingInfo[end+1] != ':' {
			continue
		}
		keys++
		key := matchingInfo[i+1 : end]
		upper := string(key[0]-('a'-'A')) + key[1:]
		mutated := matchingInfo[:i+1] + upper + matchingInfo[end:]
		renamed := matchingInfo[:i+1] + "zz_" + upper + matchingInfo[end:]
		gotP, gotMs, gotErr := inspectBody(b, []byte(mutated))
		wantP, wantMs, wantErr := inspectBody(b, []byte(renamed))
		for j := range wantMs {
			if wantMs[j].Field == "zz_"+upper {
				wantMs[j].Field = upper
			}
		}
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && !errors.Is(gotErr, ErrMalformedInfo)) {
			t.Errorf("key %q upper-cased: error %v, renamed: %v", key, gotErr, wantErr)
			continue
		}
		if gotErr != nil {
			malformed++
			continue
		}
		if diff := cmp.Diff(wantMs, gotMs); diff != "" {
			t.Errorf("key %q upper-cased: mismatches (-renamed +upper-cased):\n%s", key, diff)
		}
		if wantP != gotP {
			t.Errorf("key %q upper-cased: pending %+v, renamed %+v", key, gotP, wantP)
		}
		if len(gotMs) > 0 {
			mismatched++
		}
		i = end
	}
	// The type and the four counters are required; every profile field
	// (and the config fields themselves) turn into mismatches.
	if keys < 30 || malformed != 5 || mismatched < 15 {
		t.Fatalf("%d keys mutated: %d malformed, %d with mismatches", keys, malformed, mismatched)
	}
}
