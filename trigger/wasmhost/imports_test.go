package wasmhost

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzBinaryReaders: the hand-written readers of the import and table
// sections never panic on any input, and a module whose tables were
// bounded reads back with the same total and every table bounded.
func FuzzBinaryReaders(f *testing.F) {
	for _, name := range []string{"handler", "table", "bigtable", "wasi", "import"} {
		bin, err := os.ReadFile(filepath.Join("testdata", "guests", name+".wasm"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(bin)
	}
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x04\x04\x01\x70\x00\x05"))
	f.Fuzz(func(t *testing.T, bin []byte) {
		readImports(bin)
		orig := bytes.Clone(bin)
		out, elements, _, ok := boundTables(bin)
		if !bytes.Equal(orig, bin) {
			t.Fatal("boundTables modified its input")
		}
		if !ok {
			return
		}
		again, elements2, _, ok := boundTables(out)
		if !ok || elements2 != elements || !bytes.Equal(again, out) {
			t.Fatalf("bounded module reads back as %v, %d elements (want %d), same bytes %v", ok, elements2, elements, bytes.Equal(again, out))
		}
	})
}

// TestBoundTables: a table without maximum gets its minimum; one with a
// maximum keeps it; the bound is refused one past it.
func TestBoundTables(t *testing.T) {
	module := func(tables ...byte) []byte {
		b := []byte("\x00asm\x01\x00\x00\x00")
		b = append(b, sectionTable)
		b = appendU32(b, uint32(len(tables)))
		return append(b, tables...)
	}
	limit := appendU32(nil, maxTableElements)
	past := appendU32(nil, maxTableElements+1)
	cases := []struct {
		name     string
		in, want []byte
		elements uint64
		over, ok bool
	}{
		{"no max", module(1, 0x70, 0, 5), module(1, 0x70, 1, 5, 5), 5, false, true},
		{"max kept", module(1, 0x70, 1, 1, 9), module(1, 0x70, 1, 1, 9), 9, false, true},
		{"min at the limit", module(append([]byte{1, 0x70, 0}, limit...)...), module(append(append([]byte{1, 0x70, 1}, limit...), limit...)...), maxTableElements, false, true},
		{"min past the limit", module(append([]byte{1, 0x70, 0}, past...)...), nil, 0, true, false},
		{"max past the limit", module(append([]byte{1, 0x70, 1, 0}, past...)...), nil, 0, true, false},
		{"max under min", module(1, 0x70, 1, 5, 4), nil, 0, false, false},
		{"64-bit table", module(1, 0x70, 4, 1), nil, 0, false, false},
		{"truncated", module(1, 0x70, 1, 5), nil, 0, false, false},
		{"no tables", []byte("\x00asm\x01\x00\x00\x00"), []byte("\x00asm\x01\x00\x00\x00"), 0, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, elements, over, ok := boundTables(tc.in)
			if ok != tc.ok || over != tc.over || elements != tc.elements || !bytes.Equal(out, tc.want) {
				t.Errorf("boundTables = %x, %d, over %v, ok %v; want %x, %d, %v, %v", out, elements, over, ok, tc.want, tc.elements, tc.over, tc.ok)
			}
		})
	}
	many := []byte{maxTables + 1}
	for range maxTables + 1 {
		many = append(many, 0x70, 0, 1)
	}
	if _, _, over, ok := boundTables(module(many...)); ok || !over {
		t.Errorf("%d tables: over %v, ok %v; want refused as over the bound", maxTables+1, over, ok)
	}
}
