package wasmhost_test

import (
	"testing"

	"github.com/latent-systems/latent-nats/trigger/refhost"
	"github.com/latent-systems/latent-nats/trigger/wasmhost"
)

// TestCeilingFitsTheHost: the largest memory ceiling is a memory the
// reference host can reserve.
func TestCeilingFitsTheHost(t *testing.T) {
	if wasmhost.MaxMemoryPages*wasmhost.PageSize > refhost.MaxMemoryAllocation {
		t.Errorf("MaxMemoryPages (%d) * PageSize = %d bytes, over refhost.MaxMemoryAllocation %d",
			wasmhost.MaxMemoryPages, wasmhost.MaxMemoryPages*wasmhost.PageSize, refhost.MaxMemoryAllocation)
	}
}
