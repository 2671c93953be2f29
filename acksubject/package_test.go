package acksubject_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestImportsStandardLibraryOnly enforces the layering rule: the package
// imports nothing of this project and nothing outside the standard library.
func TestImportsStandardLibraryOnly(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, "_test.go") })
	fset := token.NewFileSet()
	var outside []string
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(path, "/")
			if strings.Contains(first, ".") {
				outside = append(outside, name+": "+path)
			}
		}
	}
	if diff := cmp.Diff([]string(nil), outside); diff != "" {
		t.Errorf("imports outside the standard library (-want +got):\n%s", diff)
	}
}

// TestPackageDoc requires doc.go to open with the package's sentence.
func TestPackageDoc(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", src, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	got := f.Doc.Text()
	if !strings.HasPrefix(got, "Package acksubject owns ") {
		t.Errorf("doc.go package comment starts %q, want \"Package acksubject owns …\"", got[:min(len(got), 40)])
	}
}
