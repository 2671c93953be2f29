package boundedfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestRead: a file at the bound is read whole with its mode; one byte over
// is too large with no bytes and no error; a directory and a missing path
// are errors, the directory matching ErrNotRegular.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	at := filepath.Join(dir, "at")
	over := filepath.Join(dir, "over")
	if err := os.WriteFile(at, bytes.Repeat([]byte("a"), 16), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(over, bytes.Repeat([]byte("a"), 17), 0o640); err != nil {
		t.Fatal(err)
	}
	b, mode, big, err := Read(at, 16)
	if err != nil || big || len(b) != 16 || mode.Perm() != 0o600 {
		t.Errorf("Read(at) = %d bytes, %v, %v, %v; want 16 bytes, -rw-------", len(b), mode, big, err)
	}
	b, _, big, err = Read(over, 16)
	if err != nil || !big || b != nil {
		t.Errorf("Read(over) = %q, %v, %v; want too large", b, big, err)
	}
	_, _, big, err = Read(dir, 16)
	if !errors.Is(err, ErrNotRegular) || big {
		t.Errorf("Read(dir) = %v, %v; want ErrNotRegular", big, err)
	}
	_, _, _, err = Read(filepath.Join(dir, "missing"), 16)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read(missing) = %v; want fs.ErrNotExist", err)
	}
}

// TestNotRegularText: the refusal of a directory reads as os's errors do,
// with the operation and the path.
func TestNotRegularText(t *testing.T) {
	dir := t.TempDir()
	_, _, _, err := Read(dir, 1)
	if want := "read " + dir + ": not a regular file"; err == nil || err.Error() != want {
		t.Errorf("Read(dir) = %v, want %q", err, want)
	}
}
