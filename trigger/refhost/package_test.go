package refhost_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/internal/pkgcheck"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// TestPackageDoc requires doc.go to open with the package's sentence.
func TestPackageDoc(t *testing.T) { pkgcheck.Doc(t, "Package refhost owns ") }

// TestImports: the standard library, package trigger and the JSON lexer,
// nothing else.
func TestImports(t *testing.T) {
	outside := pkgcheck.OutsideImports(t,
		"github.com/latent-systems/latent-nats/trigger",
		"github.com/latent-systems/latent-nats/internal/jsonlex")
	if diff := cmp.Diff([]string(nil), outside); diff != "" {
		t.Errorf("imports outside the standard library, trigger and jsonlex (-want +got):\n%s", diff)
	}
}

// TestPayloadLimitIsTheProfiles: the codec's bound is the profile's
// largest payload ceiling.
func TestPayloadLimitIsTheProfiles(t *testing.T) {
	if refhost.MaxPayloadBytes != trigger.MaxPayloadBytes {
		t.Errorf("MaxPayloadBytes = %d, trigger.MaxPayloadBytes = %d", refhost.MaxPayloadBytes, trigger.MaxPayloadBytes)
	}
	if refhost.MaxIdentifierLen != trigger.MaxTargetNameLen {
		t.Errorf("MaxIdentifierLen = %d, trigger.MaxTargetNameLen = %d", refhost.MaxIdentifierLen, trigger.MaxTargetNameLen)
	}
}
