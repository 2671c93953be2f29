package refhost_test

import (
	"testing"

	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// TestBoundsFromTrigger: the codec's bound is the profile's largest
// payload ceiling, and the host's names are a binding's target names (a
// tenant ID, shorter, is checked by trigger's TestUnexportedBoundsAgree).
func TestBoundsFromTrigger(t *testing.T) {
	if refhost.MaxPayloadBytes != trigger.MaxPayloadBytes {
		t.Errorf("MaxPayloadBytes = %d, trigger.MaxPayloadBytes = %d", refhost.MaxPayloadBytes, trigger.MaxPayloadBytes)
	}
	if refhost.MaxIdentifierLen != trigger.MaxTargetNameLen {
		t.Errorf("MaxIdentifierLen = %d, trigger.MaxTargetNameLen = %d", refhost.MaxIdentifierLen, trigger.MaxTargetNameLen)
	}
}
