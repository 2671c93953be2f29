package wasmhost

// The import section of a core module, read directly: wazero's compiled
// module lists imported functions and memories but not imported tables,
// globals or tags, and a module that imports any of those must be refused
// at registration, not at its first activation. The binary has already
// been decoded and validated by the compiler when this runs; the reader
// still checks every length against the input.

// importKind is an import's kind byte.
type importKind byte

const (
	importFunc   importKind = 0
	importTable  importKind = 1
	importMemory importKind = 2
	importGlobal importKind = 3
	importTag    importKind = 4
)

// moduleImport is one import.
type moduleImport struct {
	module, name string
	kind         importKind
}

// sectionImport is the import section's id.
const sectionImport = 2

// readImports returns the imports of a core module binary, or false when
// the binary cannot be read (which a validated module never is).
func readImports(bin []byte) ([]moduleImport, bool) {
	if len(bin) < 8 {
		return nil, false
	}
	r := byteReader{b: bin, off: 8} // magic and version
	for r.off < len(r.b) {
		id, ok := r.byte()
		if !ok {
			return nil, false
		}
		size, ok := r.u32()
		if !ok || uint64(size) > uint64(len(r.b)-r.off) {
			return nil, false
		}
		end := r.off + int(size)
		if id != sectionImport {
			r.off = end
			continue
		}
		sec := byteReader{b: r.b[:end], off: r.off}
		return sec.imports()
	}
	return nil, true
}

// imports reads the body of an import section.
func (r *byteReader) imports() ([]moduleImport, bool) {
	n, ok := r.u32()
	if !ok || uint64(n) > uint64(len(r.b)-r.off) { // each import is at least 4 bytes
		return nil, false
	}
	out := make([]moduleImport, 0, n)
	for i := uint32(0); i < n; i++ {
		module, ok := r.name()
		if !ok {
			return nil, false
		}
		name, ok := r.name()
		if !ok {
			return nil, false
		}
		kind, ok := r.byte()
		if !ok {
			return nil, false
		}
		out = append(out, moduleImport{module: module, name: name, kind: importKind(kind)})
		if !r.skipDesc(importKind(kind)) {
			return nil, false
		}
	}
	return out, true
}

// skipDesc skips an import description of kind.
func (r *byteReader) skipDesc(kind importKind) bool {
	switch kind {
	case importFunc:
		_, ok := r.u32()
		return ok
	case importTable:
		if _, ok := r.byte(); !ok { // reftype
			return false
		}
		return r.skipLimits()
	case importMemory:
		return r.skipLimits()
	case importGlobal:
		if _, ok := r.byte(); !ok { // valtype
			return false
		}
		_, ok := r.byte() // mutability
		return ok
	case importTag:
		if _, ok := r.byte(); !ok { // attribute
			return false
		}
		_, ok := r.u32()
		return ok
	}
	return false
}

// skipLimits skips a limits: a flag byte, a minimum and, with bit 0 of
// the flag, a maximum (64-bit memories use the same LEB128 form).
func (r *byteReader) skipLimits() bool {
	flag, ok := r.byte()
	if !ok {
		return false
	}
	if _, ok := r.u64(); !ok {
		return false
	}
	if flag&1 != 0 {
		_, ok := r.u64()
		return ok
	}
	return true
}

// byteReader reads the LEB128 and name encodings of the binary format.
type byteReader struct {
	b   []byte
	off int
}

func (r *byteReader) byte() (byte, bool) {
	if r.off >= len(r.b) {
		return 0, false
	}
	c := r.b[r.off]
	r.off++
	return c, true
}

// u32 reads an unsigned LEB128 that fits 32 bits (read as u64 reads it).
func (r *byteReader) u32() (uint32, bool) {
	v, ok := r.u64()
	if !ok || v > 1<<32-1 {
		return 0, false
	}
	return uint32(v), true
}

// u64 reads an unsigned LEB128 of at most 10 bytes.
func (r *byteReader) u64() (uint64, bool) {
	var v uint64
	for shift := uint(0); shift < 70; shift += 7 {
		c, ok := r.byte()
		if !ok {
			return 0, false
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, true
		}
	}
	return 0, false
}

// name reads a length-prefixed name, bounded by the input.
func (r *byteReader) name() (string, bool) {
	n, ok := r.u32()
	if !ok || uint64(n) > uint64(len(r.b)-r.off) {
		return "", false
	}
	s := string(r.b[r.off : r.off+int(n)])
	r.off += int(n)
	return s, true
}

// sectionTable is the table section's id.
const sectionTable = 4

// tableElementBytes is what one table element costs the host: wazero
// keeps a table as a slice of 8-byte references.
const tableElementBytes = 8

// boundTables returns bin with every table it defines given a maximum,
// and the sum of those maxima: a table declared without one gets its
// minimum, so that table.grow fails with -1 rather than allocating what
// the guest asks (wazero bounds a table by nothing else). A table whose
// minimum or maximum is over 65,536, more than 16
// tables, or a section that does not read, is refused: ok is false and
// over tells which (over true: the bound, false: unreadable). bin itself
// is never modified; a module without tables is returned as is.
func boundTables(bin []byte) (out []byte, elements uint64, over, ok bool) {
	if len(bin) < 8 {
		return nil, 0, false, false
	}
	r := byteReader{b: bin, off: 8}
	for r.off < len(r.b) {
		start := r.off
		id, ok := r.byte()
		if !ok {
			return nil, 0, false, false
		}
		size, ok := r.u32()
		if !ok || uint64(size) > uint64(len(r.b)-r.off) {
			return nil, 0, false, false
		}
		body := r.off
		end := r.off + int(size)
		if id != sectionTable {
			r.off = end
			continue
		}
		sec := byteReader{b: r.b[:end], off: body}
		n, ok := sec.u32()
		if !ok {
			return nil, 0, false, false
		}
		if n > maxTables {
			return nil, 0, true, false
		}
		var content []byte
		content = appendU32(content, n)
		for range n {
			reftype, ok := sec.byte()
			if !ok {
				return nil, 0, false, false
			}
			flag, ok := sec.byte()
			if !ok || flag > 1 { // 0: min; 1: min and max (32-bit tables only)
				return nil, 0, false, false
			}
			min, ok := sec.u32()
			if !ok {
				return nil, 0, false, false
			}
			max := min
			if flag == 1 {
				if max, ok = sec.u32(); !ok || max < min {
					return nil, 0, false, false
				}
			}
			if max > maxTableElements {
				return nil, 0, true, false
			}
			elements += uint64(max)
			content = append(content, reftype, 1)
			content = appendU32(appendU32(content, min), max)
		}
		if sec.off != end {
			return nil, 0, false, false
		}
		out = make([]byte, 0, len(bin)+len(content))
		out = append(out, bin[:start]...)
		out = append(out, sectionTable)
		out = appendU32(out, uint32(len(content)))
		out = append(out, content...)
		out = append(out, bin[end:]...)
		return out, elements, false, true
	}
	return bin, 0, false, true
}

// appendU32 appends v as an unsigned LEB128.
func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}
