package apicheck

import (
	"bytes"
	"cmp"
	"github.com/latent-systems/latent-nats/internal/pkgcheck"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"slices"
	"strings"
)

// API returns the lines of the exported API of every package of the
// module rooted at root (the directory of its go.mod) outside internal/
// and tools/: non-test .go files only, sorted as the package doc says,
// without duplicates. Directories named testdata or starting with "." or
// "_" are skipped, and so is a directory with a go.mod of its own (another
// module) and everything under it.
func API(root string) ([]string, error) {
	var entries []entry
	err := pkgcheck.WalkGoFiles(root, excluded, func(rel, p, name string) error {
		if strings.HasSuffix(name, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		entries = append(entries, fileAPI(fset, rel, f)...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b entry) int {
		return cmp.Or(
			strings.Compare(a.pkg, b.pkg),
			strings.Compare(a.owner, b.owner),
			cmp.Compare(a.rank, b.rank),
			strings.Compare(a.line, b.line),
		)
	})
	lines := make([]string, 0, len(entries))
	for _, e := range entries {
		lines = append(lines, e.line)
	}
	return slices.Compact(lines), nil
}

// excluded reports whether the directory rel, relative to the module
// root, holds no public API: internal/ (helpers the module alone may
// import) and tools/ (the tools above the core).
func excluded(rel string) bool { return rel == "internal" || rel == "tools" }

// entry is one line with what it sorts by.
type entry struct {
	pkg string
	// owner is the type a field or method belongs to, else the
	// identifier itself.
	owner string
	// rank puts a type before its fields and methods.
	rank int
	line string
}

// Ranks.
const (
	rankDecl = iota
	rankMember
)

// fileAPI returns the entries of the exported identifiers of f.
func fileAPI(fset *token.FileSet, pkg string, f *ast.File) []entry {
	var out []entry
	add := func(owner string, rank int, kind, text string) {
		out = append(out, entry{pkg: pkg, owner: owner, rank: rank, line: pkg + " " + kind + " " + text})
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				add(d.Name.Name, rankDecl, "func", d.Name.Name+signature(fset, d.Type))
				continue
			}
			recv := d.Recv.List[0].Type
			base := recvBase(recv)
			if !ast.IsExported(base) {
				continue
			}
			add(base, rankMember, "method", "("+expr(fset, recv)+") "+d.Name.Name+signature(fset, d.Type))
		case *ast.GenDecl:
			var typ string // a constant group's type, carried to the lines after it
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.ValueSpec:
					if d.Tok == token.CONST && (s.Type != nil || len(s.Values) > 0) {
						typ = ""
						if s.Type != nil {
							typ = " " + expr(fset, s.Type)
						}
					}
					if d.Tok == token.VAR {
						typ = ""
						if s.Type != nil {
							typ = " " + expr(fset, s.Type)
						}
					}
					for _, n := range s.Names {
						if !n.IsExported() {
							continue
						}
						// A constant of an exported type of the package (an
						// enum value) follows its type.
						if owner := strings.TrimPrefix(typ, " "); d.Tok == token.CONST && token.IsIdentifier(owner) && token.IsExported(owner) {
							add(owner, rankMember, "const", n.Name+typ)
							continue
						}
						add(n.Name, rankDecl, d.Tok.String(), n.Name+typ)
					}
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						out = append(out, typeAPI(fset, pkg, s)...)
					}
				}
			}
		}
	}
	return out
}

// typeAPI returns the entries of an exported type: the type, then its
// exported fields or interface methods.
func typeAPI(fset *token.FileSet, pkg string, s *ast.TypeSpec) []entry {
	name := s.Name.Name
	var out []entry
	add := func(rank int, kind, text string) {
		out = append(out, entry{pkg: pkg, owner: name, rank: rank, line: pkg + " " + kind + " " + text})
	}
	head := name
	if s.TypeParams != nil {
		head += "[" + fieldList(fset, s.TypeParams, true) + "]"
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		add(rankDecl, "type", head+" struct")
		for _, f := range t.Fields.List {
			typ := expr(fset, f.Type)
			if len(f.Names) == 0 {
				if ast.IsExported(recvBase(f.Type)) {
					add(rankMember, "embed", name+"."+typ)
				}
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					add(rankMember, "field", name+"."+n.Name+" "+typ)
				}
			}
		}
	case *ast.InterfaceType:
		add(rankDecl, "type", head+" interface")
		for _, m := range t.Methods.List {
			if len(m.Names) == 0 {
				add(rankMember, "embed", name+"."+expr(fset, m.Type))
				continue
			}
			for _, n := range m.Names {
				if n.IsExported() {
					add(rankMember, "method", "("+name+") "+n.Name+signature(fset, m.Type.(*ast.FuncType)))
				}
			}
		}
	default:
		if s.Assign.IsValid() {
			add(rankDecl, "type", head+" = "+expr(fset, s.Type))
		} else {
			add(rankDecl, "type", head+" "+expr(fset, s.Type))
		}
	}
	return out
}

// recvBase returns the name of the type of a receiver or embedded field:
// T of T, *T, T[P] and pkg.T.
func recvBase(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.SelectorExpr:
			return t.Sel.Name
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// signature returns "(params) results" of a function type, without the
// names of parameters and results.
func signature(fset *token.FileSet, ft *ast.FuncType) string {
	s := "(" + fieldList(fset, ft.Params, false) + ")"
	if ft.Results == nil || len(ft.Results.List) == 0 {
		return s
	}
	res := fieldList(fset, ft.Results, false)
	if len(ft.Results.List) == 1 && len(ft.Results.List[0].Names) <= 1 {
		return s + " " + res
	}
	return s + " (" + res + ")"
}

// fieldList writes the types of a parameter, result or type-parameter
// list, one per name, with the names when named is set.
func fieldList(fset *token.FileSet, l *ast.FieldList, named bool) string {
	if l == nil {
		return ""
	}
	var parts []string
	for _, f := range l.List {
		typ := expr(fset, f.Type)
		if named {
			names := make([]string, 0, len(f.Names))
			for _, n := range f.Names {
				names = append(names, n.Name)
			}
			parts = append(parts, strings.Join(names, ", ")+" "+typ)
			continue
		}
		for range max(1, len(f.Names)) {
			parts = append(parts, typ)
		}
	}
	return strings.Join(parts, ", ")
}

// expr prints e as gofmt would, on one line: the white space of a
// multi-line type (an anonymous struct) becomes "; " between its lines.
func expr(fset *token.FileSet, e ast.Expr) string {
	var b bytes.Buffer
	if err := printer.Fprint(&b, fset, e); err != nil {
		return "?"
	}
	lines := strings.Split(b.String(), "\n")
	for i := range lines {
		lines[i] = strings.Join(strings.Fields(lines[i]), " ")
	}
	s := strings.Join(lines, "; ")
	s = strings.ReplaceAll(s, "{; ", "{ ")
	return strings.ReplaceAll(s, "; }", " }")
}
