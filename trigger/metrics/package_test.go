package metrics_test

import (
	"testing"

	"github.com/latent-systems/latent-nats/internal/pkgcheck"
)

// TestPackageDoc requires doc.go to open with the package's sentence. Its
// imports are held by the module's layers table (internal/pkgcheck).
func TestPackageDoc(t *testing.T) { pkgcheck.Doc(t, "Package metrics owns ") }
