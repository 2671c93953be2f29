package metrics_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/internal/pkgcheck"
)

// TestPackageDoc requires doc.go to open with the package's sentence.
func TestPackageDoc(t *testing.T) { pkgcheck.Doc(t, "Package metrics owns ") }

// TestImports: the standard library and package trigger, nothing else.
func TestImports(t *testing.T) {
	outside := pkgcheck.OutsideImports(t, "github.com/latent-systems/latent-nats/trigger")
	if diff := cmp.Diff([]string(nil), outside); diff != "" {
		t.Errorf("imports outside the standard library and trigger (-want +got):\n%s", diff)
	}
}
