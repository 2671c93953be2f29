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
