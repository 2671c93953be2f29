package pkgcheck

import (
	"go/parser"
	"go/token"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Kind is what a package of the module is, as the doc rule tells them
// apart.
type Kind uint8

const (
	// KindLibrary is a package with code beside its doc.go.
	KindLibrary Kind = iota + 1
	// KindCommand is a package main.
	KindCommand
	// KindTestOnly is a package whose files beside doc.go, if it has one,
	// are all tests (fuzz, conformance).
	KindTestOnly
)

// String returns "library", "command" or "test-only", or "Kind(n)".
func (k Kind) String() string {
	switch k {
	case KindLibrary:
		return "library"
	case KindCommand:
		return "command"
	case KindTestOnly:
		return "test-only"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// PackageDoc is what one directory of the module says of itself.
type PackageDoc struct {
	// Name is the package's name (for a test-only directory without
	// doc.go, its tests' package name without "_test").
	Name string
	// Kind is what the package is.
	Kind Kind
	// HasDoc reports whether the directory has a doc.go.
	HasDoc bool
	// Doc is the text of doc.go's package comment, "" without one.
	Doc string
}

// ModuleDocs returns, for every package of the module that holds the
// current directory (keyed and walked as ModuleImports does), its name,
// kind and the package comment of its doc.go.
func ModuleDocs(t testing.TB) map[string]PackageDoc {
	t.Helper()
	root, _ := ModuleRoot(t)
	docs := make(map[string]PackageDoc)
	code := make(map[string]bool) // directories with a non-test file other than doc.go
	err := WalkGoFiles(root, nil, func(key, p, name string) error {
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			return err
		}
		d := docs[key]
		test := strings.HasSuffix(name, "_test.go")
		switch {
		case !test:
			d.Name = f.Name.Name
		case d.Name == "":
			d.Name = strings.TrimSuffix(f.Name.Name, "_test")
		}
		if name == "doc.go" {
			d.HasDoc, d.Doc = true, f.Doc.Text()
		} else if !test {
			code[key] = true
		}
		docs[key] = d
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key, d := range docs {
		switch {
		case d.Name == "main":
			d.Kind = KindCommand
		case code[key]:
			d.Kind = KindLibrary
		default:
			d.Kind = KindTestOnly
		}
		docs[key] = d
	}
	return docs
}

// DocViolations checks every package's doc.go and returns, sorted, one
// line for every package that breaks the rule of its kind:
//
//   - a library has a doc.go whose package comment opens with "Package
//     <name> owns ", what it owns (and, in the same sentence or the next,
//     what it refuses);
//   - a command's doc.go, when it has one, opens with "Command <directory
//     name> ";
//   - a test-only package's doc.go, when it has one, opens with "Package
//     <name> ".
func DocViolations(docs map[string]PackageDoc) []string {
	var out []string
	for key, d := range docs {
		var want string
		switch d.Kind {
		case KindLibrary:
			want = "Package " + d.Name + " owns "
			if !d.HasDoc {
				out = append(out, key+": no doc.go: say what the package owns and what it refuses")
				continue
			}
		case KindCommand:
			want = "Command " + path.Base(key) + " "
		case KindTestOnly:
			want = "Package " + d.Name + " "
		}
		if d.HasDoc && !strings.HasPrefix(d.Doc, want) {
			out = append(out, key+": doc.go's package comment starts "+
				strconv.Quote(d.Doc[:min(len(d.Doc), len(want))])+", want "+strconv.Quote(want))
		}
	}
	slices.Sort(out)
	return out
}
