package pkgcheck

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Doc fails t unless doc.go in the current directory has a package comment
// that starts with prefix (for example "Package wire owns ").
func Doc(t testing.TB, prefix string) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Doc.Text(); !strings.HasPrefix(got, prefix) {
		t.Errorf("doc.go package comment starts %q, want %q", got[:min(len(got), 40)], prefix)
	}
}

// OutsideImports returns "file: path" for every import of the current
// directory's non-test files that is neither in the standard library (a
// first path element without a dot) nor listed in allowed, sorted.
func OutsideImports(t testing.TB, allowed ...string) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var outside []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(path, "/")
			if strings.Contains(first, ".") && !slices.Contains(allowed, path) {
				outside = append(outside, name+": "+path)
			}
		}
	}
	slices.Sort(outside)
	return outside
}
