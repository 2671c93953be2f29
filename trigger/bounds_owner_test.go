package trigger

import (
	"testing"

	"github.com/latent-systems/latent-nats/parser"
)

// TestUnexportedBoundsAgree holds the relations of internal/pkgcheck's
// TestBoundsAgree that involve a bound trigger keeps unexported.
func TestUnexportedBoundsAgree(t *testing.T) {
	tests := []struct {
		name      string
		got, want int
		atMost    bool
	}{
		// A tenant ID is a name the reference host takes (its
		// MaxIdentifierLen is MaxTargetNameLen, checked there).
		{"maxIDLen <= MaxTargetNameLen", maxIDLen, MaxTargetNameLen, true},
		// The derived ones, stated once so that a literal put back shows.
		{"maxControlLineBytes == parser.MaxLine", maxControlLineBytes, parser.MaxLine, false},
		{"maxHeaderBytes == parser.MaxHeaderBlock", maxHeaderBytes, parser.MaxHeaderBlock, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ok := tt.got == tt.want || tt.atMost && tt.got < tt.want; !ok {
				t.Errorf("%d, %d: the relation does not hold", tt.got, tt.want)
			}
		})
	}
}

// TestDocumentedBounds: the exported bounds derived from the pull layer,
// whose owner is internal and so not in the package documentation, state
// their values in their doc comments (limits.go) and in
// docs/CONFIGURATION.md. If one changes, this fails until both texts are
// changed with it.
func TestDocumentedBounds(t *testing.T) {
	tests := []struct {
		name      string
		got, want int
	}{
		{"MaxPayloadBytes", MaxPayloadBytes, 32_768},
		{"minPayloadBytes", minPayloadBytes, 1},
		{"MaxMaxDeliver", MaxMaxDeliver, 16},
		{"minMaxDeliver", minMaxDeliver, 1},
		{"minOperationTimeoutMS", minOperationTimeoutMS, 100},
		{"maxOperationTimeoutMS", maxOperationTimeoutMS, 10_000},
		{"AckWaitMarginMS", AckWaitMarginMS, 1_000},
		{"maxAckWaitMS", maxAckWaitMS, 60_000},
		{"MinNakDelayMS", MinNakDelayMS, 100},
		{"maxNakDelayMS", maxNakDelayMS, 10_000},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %d, documented as %d", tt.name, tt.got, tt.want)
		}
	}
}
