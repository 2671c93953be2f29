package conn

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/internal/wire"
)

func TestParseInfo(t *testing.T) {
	tests := []struct {
		name    string
		info    string
		want    serverInfo
		wantErr error
	}{
		{"broker 2.14.6",
			`{"server_id":"N","version":"2.14.6","proto":1,"host":"0.0.0.0","port":4222,"headers":true,"auth_required":true,"tls_required":true,"max_payload":1048576,"jetstream":true,"client_id":5,"nonce":"abcDEF012-_xyz9","api_lvl":4}`,
			serverInfo{Proto: 1, Version: "2.14.6", Headers: true, MaxPayload: 1048576, Nonce: "abcDEF012-_xyz9", JetStream: true}, nil},
		{"a node of a cluster", `{"proto":1,"headers":true,"max_payload":10,"cluster":"latent-cluster","cluster_dynamic":false}`,
			serverInfo{Proto: 1, Headers: true, MaxPayload: 10, Cluster: "latent-cluster"}, nil},
		{"lame duck", `{"proto":1,"headers":true,"max_payload":10,"ldm":true}`,
			serverInfo{Proto: 1, Headers: true, MaxPayload: 10, LameDuck: true}, nil},
		{"connect_urls ignored", `{"proto":1,"headers":true,"max_payload":10,"connect_urls":["8.8.8.8:4222"],"host":"evil.example"}`,
			serverInfo{Proto: 1, Headers: true, MaxPayload: 10}, nil},
		{"no headers", `{"proto":1,"headers":false,"max_payload":10}`, serverInfo{}, ErrUnsupportedServer},
		{"proto 0", `{"proto":0,"headers":true,"max_payload":10}`, serverInfo{}, ErrUnsupportedServer},
		{"no max payload", `{"proto":1,"headers":true}`, serverInfo{}, ErrMalformedInfo},
		{"negative max payload", `{"proto":1,"headers":true,"max_payload":-1}`, serverInfo{}, ErrMalformedInfo},
		{"nonce with quote", `{"proto":1,"headers":true,"max_payload":10,"nonce":"a\"b"}`, serverInfo{}, ErrMalformedInfo},
		{"nonce at limit", `{"proto":1,"headers":true,"max_payload":10,"nonce":"` + string(make64('n')) + `"}`,
			serverInfo{Proto: 1, Headers: true, MaxPayload: 10, Nonce: string(make64('n'))}, nil},
		{"nonce past limit", `{"proto":1,"headers":true,"max_payload":10,"nonce":"` + string(make64('n')) + `n"}`, serverInfo{}, ErrMalformedInfo},
		{"not json", `{"proto":1,`, serverInfo{}, ErrMalformedInfo},
		{"wrong type", `{"proto":"1","headers":true,"max_payload":10}`, serverInfo{}, ErrMalformedInfo},
		{"keys matched with their case", `{"PROTO":1,"Headers":true,"MAX_PAYLOAD":10}`, serverInfo{}, ErrMalformedInfo},
		{"a key in capitals is not ldm", `{"proto":1,"headers":true,"max_payload":10,"LDM":true}`,
			serverInfo{Proto: 1, Headers: true, MaxPayload: 10}, nil},
		{"key given twice", `{"proto":1,"headers":true,"max_payload":10,"max_payload":1048576}`, serverInfo{}, ErrMalformedInfo},
		{"unknown key given twice", `{"proto":1,"headers":true,"max_payload":10,"x":1,"x":2}`, serverInfo{}, ErrMalformedInfo},
		{"invalid utf-8 in an unknown key's value", "{\"proto\":1,\"headers\":true,\"max_payload\":10,\"server_name\":\"\xff\"}", serverInfo{}, ErrMalformedInfo},
		{"fraction", `{"proto":1,"headers":true,"max_payload":10.5}`, serverInfo{}, ErrMalformedInfo},
		{"exponent", `{"proto":1,"headers":true,"max_payload":1e3}`, serverInfo{}, ErrMalformedInfo},
		{"max payload past int64", `{"proto":1,"headers":true,"max_payload":9223372036854775808}`, serverInfo{}, ErrMalformedInfo},
		{"max payload at int64", `{"proto":1,"headers":true,"max_payload":9223372036854775807}`,
			serverInfo{Proto: 1, Headers: true, MaxPayload: 1<<63 - 1}, nil},
		{"proto past its bound", `{"proto":65537,"headers":true,"max_payload":10}`, serverInfo{}, ErrMalformedInfo},
		{"nested deep in an unknown key", `{"proto":1,"headers":true,"max_payload":10,"x":[[[[[[[[1]]]]]]]]}`, serverInfo{}, ErrMalformedInfo},
		{"nested at the bound", `{"proto":1,"headers":true,"max_payload":10,"x":[[[[[[[1]]]]]]]}`,
			serverInfo{Proto: 1, Headers: true, MaxPayload: 10}, nil},
		{"not an object", `[1]`, serverInfo{}, ErrMalformedInfo},
		{"trailing data", `{"proto":1,"headers":true,"max_payload":10} x`, serverInfo{}, ErrMalformedInfo},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseInfo([]byte(tt.info))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("info (-want +got):\n%s", diff)
			}
		})
	}
}

func make64(b byte) []byte {
	out := make([]byte, MaxInfoNonceLen)
	for i := range out {
		out[i] = b
	}
	return out
}

func TestSendsConnectInfo(t *testing.T) {
	tests := []struct {
		version string
		want    bool
	}{
		{"2.14.6", true}, {"2.12.0", true}, {"2.12.0-RC.1", true}, {"3.0.0", true},
		{"2.11.9", false}, {"2.10.4", false}, {"1.99.0", false},
		{"", false}, {"2", false}, {"x.y.z", false}, {"2.x", false},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			if got := sendsConnectInfo(tt.version); got != tt.want {
				t.Errorf("sendsConnectInfo(%q) = %v, want %v", tt.version, got, tt.want)
			}
		})
	}
}

// TestAppendHandshakeLimit pads the password so that CONNECT, SUB and PING
// come to exactly MaxConnectLen bytes, then one more.
func TestAppendHandshakeLimit(t *testing.T) {
	const inbox = "_INBOX.0000000000000000000000.*"
	base := wire.Connect{User: "u", Pass: "x", Protocol: 1, Headers: true, NoResponders: true}
	buf := make([]byte, 0, writeBufferSize(defaultMaxPayload))
	out, err := appendHandshake(buf, &base, inbox)
	if err != nil {
		t.Fatalf("appendHandshake: %v", err)
	}
	pad := MaxConnectLen - len(out)
	for _, tt := range []struct {
		name    string
		extra   int
		wantErr error
	}{
		{"at the limit", pad, nil},
		{"past the limit", pad + 1, ErrTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := base
			c.Pass += strings.Repeat("x", tt.extra)
			out, err := appendHandshake(buf, &c, inbox)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if len(out) != 0 || bytes.Contains(buf[:cap(buf)], []byte("xxxx")) {
					t.Errorf("refused CONNECT left %d bytes or the password in the buffer", len(out))
				}
				return
			}
			if len(out) != MaxConnectLen || !bytes.HasSuffix(out, []byte("\r\nSUB "+inbox+" 1\r\nPING\r\n")) {
				t.Errorf("got %d bytes ending %q", len(out), out[max(0, len(out)-48):])
			}
		})
	}
}

// TestAsyncInfo: a later INFO is read by the same strict path; only ldm,
// in its exact case, says lame duck.
func TestAsyncInfo(t *testing.T) {
	for _, tt := range []struct {
		info    string
		want    bool
		wantErr error
	}{
		{`{"ldm":true}`, true, nil},
		{`{"ldm":false,"connect_urls":["127.0.0.1:4223"]}`, false, nil},
		{`{"LDM":true}`, false, nil},
		{`{"ldm":"true"}`, false, ErrMalformedInfo},
		{`{"ldm":true,"ldm":false}`, false, ErrMalformedInfo},
		{`{"ldm":tru}`, false, ErrMalformedInfo},
	} {
		got, err := asyncInfo([]byte(tt.info))
		if got != tt.want || !errors.Is(err, tt.wantErr) {
			t.Errorf("asyncInfo(%s) = %v, %v; want %v, %v", tt.info, got, err, tt.want, tt.wantErr)
		}
	}
}
