package pkgcheck

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestModuleDocs requires every package of the module to open its doc.go
// with the sentence its kind asks for (see DocViolations): the one test of
// the package docs, for the whole module, as TestModuleLayers is of the
// imports.
func TestModuleDocs(t *testing.T) {
	if diff := cmp.Diff([]string(nil), DocViolations(ModuleDocs(t))); diff != "" {
		t.Errorf("package docs (-want +got):\n%s", diff)
	}
}

// TestDocViolations: each kind's rule, a library without doc.go, and a
// command or test-only package without doc.go, which passes.
func TestDocViolations(t *testing.T) {
	docs := map[string]PackageDoc{
		"good":        {Name: "good", Kind: KindLibrary, HasDoc: true, Doc: "Package good owns this.\n"},
		"vague":       {Name: "vague", Kind: KindLibrary, HasDoc: true, Doc: "Package vague does this.\n"},
		"bare":        {Name: "bare", Kind: KindLibrary},
		"cmd/tool":    {Name: "main", Kind: KindCommand, HasDoc: true, Doc: "Command tool runs.\n"},
		"cmd/other":   {Name: "main", Kind: KindCommand, HasDoc: true, Doc: "Package main runs.\n"},
		"cmd/nodoc":   {Name: "main", Kind: KindCommand},
		"fuzz":        {Name: "fuzz", Kind: KindTestOnly, HasDoc: true, Doc: "Package fuzz holds.\n"},
		"conformance": {Name: "conformance", Kind: KindTestOnly},
	}
	want := []string{
		"bare: no doc.go: say what the package owns and what it refuses",
		`cmd/other: doc.go's package comment starts "Package main r", want "Command other "`,
		`vague: doc.go's package comment starts "Package vague does ", want "Package vague owns "`,
	}
	if diff := cmp.Diff(want, DocViolations(docs)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}
