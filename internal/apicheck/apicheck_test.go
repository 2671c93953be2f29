package apicheck

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/internal/pkgcheck"
)

var update = flag.Bool("update", false, "write the module's exported API to api/latent-nats.txt")

// golden is the golden list, relative to the module root.
const golden = "api/latent-nats.txt"

// TestAPI fails when the exported API of the module differs from the
// golden list, printing the difference.
func TestAPI(t *testing.T) {
	root, _ := pkgcheck.ModuleRoot(t)
	got, err := API(root)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(got, "\n") + "\n"
	file := filepath.Join(root, filepath.FromSlash(golden))
	if *update {
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v\nwrite it with: go test ./internal/apicheck -update", err)
	}
	if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(text, "\n")); diff != "" {
		t.Errorf("the exported API differs from %s (-want +got):\n%s\n"+
			"if the change is intended, update the list with: go test ./internal/apicheck -update", golden, diff)
	}
}

// TestAPILines pins the line of every kind of declaration, and what is
// left out: unexported names, methods of unexported types, test files,
// package main, internal/, tools/, testdata and another module.
func TestAPILines(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n",
		"a/a.go": `package a

import "context"

const (
	KindA Kind = iota + 1
	KindB
	hidden
)

const Max = 255

var ErrX, errY = error(nil), error(nil)

var Hook func(int) bool

type Kind uint8

func (k Kind) String() string { return "" }

type Alias = Kind

type hiddenType struct{}

func (hiddenType) Exported() {}

type Pair[K comparable, V any] struct {
	Key   K
	Value V
	inner int
	Opts  struct {
		A int
		B string
	}
	*Embedded
}

type Embedded struct{}

type Host interface {
	context.Context
	Do(ctx context.Context, n int, more ...string) (int, error)
	hidden()
}

func (p *Pair[K, V]) Set(k K, v V) {}

func New(a, b int, c string) *Pair[string, int] { return nil }

func Named() (n int, err error) { return 0, nil }
`,
		"a/a_test.go":          "package a\n\nfunc TestOnly() {}\n",
		"a/testdata/x.go":      "package x\n\nfunc Data() {}\n",
		"main.go":              "package main\n\nfunc Main() {}\n",
		"internal/i/i.go":      "package i\n\nfunc Inner() {}\n",
		"tools/t/t.go":         "package t\n\nfunc Tool() {}\n",
		"other/go.mod":         "module example.com/other\n",
		"other/o.go":           "package o\n\nfunc Other() {}\n",
		"b/linux.go":           "//go:build linux\n\npackage b\n\nfunc Both() {}\n",
		"b/other.go":           "//go:build !linux\n\npackage b\n\nfunc Both() {}\n",
		"internalish/x/x.go":   "package x\n\nfunc Kept() {}\n",
		"a/_ignored/ignore.go": "package ignored\n\nfunc Ignored() {}\n",
	}
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := API(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"a type Alias = Kind",
		"a type Embedded struct",
		"a var ErrX",
		"a var Hook func(int) bool",
		"a type Host interface",
		"a embed Host.context.Context",
		"a method (Host) Do(context.Context, int, ...string) (int, error)",
		"a type Kind uint8",
		"a const KindA Kind",
		"a const KindB Kind",
		"a method (Kind) String() string",
		"a const Max",
		"a func Named() (int, error)",
		"a func New(int, int, string) *Pair[string, int]",
		"a type Pair[K comparable, V any] struct",
		"a embed Pair.*Embedded",
		"a field Pair.Key K",
		"a field Pair.Opts struct { A int; B string }",
		"a field Pair.Value V",
		"a method (*Pair[K, V]) Set(K, V)",
		"b func Both()",
		"internalish/x func Kept()",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("API (-want +got):\n%s", diff)
	}
}
