package conformance_test

import (
	"encoding/json"
	"testing"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
)

// sysConnzReply is the part of a system service's CONNZ answer checked here.
type sysConnzReply struct {
	Data *struct {
		NumConnections *int `json:"num_connections"`
	} `json:"data"`
}

// TestSystemServiceReplyEmptyReplyToken pins the bug where replies of the
// broker's system services could not be read: nats-server delivers them with
// a present but empty reply, written as an empty token (two spaces between
// sid and size), which the parser refused as malformed, so every request to
// a $SYS.REQ service closed the connection.
func TestSystemServiceReplyEmptyReplyToken(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{"acme"}})
	creds, err := b.System()
	if err != nil {
		t.Fatalf("system creds: %v", err)
	}
	tests := []struct {
		name    string
		subject string
	}{
		{"server ping CONNZ", "$SYS.REQ.SERVER.PING.CONNZ"},
		{"system account CONNZ", "$SYS.REQ.ACCOUNT." + creds.Account + ".CONNZ"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := connDial(t, connConfig(t, b, creds))
			r, err := connRequest(t, c, tt.subject)
			if err != nil {
				t.Fatalf("request %s: %v", tt.subject, err)
			}
			if r.Status != 0 || len(r.ReplyTo) != 0 || r.Forwarded {
				t.Errorf("reply status %d, reply-to %q, forwarded %v; want 0, empty, false", r.Status, r.ReplyTo, r.Forwarded)
			}
			var got sysConnzReply
			if err := json.Unmarshal(r.Payload, &got); err != nil {
				t.Fatalf("decoding the CONNZ reply (%d bytes): %v", len(r.Payload), err)
			}
			if got.Data == nil || got.Data.NumConnections == nil {
				t.Fatalf("CONNZ reply lacks data.num_connections: %s", r.Payload)
			}
			if n := *got.Data.NumConnections; n < 1 {
				t.Errorf("num_connections = %d, want >= 1 (this connection)", n)
			}
		})
	}
}
