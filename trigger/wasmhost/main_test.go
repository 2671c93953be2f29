package wasmhost_test

import (
	"fmt"
	"os"
	"testing"
)

// cacheDir is the compilation cache every Runtime of the tests shares
// (Config.CacheDir): the Go guest, which takes seconds to compile under
// the race detector, is compiled once per test binary.
var cacheDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wasmhost-cache")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cacheDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
