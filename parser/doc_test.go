package parser

import (
	"testing"

	"github.com/latent-systems/latent-nats/internal/pkgcheck"
)

// TestPackageDoc requires doc.go to open with what the package is.
func TestPackageDoc(t *testing.T) { pkgcheck.Doc(t, "Package parser ") }
