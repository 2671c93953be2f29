//go:build linux

package conformance_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trigSockets counts the process's open sockets: the entries of
// /proc/self/fd that link to "socket:[inode]". ok is false where the
// count cannot be had.
func trigSockets(t *testing.T) (n int, ok bool) {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("reading /proc/self/fd: %v", err)
	}
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(target, "socket:") {
			n++
		}
	}
	return n, true
}
