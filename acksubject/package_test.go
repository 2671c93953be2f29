package acksubject_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/internal/pkgcheck"
)

// TestImportsStandardLibraryOnly enforces the layering rule: the package
// imports nothing of this project and nothing outside the standard library.
func TestImportsStandardLibraryOnly(t *testing.T) {
	if diff := cmp.Diff([]string(nil), pkgcheck.OutsideImports(t)); diff != "" {
		t.Errorf("imports outside the standard library (-want +got):\n%s", diff)
	}
}

// TestPackageDoc requires doc.go to open with what the package owns.
func TestPackageDoc(t *testing.T) { pkgcheck.Doc(t, "Package acksubject owns ") }
