package provision

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/trigger"
)

func testPullBinding() jspull.Binding {
	return jspull.Binding{
		Stream: "ORDERS", Consumer: "c0", FilterSubject: "acme.orders.created",
		PayloadCeiling: 4096, AckWait: 30 * time.Second, MaxDeliver: 5,
	}
}

// TestDesiredConsumerJSON pins the exact consumer-create body: every
// setting of the profile and nothing else.
func TestDesiredConsumerJSON(t *testing.T) {
	b := testPullBinding()
	got, err := json.Marshal(consumerCreateRequest{Stream: b.Stream, Config: DesiredConsumer(b), Action: consumerActionCreate})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"stream_name":"ORDERS","config":{"durable_name":"c0","deliver_policy":"all","ack_policy":"explicit",` +
		`"ack_wait":30000000000,"max_deliver":5,"filter_subject":"acme.orders.created","replay_policy":"instant",` +
		`"max_waiting":1,"max_ack_pending":1,"max_batch":1,"max_expires":100000000,"max_bytes":13312},"action":"create"}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("consumer create body (-want +got):\n%s", diff)
	}
}

func TestDesiredStream(t *testing.T) {
	a := testPullBinding()
	b := a
	b.Consumer, b.FilterSubject, b.PayloadCeiling = "c1", "acme.orders.paid", jspull.MaxPayloadCeiling
	c := a
	c.Consumer = "c2" // same filter as a
	got := DesiredStream("ORDERS", []jspull.Binding{b, a, c}, StreamOptions{Retention: RetentionLimits, MaxMsgs: 10, MaxBytes: NoLimit})
	want := StreamConfig{
		Name: "ORDERS", Subjects: []string{"acme.orders.created", "acme.orders.paid"}, Retention: "limits",
		MaxConsumers: -1, MaxMsgs: 10, MaxBytes: -1, MaxMsgsPerSubject: -1, MaxMsgSize: jspull.MaxPayloadCeiling,
		Discard: "new", Storage: "file", Replicas: 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DesiredStream (-want +got):\n%s", diff)
	}
}

func TestSubjectMatches(t *testing.T) {
	tests := []struct {
		pattern, subject string
		want             bool
	}{
		{"a.b.c", "a.b.c", true},
		{"a.b.c", "a.b.d", false},
		{"a.b", "a.b.c", false},
		{"a.b.c", "a.b", false},
		{"a.*.c", "a.b.c", true},
		{"a.*.c", "a.b.d", false},
		{"a.*", "a.b.c", false},
		{"*", "a", true},
		{"*", "a.b", false},
		{"a.>", "a.b", true},
		{"a.>", "a.b.c.d", true},
		{"a.>", "a", false},
		{">", "a.b", true},
		{"a.b*", "a.bc", false}, // '*' inside a token is literal
		{"a.b*", "a.b*", true},
	}
	for _, tc := range tests {
		t.Run(tc.pattern+" "+tc.subject, func(t *testing.T) {
			if got := subjectMatches(tc.pattern, tc.subject); got != tc.want {
				t.Errorf("subjectMatches(%q, %q) = %v, want %v", tc.pattern, tc.subject, got, tc.want)
			}
		})
	}
}

func TestCheckStream(t *testing.T) {
	a := testPullBinding()
	b := a
	b.Consumer, b.FilterSubject, b.PayloadCeiling = "c1", "acme.orders.paid", 1024
	tests := []struct {
		name       string
		st         streamState
		mismatches []jspull.Mismatch
		warnings   []jspull.Mismatch
	}{
		{"exact", streamState{subjects: []string{"acme.orders.created", "acme.orders.paid"}, maxMsgSize: 1024, replicas: 3}, nil, nil},
		{"wildcard", streamState{subjects: []string{"acme.orders.*"}, maxMsgSize: 1000, replicas: 3}, nil, nil},
		{"one filter not captured", streamState{subjects: []string{"acme.orders.created"}, maxMsgSize: 1024, replicas: 3},
			[]jspull.Mismatch{{Field: "subjects", Want: "a subject capturing acme.orders.paid", Got: "acme.orders.created"}}, nil},
		{"no subjects", streamState{maxMsgSize: 1024, replicas: 3}, []jspull.Mismatch{
			{Field: "subjects", Want: "a subject capturing acme.orders.created", Got: "none"},
			{Field: "subjects", Want: "a subject capturing acme.orders.paid", Got: "none"},
		}, nil},
		{"fewer replicas", streamState{subjects: []string{"acme.>"}, maxMsgSize: 1024, replicas: 1},
			[]jspull.Mismatch{{Field: "num_replicas", Want: "3", Got: "1"}}, nil},
		{"more replicas", streamState{subjects: []string{"acme.>"}, maxMsgSize: 1024, replicas: 5},
			[]jspull.Mismatch{{Field: "num_replicas", Want: "3", Got: "5"}}, nil},
		{"max_msg_size above one ceiling", streamState{subjects: []string{"acme.>"}, maxMsgSize: 1025, replicas: 3}, nil,
			[]jspull.Mismatch{{Field: "max_msg_size", Want: "at most 1024 (binding consumer c1)", Got: "1025"}}},
		{"no max_msg_size", streamState{subjects: []string{"acme.>"}, maxMsgSize: -1, replicas: 3}, nil, []jspull.Mismatch{
			{Field: "max_msg_size", Want: "at most 4096 (binding consumer c0)", Got: "no limit"},
			{Field: "max_msg_size", Want: "at most 1024 (binding consumer c1)", Got: "no limit"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ms, ws := checkStream(tc.st, []jspull.Binding{a, b}, 3)
			if diff := cmp.Diff(tc.mismatches, ms, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("mismatches (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.warnings, ws, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDesiredReplicas: the stream gets StreamOptions' replica count (zero
// as DefaultReplicas); the consumer's num_replicas is omitted from
// DesiredConsumer (the stream's count) and written when set.
func TestDesiredReplicas(t *testing.T) {
	b := testPullBinding()
	o := DefaultOptions().Stream
	for _, tc := range []struct{ set, want int }{{0, DefaultReplicas}, {1, 1}, {3, 3}, {MaxReplicas, MaxReplicas}} {
		o.Replicas = tc.set
		if got := DesiredStream("S", []jspull.Binding{b}, o).Replicas; got != tc.want {
			t.Errorf("DesiredStream with Replicas %d: num_replicas %d, want %d", tc.set, got, tc.want)
		}
	}
	cfg := DesiredConsumer(b)
	body, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Replicas != 0 || bytes.Contains(body, []byte("num_replicas")) {
		t.Errorf("DesiredConsumer sets num_replicas: %s", body)
	}
	cfg.Replicas = 3
	if body, err = json.Marshal(cfg); err != nil || !bytes.Contains(body, []byte(`"num_replicas":3`)) {
		t.Errorf("consumer config with 3 replicas: %s, %v", body, err)
	}
}

// TestReplicasOf reads a consumer's replica count from its info: the
// config's num_replicas, the stream's when it is 0 or absent; a reply that
// is not a consumer info with a config is malformed.
func TestReplicasOf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		info    string
		want    int
		wantErr error
	}{
		{"set", `{"config":{"num_replicas":3},"cluster":{"leader":"n1","replicas":[{"name":"n2"},{"name":"n3"}]}}`, 3, nil},
		{"one", `{"config":{"num_replicas":1}}`, 1, nil},
		{"zero is the stream's", `{"config":{"num_replicas":0}}`, 5, nil},
		{"absent is the stream's", `{"config":{}}`, 5, nil},
		{"negative", `{"config":{"num_replicas":-1}}`, 0, ErrMalformedReply},
		{"not a number", `{"config":{"num_replicas":"3"}}`, 0, ErrMalformedReply},
		{"not json", `{"config":`, 0, ErrMalformedReply},
		{"no config", `{"type":"io.nats.jetstream.api.v1.consumer_info_response"}`, 0, ErrMalformedReply},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := replicasOf([]byte(tc.info), 5)
			if got != tc.want || !errors.Is(err, tc.wantErr) {
				t.Errorf("replicasOf = %d, %v; want %d, %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestParsePubAck(t *testing.T) {
	tests := []struct {
		name    string
		reply   conn.Reply
		want    PubAck
		wantErr error
		errCode int
	}{
		{"ack", conn.Reply{Payload: []byte(`{"stream":"S","seq":3}`)}, PubAck{Stream: "S", Seq: 3}, nil, 0},
		{"duplicate with domain", conn.Reply{Payload: []byte(`{"stream":"S","seq":3,"domain":"hub","duplicate":true}`)},
			PubAck{Stream: "S", Seq: 3, Domain: "hub", Duplicate: true}, nil, 0},
		{"api error", conn.Reply{Payload: []byte(`{"error":{"code":400,"err_code":10054,"description":"message size exceeds maximum allowed"}}`)},
			PubAck{}, ErrAPI, 10054},
		{"no stream", conn.Reply{Status: 503}, PubAck{}, ErrNoStream, 0},
		{"other status", conn.Reply{Status: 408}, PubAck{}, ErrUnexpectedStatus, 0},
		{"not json", conn.Reply{Payload: []byte(`+OK`)}, PubAck{}, ErrMalformedReply, 0},
		{"empty", conn.Reply{}, PubAck{}, ErrMalformedReply, 0},
		{"unknown field", conn.Reply{Payload: []byte(`{"stream":"S","seq":3,"extra":1}`)}, PubAck{}, ErrMalformedReply, 0},
		{"trailing data", conn.Reply{Payload: []byte(`{"stream":"S","seq":3}{}`)}, PubAck{}, ErrMalformedReply, 0},
		{"sequence zero", conn.Reply{Payload: []byte(`{"stream":"S","seq":0}`)}, PubAck{}, ErrMalformedReply, 0},
		{"no stream name", conn.Reply{Payload: []byte(`{"seq":1}`)}, PubAck{}, ErrMalformedReply, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parsePubAck(tc.reply)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("error = %v, want %v", err, tc.wantErr)
			}
			var ae *APIError
			if tc.errCode != 0 && (!errors.As(err, &ae) || ae.ErrCode != tc.errCode) {
				t.Errorf("error = %v, want an *APIError with err_code %d", err, tc.errCode)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PubAck (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAPIErrorHidesBrokerText makes sure the broker's description is not
// carried.
func TestAPIErrorHidesBrokerText(t *testing.T) {
	var j streamInfoReply
	payload := []byte(`{"error":{"code":500,"err_code":10052,"description":"SECRET broker words"}}`)
	if err := replyJSON(conn.Reply{Payload: payload}, &j); err != nil {
		t.Fatal(err)
	}
	err := j.Error.err()
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("error %q carries the broker's description", err)
	}
	var ae *APIError
	if !errors.As(err, &ae) || *ae != (APIError{Code: 500, ErrCode: 10052}) || !errors.Is(err, ErrAPI) {
		t.Errorf("error = %#v, want APIError{500, 10052} matching ErrAPI", err)
	}
}

func TestDescribeErrCode(t *testing.T) {
	for _, code := range []int{
		jspull.CodeConsumerNotFound, errCodeInsufficientRes, errCodeMaxConsumers, errCodeMaxStreams,
		errCodeNotEnabled, errCodeStreamConfig, errCodeMsgTooLarge, errCodeStreamExists,
		jspull.CodeStreamNotFound, errCodeSubjectsOverlap, errCodeStoreFailed, errCodeFilterNotSubset,
		errCodeWQConsumerNotUnique, errCodeMaxBytesRequired, errCodeConsumerExists,
	} {
		if describeErrCode(code) == "" {
			t.Errorf("err_code %d has no description", code)
		}
	}
	if d := describeErrCode(1); d != "" {
		t.Errorf("unknown code described as %q", d)
	}
}

func TestReplyStatus(t *testing.T) {
	tests := []struct {
		name string
		r    conn.Reply
		want error
	}{
		{"plain", conn.Reply{Payload: []byte(`{}`)}, nil},
		{"no responders", conn.Reply{Status: 503}, ErrNoJetStream},
		{"other", conn.Reply{Status: 404}, ErrUnexpectedStatus},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var v struct{}
			if err := replyJSON(tc.r, &v); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("replyJSON = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestOptionsBounds checks each option at its bounds and one past them.
func TestOptionsBounds(t *testing.T) {
	with := func(edit func(*Options)) Options {
		o := DefaultOptions()
		edit(&o)
		return o
	}
	tests := []struct {
		name string
		opts Options
		ok   bool
	}{
		{"defaults", DefaultOptions(), true},
		{"timeout zero means default", with(func(o *Options) { o.Timeout = 0 }), true},
		{"timeout at MinTimeout", with(func(o *Options) { o.Timeout = MinTimeout }), true},
		{"timeout below MinTimeout", with(func(o *Options) { o.Timeout = MinTimeout - 1 }), false},
		{"timeout at MaxTimeout", with(func(o *Options) { o.Timeout = MaxTimeout }), true},
		{"timeout past MaxTimeout", with(func(o *Options) { o.Timeout = MaxTimeout + 1 }), false},
		{"max_msgs 1", with(func(o *Options) { o.Stream.MaxMsgs = 1 }), true},
		{"max_msgs 0", with(func(o *Options) { o.Stream.MaxMsgs = 0 }), false},
		{"max_msgs below NoLimit", with(func(o *Options) { o.Stream.MaxMsgs = NoLimit - 1 }), false},
		{"max_bytes 1", with(func(o *Options) { o.Stream.MaxBytes = 1 }), true},
		{"max_bytes 0", with(func(o *Options) { o.Stream.MaxBytes = 0 }), false},
		{"max_bytes below NoLimit", with(func(o *Options) { o.Stream.MaxBytes = NoLimit - 1 }), false},
		{"no mode", with(func(o *Options) { o.Mode = 0 }), false},
		{"assert", with(func(o *Options) { o.Mode = ModeAssert }), true},
		{"no retention", with(func(o *Options) { o.Stream.Retention = 0 }), false},
		{"limits", with(func(o *Options) { o.Stream.Retention = RetentionLimits }), true},
		{"replicas zero means DefaultReplicas", with(func(o *Options) { o.Stream.Replicas = 0 }), true},
		{"replicas 1", with(func(o *Options) { o.Stream.Replicas = 1 }), true},
		{"replicas at MaxReplicas", with(func(o *Options) { o.Stream.Replicas = MaxReplicas }), true},
		{"replicas past MaxReplicas", with(func(o *Options) { o.Stream.Replicas = MaxReplicas + 1 }), false},
		{"replicas negative", with(func(o *Options) { o.Stream.Replicas = -1 }), false},
		{"dead-letter max age at MinCaptureMaxAge", with(func(o *Options) { o.Capture.DeadLetterMaxAge = MinCaptureMaxAge }), true},
		{"dead-letter max age below MinCaptureMaxAge", with(func(o *Options) { o.Capture.DeadLetterMaxAge = MinCaptureMaxAge - 1 }), false},
		{"dead-letter max bytes 1", with(func(o *Options) { o.Capture.DeadLetterMaxBytes = 1 }), true},
		{"dead-letter max bytes 0", with(func(o *Options) { o.Capture.DeadLetterMaxBytes = 0 }), false},
		{"dead-letter max bytes NoLimit", with(func(o *Options) { o.Capture.DeadLetterMaxBytes = NoLimit }), false},
		{"no dead letters: their limits unchecked", with(func(o *Options) { o.Capture = CaptureOptions{} }), true},
		{"copies with the default limits", with(func(o *Options) { o.Capture.Copies = true }), true},
		{"copies max age below MinCaptureMaxAge", with(func(o *Options) { o.Capture.Copies, o.Capture.CopyMaxAge = true, MinCaptureMaxAge-1 }), false},
		{"copies max bytes 0", with(func(o *Options) { o.Capture.Copies, o.Capture.CopyMaxBytes = true, 0 }), false},
		{"no copies: their limits unchecked", with(func(o *Options) { o.Capture.CopyMaxAge, o.Capture.CopyMaxBytes = 0, 0 }), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.validate()
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrInvalidOptions)) {
				t.Errorf("validate() = %v, want ok %v (else ErrInvalidOptions)", err, tc.ok)
			}
		})
	}
}

// TestEnums lists every value of each enumeration.
func TestEnums(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{ResourceTenant.String(), "tenant"},
		{ResourceStream.String(), "stream"},
		{ResourceConsumer.String(), "consumer"},
		{ResourceCapture.String(), "capture"},
		{Resource(0).String(), "Resource(0)"},
		{ActionCreated.String(), "created"},
		{ActionAsserted.String(), "asserted"},
		{ActionMismatch.String(), "mismatch"},
		{ActionMissing.String(), "missing"},
		{ActionSkipped.String(), "skipped"},
		{ActionFailed.String(), "failed"},
		{Action(0).String(), "Action(0)"},
		{ModeCreate.String(), "create"},
		{ModeAssert.String(), "assert"},
		{Mode(0).String(), "Mode(0)"},
		{RetentionWorkQueue.String(), "workqueue"},
		{RetentionLimits.String(), "limits"},
		{Retention(0).String(), "Retention(0)"},
		{FormatServer.String(), "server"},
		{FormatJSON.String(), "json"},
		{FormatNSC.String(), "nsc"},
		{Format(0).String(), "Format(0)"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("String() = %q, want %q", tc.got, tc.want)
		}
	}
	for a := ActionCreated; a <= ActionFailed; a++ {
		if want := a == ActionCreated || a == ActionAsserted; a.OK() != want {
			t.Errorf("%v.OK() = %v, want %v", a, a.OK(), want)
		}
	}
	for _, s := range []string{"workqueue", "limits"} {
		if r, err := ParseRetention(s); err != nil || r.String() != s {
			t.Errorf("ParseRetention(%q) = %v, %v", s, r, err)
		}
	}
	for _, s := range []string{"server", "json", "nsc"} {
		if f, err := ParseFormat(s); err != nil || f.String() != s {
			t.Errorf("ParseFormat(%q) = %v, %v", s, f, err)
		}
	}
	if _, err := ParseRetention("interest"); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("ParseRetention(interest) = %v, want ErrInvalidOptions", err)
	}
	if _, err := ParseFormat("yaml"); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("ParseFormat(yaml) = %v, want ErrInvalidOptions", err)
	}
}

// TestShellQuote: a quoted word is one literal shell word, a single quote
// in it included.
func TestShellQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"$JS.ACK.*.*.S.C.>", `'$JS.ACK.*.*.S.C.>'`},
		{"a'b", `'a'\''b'`},
		{"", "''"},
	} {
		if got := shellQuote(tc.in); got != tc.want {
			t.Errorf("shellQuote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestReportWriteTo(t *testing.T) {
	rep := Report{Results: []Result{
		{Tenant: "acme", Resource: ResourceStream, Stream: "ORDERS", Action: ActionCreated,
			Warnings: []jspull.Mismatch{{Field: "max_msg_size", Want: "at most 10", Got: "20"}}},
		{Tenant: "acme", Resource: ResourceConsumer, Stream: "ORDERS", Consumer: "c1", Binding: "b1", Action: ActionMismatch,
			Mismatches: []jspull.Mismatch{{Field: "max_deliver", Want: "5", Got: "2"}}, Err: ErrMismatch},
		{Tenant: "globex", Resource: ResourceTenant, Action: ActionFailed, Err: ErrNoJetStream},
	}}
	var b bytes.Buffer
	if _, err := rep.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	want := "acme: stream ORDERS: created\n" +
		"    warning: max_msg_size: want at most 10, got 20\n" +
		"acme: consumer ORDERS/c1 (binding b1): mismatch, left unchanged\n" +
		"    max_deliver: want 5, got 2\n" +
		"globex: tenant: failed\n" +
		"    error: provision: jetstream not available\n" +
		"summary: 1 created, 0 asserted, 1 mismatch, 0 missing, 0 skipped, 1 failed\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if rep.OK() {
		t.Errorf("OK() = true with a mismatch and a failure")
	}
}

func TestConnConfig(t *testing.T) {
	d := trigger.Destination{
		Address: netip.MustParseAddrPort("127.0.0.1:4222"), ServerName: "broker.latent.test",
		RootCAsPEM: testCAPEM(t), AllowNonPublic: true, SPKISHA256: strings.Repeat("0a", 32),
	}
	cfg, err := ConnConfig(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != d.Address || cfg.AllowNonPublic != d.Address.Addr() || cfg.ServerName != d.ServerName ||
		cfg.SPKIPin != [32]byte(bytes.Repeat([]byte{0x0a}, 32)) || cfg.Roots == nil || cfg.Name != ClientName {
		t.Errorf("ConnConfig = %+v", cfg)
	}
	public := d
	public.AllowNonPublic = false
	if cfg, err := ConnConfig(public, nil); err != nil || cfg.AllowNonPublic.IsValid() {
		t.Errorf("without opt-in: AllowNonPublic %v, %v; want none", cfg.AllowNonPublic, err)
	}
	for _, tc := range []struct {
		name string
		edit func(*trigger.Destination)
	}{
		{"bad pin", func(d *trigger.Destination) { d.SPKISHA256 = "zz" }},
		{"short pin", func(d *trigger.Destination) { d.SPKISHA256 = "0a0a" }},
		{"bad roots", func(d *trigger.Destination) { d.RootCAsPEM = "junk" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := d
			tc.edit(&bad)
			if _, err := ConnConfig(bad, nil); !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("ConnConfig = %v, want ErrInvalidOptions", err)
			}
		})
	}
}

// permsConfig is a valid configuration of two tenants, one with a dotted
// ID, with no broker behind it.
func permsConfig(t *testing.T) trigger.Config {
	t.Helper()
	d := trigger.Destination{
		Address: netip.MustParseAddrPort("127.0.0.1:4222"), ServerName: "broker.latent.test",
		RootCAsPEM: testCAPEM(t), AllowNonPublic: true,
	}
	cfg := trigger.Config{
		Profile: trigger.ProfileName, PollIntervalMS: 100, MaxControlLineBytes: 4096, MaxHeaderBytes: 4096,
		Tenants: []trigger.Tenant{
			{ID: "acme", ProviderID: "p1", Destination: d},
			{ID: "acme.eu", ProviderID: "p2", Destination: d},
		},
		Bindings: []trigger.Binding{
			binding("b0", "acme", "S", "c0", "acme.s"),
			binding("b1", "acme.eu", "S", "c1", "acme.eu.s"),
			binding("b2", "acme", "S", "c2", "acme.t"),
		},
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("test configuration: %v", err)
	}
	return cfg
}

// TestDerivePermissions: each tenant subscribes to its own private inbox
// only, "_INBOX.<tenant>.>" with the tenant ID's dots written '~', and
// publishes exactly what jspull derives for its bindings.
func TestDerivePermissions(t *testing.T) {
	cfg := permsConfig(t)
	got, err := DerivePermissions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	acme, err := jspull.DerivePermissions("_INBOX.acme", PullBinding(cfg.Bindings[0]), PullBinding(cfg.Bindings[2]))
	if err != nil {
		t.Fatal(err)
	}
	eu, err := jspull.DerivePermissions("_INBOX.acme~eu", PullBinding(cfg.Bindings[1]))
	if err != nil {
		t.Fatal(err)
	}
	want := []TenantPermissions{
		{Tenant: "acme", ProviderID: "p1", Address: "127.0.0.1:4222", InboxPrefix: "_INBOX.acme", Bindings: []string{"b0", "b2"}, Permissions: acme},
		{Tenant: "acme.eu", ProviderID: "p2", Address: "127.0.0.1:4222", InboxPrefix: "_INBOX.acme~eu", Bindings: []string{"b1"}, Permissions: eu},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("DerivePermissions (-want +got):\n%s", diff)
	}
	for _, p := range got {
		if p.InboxPrefix != trigger.InboxPrefix(p.Tenant) {
			t.Errorf("tenant %s: inbox prefix %q, want trigger.InboxPrefix = %q", p.Tenant, p.InboxPrefix, trigger.InboxPrefix(p.Tenant))
		}
		if diff := cmp.Diff([]string{p.InboxPrefix + ".>"}, p.Permissions.Subscribe); diff != "" {
			t.Errorf("tenant %s subscribe (-want +got):\n%s", p.Tenant, diff)
		}
	}
}

// TestServerConfigJSON: the permissions block of a user entry, which reads
// back as the permissions.
func TestServerConfigJSON(t *testing.T) {
	p, err := jspull.DerivePermissions("_INBOX", jspull.Binding{
		Stream: "ORDERS", Consumer: "worker", FilterSubject: "orders.new",
		PayloadCeiling: 1024, AckWait: 2 * time.Second, MaxDeliver: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ServerConfigJSON(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"publish":{"allow":["$JS.ACK.*.*.ORDERS.worker.>","$JS.ACK.ORDERS.worker.>","$JS.API.CONSUMER.INFO.ORDERS.worker","$JS.API.CONSUMER.MSG.NEXT.ORDERS.worker"]},"subscribe":{"allow":["_INBOX.>"]}}`
	if string(got) != want {
		t.Errorf("ServerConfigJSON() =\n%s\nwant\n%s", got, want)
	}
	var back struct {
		Publish   struct{ Allow []string } `json:"publish"`
		Subscribe struct{ Allow []string } `json:"subscribe"`
	}
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, jspull.Permissions{Publish: back.Publish.Allow, Subscribe: back.Subscribe.Allow}); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// TestServerConfigJSONQuoting: '"' is escaped; a control byte, which the
// server's lexer cannot read back, is refused.
func TestServerConfigJSONQuoting(t *testing.T) {
	got, err := ServerConfigJSON(jspull.Permissions{Publish: []string{`a"b`}, Subscribe: nil})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"publish":{"allow":["a\"b"]},"subscribe":{"allow":[]}}`; string(got) != want {
		t.Errorf("ServerConfigJSON() = %s, want %s", got, want)
	}
	_, err = ServerConfigJSON(jspull.Permissions{Publish: []string{"a\x01b"}})
	if !errors.Is(err, jspull.ErrInvalidSubject) {
		t.Errorf("control byte: %v, want jspull.ErrInvalidSubject", err)
	}
}

// TestWritePermissions pins every format: each tenant's own inbox prefix
// and subscribe permission, nothing account-wide; the JSON's scope and the
// nsc commands hold exactly the grants.
func TestWritePermissions(t *testing.T) {
	ps, err := DerivePermissions(permsConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	var server bytes.Buffer
	if err := WritePermissions(&server, FormatServer, ps); err != nil {
		t.Fatal(err)
	}
	acmeConf, err := ServerConfigJSON(ps[0].Permissions)
	if err != nil {
		t.Fatal(err)
	}
	euConf, err := ServerConfigJSON(ps[1].Permissions)
	if err != nil {
		t.Fatal(err)
	}
	wantServer := "# Permissions of the trigger runtime's user on each tenant's broker\n" +
		"# (each tenant's private inbox prefix); place each line in that user's entry.\n" +
		"# tenant \"acme\", provider \"p1\", 127.0.0.1:4222, inbox prefix \"_INBOX.acme\", bindings: b0, b2\n" +
		"permissions: " + string(acmeConf) + "\n" +
		"# tenant \"acme.eu\", provider \"p2\", 127.0.0.1:4222, inbox prefix \"_INBOX.acme~eu\", bindings: b1\n" +
		"permissions: " + string(euConf) + "\n"
	if diff := cmp.Diff(wantServer, server.String()); diff != "" {
		t.Errorf("server format (-want +got):\n%s", diff)
	}
	if strings.Contains(server.String(), `"_INBOX.>"`) {
		t.Errorf("server format grants the account-wide inbox:\n%s", server.String())
	}

	var js bytes.Buffer
	if err := WritePermissions(&js, FormatJSON, ps); err != nil {
		t.Fatal(err)
	}
	var doc AccountDocument
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatalf("json format: %v\n%s", err, js.String())
	}
	type user struct {
		Tenant, Inbox string
		Sub           []string
	}
	var got []user
	for _, u := range doc.Tenants {
		got = append(got, user{u.Tenant, u.InboxPrefix, u.Permissions.Sub.Allow})
	}
	want := []user{{"acme", "_INBOX.acme", []string{"_INBOX.acme.>"}}, {"acme.eu", "_INBOX.acme~eu", []string{"_INBOX.acme~eu.>"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("json format (-want +got):\n%s", diff)
	}
	// Beside each tenant's grants, the same grants as a signing key's
	// user scope, as jwt/v2 encodes it in an account JWT.
	for i, u := range doc.Tenants {
		if u.Scope == nil {
			t.Fatalf("tenant %s: no scope", u.Tenant)
		}
		if diff := cmp.Diff(Scope(ps[i]), u.Scope); diff != "" {
			t.Errorf("tenant %s scope (-want +got):\n%s", u.Tenant, diff)
		}
		if diff := cmp.Diff(u.Permissions, u.Scope.Template.Permissions); diff != "" {
			t.Errorf("tenant %s: scope template differs from the grants (-grants +template):\n%s", u.Tenant, diff)
		}
	}
	if !strings.Contains(js.String(), `"kind": "user_scope"`) || !strings.Contains(js.String(), `"role": "latent-trigger-acme.eu"`) {
		t.Errorf("json format lacks the scope's kind or role:\n%s", js.String())
	}

	var nsc bytes.Buffer
	if err := WritePermissions(&nsc, FormatNSC, ps); err != nil {
		t.Fatal(err)
	}
	var acmeArgs strings.Builder
	for _, s := range ps[0].Permissions.Publish {
		acmeArgs.WriteString(" \\\n  --allow-pub '" + s + "'")
	}
	wantNSC := "# The trigger runtime's user on each tenant's broker, signed by a scoped signing\n" +
		"# key of the tenant's account: the key's scope holds the permissions and the\n" +
		"# user JWT none, so its CONNECT stays small whatever the number of bindings.\n" +
		"# Per tenant set ACCOUNT to its account and SK to a signing key of it\n" +
		"# (nsc edit account --name \"$ACCOUNT\" --sk generate prints one).\n" +
		"# tenant \"acme\", provider \"p1\", 127.0.0.1:4222, inbox prefix \"_INBOX.acme\", bindings: b0, b2\n" +
		"nsc edit signing-key --account \"$ACCOUNT\" --sk \"$SK\" --role 'latent-trigger-acme'" + acmeArgs.String() +
		" \\\n  --allow-sub '_INBOX.acme.>'\n" +
		"nsc add user --account \"$ACCOUNT\" --name 'latent-trigger-acme' -K 'latent-trigger-acme'\n" +
		"# tenant \"acme.eu\", provider \"p2\", 127.0.0.1:4222, inbox prefix \"_INBOX.acme~eu\", bindings: b1\n" +
		"nsc edit signing-key --account \"$ACCOUNT\" --sk \"$SK\" --role 'latent-trigger-acme.eu'" +
		" \\\n  --allow-pub '$JS.ACK.*.*.S.c1.>'" +
		" \\\n  --allow-pub '$JS.ACK.S.c1.>'" +
		" \\\n  --allow-pub '$JS.API.CONSUMER.INFO.S.c1'" +
		" \\\n  --allow-pub '$JS.API.CONSUMER.MSG.NEXT.S.c1'" +
		" \\\n  --allow-sub '_INBOX.acme~eu.>'\n" +
		"nsc add user --account \"$ACCOUNT\" --name 'latent-trigger-acme.eu' -K 'latent-trigger-acme.eu'\n"
	if diff := cmp.Diff(wantNSC, nsc.String()); diff != "" {
		t.Errorf("nsc format (-want +got):\n%s", diff)
	}
	if len(ps[0].Permissions.Publish) != 8 {
		t.Errorf("acme publishes %d subjects, want 8 (four per binding)", len(ps[0].Permissions.Publish))
	}

	if err := WritePermissions(&js, Format(0), ps); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("WritePermissions(Format(0)) = %v, want ErrInvalidOptions", err)
	}
}

// TestScopeRefusesTemplateAndComma: a binding whose stream, consumer or
// filter subject holds "{{" (valid asset and subject bytes) would become a
// scope template the server expands into another subject: CheckScope
// refuses it, the JSON omits that tenant's scope and says why, and the
// nsc commands are refused before anything is written; ',' is refused
// for nsc only (it splits --allow-pub on it) and keeps the JSON scope.
func TestScopeRefusesTemplateAndComma(t *testing.T) {
	for _, tc := range []struct {
		name, consumer string
		json, nsc      bool // scope written
	}{
		{"template", "c{{name()}}", false, false},
		{"comma", "c,d", true, false},
		{"plain", "c-d", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := permsConfig(t)
			cfg.Bindings[1].Consumer = tc.consumer
			if err := cfg.Validate(); err != nil {
				t.Fatalf("configuration: %v", err)
			}
			ps, err := DerivePermissions(cfg)
			if err != nil {
				t.Fatal(err)
			}
			eu := ps[1] // acme.eu holds binding b1
			if err := CheckScope(eu, false); (err == nil) != tc.json || (err != nil && !errors.Is(err, ErrScopeSubject)) {
				t.Errorf("CheckScope(json) = %v", err)
			}
			if err := CheckScope(ps[0], true); err != nil {
				t.Errorf("CheckScope of the other tenant: %v", err)
			}
			var js bytes.Buffer
			if err := WritePermissions(&js, FormatJSON, ps); err != nil {
				t.Fatal(err)
			}
			var doc AccountDocument
			if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if u := doc.Tenants[1]; (u.Scope != nil) != tc.json || (u.ScopeRefused == "") != tc.json {
				t.Errorf("json tenant %s: scope %v, refused %q", u.Tenant, u.Scope != nil, u.ScopeRefused)
			}
			if doc.Tenants[0].Scope == nil {
				t.Errorf("json: the other tenant lost its scope")
			}
			var nsc bytes.Buffer
			err = WritePermissions(&nsc, FormatNSC, ps)
			if tc.nsc != (err == nil) || (err != nil && (!errors.Is(err, ErrScopeSubject) || nsc.Len() != 0)) {
				t.Errorf("nsc: %v, %d bytes written", err, nsc.Len())
			}
			if err != nil && strings.Contains(err.Error(), tc.consumer) {
				t.Errorf("nsc error %q echoes the subject", err)
			}
		})
	}
}

// TestCreateTimeout: a create of a replicated asset waits at least
// ReplicatedCreateTimeout, of one replica the client's timeout.
func TestCreateTimeout(t *testing.T) {
	for _, tc := range []struct {
		timeout  time.Duration
		replicas int
		want     time.Duration
	}{
		{DefaultTimeout, 1, DefaultTimeout},
		{DefaultTimeout, 0, DefaultTimeout},
		{DefaultTimeout, 3, ReplicatedCreateTimeout},
		{MaxTimeout, 5, max(MaxTimeout, ReplicatedCreateTimeout)},
	} {
		c := &Client{timeout: tc.timeout}
		if got := c.createTimeout(tc.replicas); got != tc.want {
			t.Errorf("timeout %v, %d replicas: %v, want %v", tc.timeout, tc.replicas, got, tc.want)
		}
	}
}

// TestPermissionErrors: a permission violation at connect or on a request
// keeps the broker's kind and gains the sentinel whose row
// docs/TROUBLESHOOTING.md#provisioning explains; other errors pass as they
// are.
func TestPermissionErrors(t *testing.T) {
	perm := &conn.ServerError{Kind: conn.KindPermission}
	atConnect := &conn.HandshakeError{Step: conn.StepConnect, Err: perm}
	other := &conn.ServerError{Kind: conn.KindAuthorization}
	tests := []struct {
		name        string
		err         error
		wantDenied  bool
		wantAtInbox bool
	}{
		{"permission on a request", perm, true, false},
		{"permission at connect", atConnect, true, true},
		{"permission at info", &conn.HandshakeError{Step: conn.StepInfo, Err: perm}, true, false},
		{"authorization at connect", &conn.HandshakeError{Step: conn.StepConnect, Err: other}, false, false},
		{"deadline", context.DeadlineExceeded, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := denied(tc.err, "$JS.API.STREAM.INFO.S")
			got := []bool{errors.Is(err, ErrRequestDenied), errors.Is(err, tc.err), inboxDenied(tc.err)}
			if diff := cmp.Diff([]bool{tc.wantDenied, true, tc.wantAtInbox}, got); diff != "" {
				t.Errorf("[ErrRequestDenied, cause kept, inbox denied] (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTroubleshootingRow: the page and heading the permission errors point
// at exist.
func TestTroubleshootingRow(t *testing.T) {
	page, heading, ok := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(troubleshooting, "(see "), ")"), "#")
	if !ok {
		t.Fatalf("troubleshooting = %q, want a page and an anchor", troubleshooting)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", page))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, []byte("\n## "+strings.ToUpper(heading[:1])+heading[1:]+"\n")) {
		t.Errorf("%s has no heading for #%s", page, heading)
	}
}
