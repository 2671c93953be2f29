package pkgcheck

import (
	"bufio"
	"errors"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ModuleImports returns, for every package of the module that holds the
// current directory, the imports of its non-test files that are not in
// the standard library (a first path element without a dot), sorted and
// without duplicates. Packages are keyed by their directory relative to
// the module root ("conn", "trigger/refhost"); an import of the module's
// own packages is written the same way, any other by its full path.
//
// Every .go file counts whatever its build constraints, so an import made
// on one platform only is seen on all. Directories named testdata or
// starting with "." or "_" are skipped, and so is a directory with a
// go.mod of its own (another module) and everything under it.
func ModuleImports(t testing.TB) map[string][]string {
	t.Helper()
	root, module := ModuleRoot(t)
	pkgs := make(map[string][]string)
	err := WalkGoFiles(root, nil, func(key, p, name string) error {
		if _, ok := pkgs[key]; !ok {
			pkgs[key] = []string{}
		}
		if strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			ip, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			if first, _, _ := strings.Cut(ip, "/"); !strings.Contains(first, ".") {
				continue
			}
			if rel, ok := strings.CutPrefix(ip, module+"/"); ok {
				ip = rel
			}
			if !slices.Contains(pkgs[key], ip) {
				pkgs[key] = append(pkgs[key], ip)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, imports := range pkgs {
		slices.Sort(imports)
	}
	return pkgs
}

// WalkGoFiles calls visit for every .go file of the module rooted at root
// (test files included), with the file's directory relative to root in
// slash form ("conn", "trigger/refhost"; "." for the root), its path and
// its name. Directories named testdata or starting with "." or "_" are
// skipped, so is a directory with a go.mod of its own (another module) and
// everything under it unless root's go.work uses it (the repository's
// harness modules, tools and conformance, are walked with the library;
// tools/peerbench is not), and so is every directory skip reports (given
// its relative slash path; nil skips none). It is the one walk of the
// repository's source that ModuleImports and the API list share.
func WalkGoFiles(root string, skip func(rel string) bool, visit func(rel, path, name string) error) error {
	used, err := workspaceUses(root)
	if err != nil {
		return err
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == root {
				return nil
			}
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				(skip != nil && skip(filepath.ToSlash(rel))) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && !used[filepath.ToSlash(rel)] {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		return visit(filepath.ToSlash(filepath.Dir(rel)), p, name)
	})
}

// workspaceUses returns the directories, relative to root in slash form,
// that the use directives of root's go.work name ("." included); none
// when root has no go.work.
func workspaceUses(root string) (map[string]bool, error) {
	b, err := os.ReadFile(filepath.Join(root, "go.work"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	used := make(map[string]bool)
	block := false
	for line := range strings.Lines(string(b)) {
		line, _, _ = strings.Cut(line, "//")
		line = strings.TrimSpace(line)
		var dir string
		switch {
		case block && line == ")":
			block = false
		case block:
			dir = line
		case line == "use (":
			block = true
		default:
			dir, _ = strings.CutPrefix(line, "use ")
			if dir == line {
				continue
			}
		}
		if dir != "" {
			used[path.Clean(strings.Trim(strings.TrimSpace(dir), `"`))] = true
		}
	}
	return used, nil
}

// ModuleRoot returns the directory of the go.mod nearest above the current
// directory and the module path it declares.
func ModuleRoot(t testing.TB) (dir, module string) {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		f, err := os.Open(filepath.Join(dir, "go.mod"))
		if err == nil {
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
					return dir, path.Clean(strings.Trim(strings.TrimSpace(m), `"`))
				}
			}
			t.Fatalf("%s: no module line (%v)", f.Name(), sc.Err())
		}
		if !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the current directory")
		}
		dir = parent
	}
}

// Layer is what a package may import from outside the standard library,
// with the reason.
type Layer struct {
	// Imports are the allowed imports, written as ModuleImports writes
	// them.
	Imports []string
	// Why says in a line what the package is and why these imports.
	Why string
}

// LayerViolations compares the imports of every package (as ModuleImports
// returns them) with the layers allowed and returns, sorted, one line for
// every package without a layer, every import its layer does not allow,
// and every layer whose package does not exist.
func LayerViolations(layers map[string]Layer, pkgs map[string][]string) []string {
	var out []string
	for pkg, imports := range pkgs {
		l, ok := layers[pkg]
		if !ok {
			out = append(out, pkg+": package without a layer: list its allowed imports and why")
			continue
		}
		for _, imp := range imports {
			if !slices.Contains(l.Imports, imp) {
				out = append(out, pkg+": imports "+imp+", which its layer does not allow")
			}
		}
	}
	for pkg := range layers {
		if _, ok := pkgs[pkg]; !ok {
			out = append(out, pkg+": layer of a package that does not exist")
		}
	}
	slices.Sort(out)
	return out
}
