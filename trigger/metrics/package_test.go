package metrics_test

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
	if got := f.Doc.Text(); !strings.HasPrefix(got, "Package metrics owns ") {
		t.Errorf("doc.go package comment starts %q", got[:min(len(got), 40)])
	}
}

// TestImports: the standard library and package trigger, nothing else (no
// Prometheus client library).
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, "_test.go") })
	var outside []string
	for _, name := range files {
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
			if strings.Contains(first, ".") && path != "github.com/latent-systems/latent-nats/trigger" {
				outside = append(outside, name+": "+path)
			}
		}
	}
	if diff := cmp.Diff([]string(nil), outside); diff != "" {
		t.Errorf("imports outside the standard library and trigger (-want +got):\n%s", diff)
	}
}
