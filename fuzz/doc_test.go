package fuzz

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// TestPackageDoc requires the package comment in doc.go to open with what the
// package is.
func TestPackageDoc(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil || !strings.HasPrefix(f.Doc.Text(), "Package fuzz ") {
		t.Errorf("doc.go lacks a package comment opening with %q", "Package fuzz")
	}
}
