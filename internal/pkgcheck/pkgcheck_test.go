package pkgcheck

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPackageDoc(t *testing.T) { Doc(t, "Package pkgcheck owns ") }

// TestOutsideImports: this package imports only the standard library; with
// nothing imported from outside, allowing a path changes nothing.
func TestOutsideImports(t *testing.T) {
	for _, allowed := range [][]string{nil, {"example.com/x"}} {
		if diff := cmp.Diff([]string(nil), OutsideImports(t, allowed...)); diff != "" {
			t.Errorf("allowed %v: outside imports (-want +got):\n%s", allowed, diff)
		}
	}
}
