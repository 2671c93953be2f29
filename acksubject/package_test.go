package acksubject_test

import (
	"testing"

	"github.com/latent-systems/latent-nats/internal/pkgcheck"
)

// TestPackageDoc requires doc.go to open with what the package owns. Its
// imports (the standard library only) are held by the module's layers
// table (internal/pkgcheck).
func TestPackageDoc(t *testing.T) { pkgcheck.Doc(t, "Package acksubject owns ") }
