package pkgcheck_test

import (
	"testing"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/internal/wire"
	"github.com/latent-systems/latent-nats/parser"
	"github.com/latent-systems/latent-nats/trigger"
)

// TestBoundsAgree is the one list of the relations between bounds of
// different packages. A bound that another package states again is
// derived from its owner (trigger's from internal/jspull and conn,
// refhost's from trigger); what is listed here is what no import can
// derive: two owners side by side (internal/wire and parser import nothing
// of the project), or two bounds of different meaning where one must fit
// the other. If one drifts, a value one package accepts fails in the
// other. The relations of a bound a package keeps unexported are in its
// own tests (trigger's TestUnexportedBoundsAgree and TestDocumentedBounds,
// refhost's TestBoundsFromTrigger).
func TestBoundsAgree(t *testing.T) {
	tests := []struct {
		name      string
		got, want int
		atMost    bool // got <= want; otherwise got == want
	}{
		// What this client publishes it can read back: the header block
		// wire writes is the block parser reads (and the hdr_len the broker
		// announces).
		{"wire.MaxOutboundHeader == parser.MaxHeaderBlock", wire.MaxOutboundHeader, parser.MaxHeaderBlock, false},
		// Every nonce conn accepts in INFO (base64url, at most
		// conn.MaxInfoNonceLen) is one credential signs.
		{"conn.MaxInfoNonceLen <= credential.MaxNonceLen", conn.MaxInfoNonceLen, credential.MaxNonceLen, true},
		// conn hands its payload cap to parser.Limits.MaxPayload.
		{"conn.MaxPayloadLimit <= parser.MaxFramePayload", conn.MaxPayloadLimit, parser.MaxFramePayload, true},
		// A binding's payload ceiling fits a connection's payload cap.
		{"jspull.MaxPayloadCeiling <= conn.MaxPayloadLimit", jspull.MaxPayloadCeiling, conn.MaxPayloadLimit, true},
		// max_bytes leaves room for a full header block besides the payload.
		{"conn.MaxReadHeader <= jspull.MaxBytesOverhead", conn.MaxReadHeader, jspull.MaxBytesOverhead, true},
		// The derived ones, stated once so that a literal put back shows.
		{"trigger.MaxPayloadBytes == jspull.MaxPayloadCeiling", trigger.MaxPayloadBytes, jspull.MaxPayloadCeiling, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ok := tt.got == tt.want || tt.atMost && tt.got < tt.want; !ok {
				t.Errorf("%d, %d: the relation does not hold", tt.got, tt.want)
			}
		})
	}
}
