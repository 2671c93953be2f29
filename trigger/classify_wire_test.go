package trigger

import (
	"fmt"
	"testing"

	"github.com/latent-systems/latent-nats/conn"
)

// TestClassifyFraming: a connection's framing failure (conn.ErrFraming,
// which conn reports beside the parser's sentinel) is a protocol failure,
// however it is wrapped; the runtime needs no parser sentinel to say so.
// The memory tests' attack servers check the same through real
// connections (oversized line, header block and payload).
func TestClassifyFraming(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"closed", &conn.ClosedError{Err: conn.ErrFraming}},
		{"wrapped", fmt.Errorf("consumer info: %w", &conn.ClosedError{Err: conn.ErrFraming})},
		{"bare", conn.ErrFraming},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classify(tt.err); got != ClassProtocol {
				t.Errorf("classify(%v) = %v, want %v", tt.err, got, ClassProtocol)
			}
		})
	}
}
