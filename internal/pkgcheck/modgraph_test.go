package pkgcheck

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestConsumerModuleGraph builds a throwaway program that imports trigger
// and its reference host, outside the repository and its go.work, and
// checks its module graph, exactly: the program, the library, the
// library's own requirements and those of x/crypto. The harness (tools,
// conformance) is a module of its own, so nats-server, staticcheck and
// their requirements never reach an embedder's build nor raise its
// minimum versions. The module cache must hold the library's requirements
// (.ci/run downloads them first); nothing is fetched.
func TestConsumerModuleGraph(t *testing.T) {
	root, module := ModuleRoot(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command: %v", err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/consumer\n\ngo 1.26.0\n\nrequire "+module+" v0.0.0-00010101000000-000000000000\n\nreplace "+module+" => "+root+"\n")
	write("main.go", "package main\n\nimport (\n\t_ \""+module+"/trigger\"\n\t_ \""+module+"/trigger/refhost\"\n)\n\nfunc main() {}\n")
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write("go.sum", string(sum))
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(goBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOTOOLCHAIN=local")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
		}
		return string(out)
	}
	run("mod", "tidy")
	run("build", "-o", os.DevNull, ".")

	// The graph as go mod graph reads it offline from the go.mod files
	// (go list -m all would also want each module's version information
	// from the proxy): the program's requirements after tidy, the
	// library's go.mod, and the go.mod of each module the build list
	// selects (the graph is pruned below them).
	nodes := map[string]bool{}
	for line := range strings.Lines(run("mod", "graph")) {
		for _, f := range strings.Fields(line) {
			path, _, _ := strings.Cut(f, "@")
			if path != "go" && path != "toolchain" {
				nodes[path] = true
			}
		}
	}
	graph := slices.Sorted(maps.Keys(nodes))
	// The library's requirements (go.mod) and x/crypto's (nkeys signs
	// with it). A new module here is a decision: this list changes with
	// it.
	want := []string{
		"example.com/consumer",
		"github.com/google/go-cmp",
		module,
		"github.com/nats-io/jwt/v2",
		"github.com/nats-io/nkeys",
		"github.com/tetratelabs/wazero",
		"golang.org/x/crypto",
		"golang.org/x/net",
		"golang.org/x/sys",
		"golang.org/x/term",
		"golang.org/x/text",
		"pgregory.net/rapid",
	}
	slices.Sort(want)
	if !slices.Equal(graph, want) {
		t.Errorf("the consumer's module graph:\n got  %q\n want %q", graph, want)
	}
}
