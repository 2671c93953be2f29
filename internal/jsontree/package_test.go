package jsontree_test

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// TestPackageDoc requires doc.go to open with the package's sentence.
func TestPackageDoc(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil || !strings.HasPrefix(f.Doc.Text(), "Package jsontree owns ") {
		t.Errorf("doc.go lacks a package comment opening with %q", "Package jsontree owns")
	}
}
