package jspull

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/latent-systems/latent-nats/internal/jsonlex"
)

// refInfo is the reference decoding with encoding/json of the fields the
// strict decoder reads (through exactUnmarshal: keys match exactly).
type refInfo struct {
	Type       string      `json:"type"`
	StreamName string      `json:"stream_name"`
	Name       string      `json:"name"`
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
	Config *struct {
		Durable        string   `json:"durable_name"`
		AckPolicy      string   `json:"ack_policy"`
		AckWait        int64    `json:"ack_wait"`
		MaxBytes       int64    `json:"max_bytes"`
		FilterSubject  string   `json:"filter_subject"`
		FilterSubjects []string `json:"filter_subjects"`
		HeadersOnly    bool     `json:"headers_only"`
	} `json:"config"`
}

// FuzzDecodeInfo checks that whatever the strict decoder accepts is valid
// JSON and decodes to the same values with encoding/json read with exact
// keys (fields the decoder does not know are skipped by both), and that
// the decoder never reads outside its input or panics.
func FuzzDecodeInfo(f *testing.F) {
	f.Add([]byte(matchingInfo))
	f.Add([]byte(replicatedInfo))
	f.Add([]byte(strings.Replace(replicatedInfo, `"leader":"latent-node-2",`, ``, 1)))
	f.Add([]byte(pausedInfo))
	f.Add([]byte(strings.NewReplacer(
		`"ts":`, `"future":{"a":[1,{"b":null}]},"Num_Pending":3,"ts":`,
		`"num_replicas":0`, `"num_replicas":0,"future":null,"Ack_Policy":"none","f\u0075ture2":[1]`,
		`"stream_seq":4,`, `"stream_seq":4,"future":1,`,
	).Replace(matchingInfo)))
	f.Add([]byte(`{"type":"io.nats.jetstream.api.v1.consumer_info_response","error":{"code":404,"err_code":10014,"description":"consumer not found"}}`))
	f.Add([]byte(`{"type":"io.nats.jetstream.api.v1.consumer_info_response","stream_name":"S\ud83d\ude00\u003c","num_ack_pending":0,"num_redelivered":0,"num_waiting":0,"num_pending":18446744073709551615}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var ci consumerInfo
		if err := decodeInfo(body, &ci); err != nil {
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid json %q", body)
		}
		var ref refInfo
		if err := exactUnmarshal(body, &ref); err != nil {
			t.Fatalf("accepted %q that encoding/json refuses: %v", body, err)
		}
		if ref.Type != infoResponseType {
			t.Fatalf("type %q accepted", ref.Type)
		}
		if ci.apiErr {
			if ref.Error == nil || int64(ref.Error.Code) != ci.code || int64(ref.Error.ErrCode) != ci.errCode {
				t.Fatalf("error codes differ: %+v vs %d/%d", ref.Error, ci.code, ci.errCode)
			}
			return
		}
		want := Pending{NumPending: ref.NumPending, NumAckPending: ref.NumAck, NumRedelivered: ref.NumRedel, NumWaiting: ref.NumWaiting,
			Leader: ref.Cluster.leader()}
		if ci.pending != want {
			t.Fatalf("pending %+v, encoding/json %+v", ci.pending, want)
		}
		if ci.paused != ref.Paused {
			t.Fatalf("paused %v, encoding/json %v", ci.paused, ref.Paused)
		}
		checkStr(t, "stream_name", ci.streamName, ref.StreamName)
		checkStr(t, "name", ci.name, ref.Name)
		if ci.hasConfig != (ref.Config != nil) {
			t.Fatalf("config presence differs")
		}
		if ref.Config == nil {
			return
		}
		c := &ci.config
		checkStr(t, "durable_name", c.durableName, ref.Config.Durable)
		checkStr(t, "ack_policy", c.ackPolicy, ref.Config.AckPolicy)
		checkStr(t, "filter_subject", c.filterSubject, ref.Config.FilterSubject)
		if c.ackWait.v != ref.Config.AckWait || c.maxBytes.v != ref.Config.MaxBytes {
			t.Fatalf("integers differ")
		}
		if c.headersOnly != ref.Config.HeadersOnly || c.numFilters != len(ref.Config.FilterSubjects) {
			t.Fatalf("headers_only or filter count differ")
		}
		if c.numFilters > 0 {
			checkStr(t, "filter_subjects[0]", c.firstFilter, ref.Config.FilterSubjects[0])
		}
	})
}

// refCluster is the reference decoding of the "cluster" state.
type refCluster struct {
	Leader string `json:"leader"`
}

// leader is Pending.Leader read from the reference: no "cluster" state,
// or one that names a leader.
func (c *refCluster) leader() bool { return c == nil || c.Leader != "" }

func checkStr(t *testing.T, field string, v jstr, want string) {
	t.Helper()
	got := ""
	if v.present {
		got = decodeString(v.raw, v.esc)
	}
	if got != want || !utf8.ValidString(got) {
		t.Fatalf("%s = %q, encoding/json %q", field, got, want)
	}
	if v.present && !jsonlex.Equal(v.raw, v.esc, want) {
		t.Fatalf("%s: jsonlex.Equal disagrees with decodeString", field)
	}
}

// exactUnmarshal decodes data into the struct v points to the way
// encoding/json does, except that a key sets a field only when it equals
// the field's json name exactly (encoding/json also takes a key that
// differs in case). Struct pointer fields are decoded the same way.
func exactUnmarshal(data []byte, v any) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	rv := reflect.ValueOf(v).Elem()
	rt := rv.Type()
	for i := range rt.NumField() {
		f := rt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		raw, ok := m[name]
		if !ok {
			continue
		}
		fv := rv.Field(i)
		if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
			if string(raw) == "null" {
				continue
			}
			p := reflect.New(f.Type.Elem())
			if err := exactUnmarshal(raw, p.Interface()); err != nil {
				return err
			}
			fv.Set(p)
			continue
		}
		if err := json.Unmarshal(raw, fv.Addr().Interface()); err != nil {
			return err
		}
	}
	return nil
}
