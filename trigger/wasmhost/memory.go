package wasmhost

import "github.com/tetratelabs/wazero/experimental"

// ceiling is the memory allocator of one activation: it backs the
// instance's linear memory with a Go slice that never grows past limit
// bytes, and remembers a growth it refused. wazero asks it through the
// instantiation's context (experimental.WithMemoryAllocator), so the
// ceiling is the activation's, not the runtime's.
type ceiling struct {
	limit uint64
	mem   *linearMemory
}

// Allocate implements experimental.MemoryAllocator: the memory's own
// maximum, when it declares one, and the ceiling, whichever is lower.
func (c *ceiling) Allocate(capacity, max uint64) experimental.LinearMemory {
	limit := c.limit
	if max < limit {
		limit = max
	}
	if capacity > limit {
		capacity = limit
	}
	c.mem = &linearMemory{limit: limit, buf: make([]byte, 0, capacity)}
	return c.mem
}

// refused reports whether a growth past the ceiling was refused.
func (c *ceiling) refused() bool { return c.mem != nil && c.mem.refused }

// pages returns the memory's size in pages now.
func (c *ceiling) pages() uint32 {
	if c.mem == nil {
		return 0
	}
	return uint32(len(c.mem.buf) / PageSize)
}

// linearMemory is one instance's memory.
type linearMemory struct {
	limit   uint64
	buf     []byte
	refused bool
}

// Reallocate implements experimental.LinearMemory: nil, which fails the
// guest's memory.grow with -1, past the limit.
func (m *linearMemory) Reallocate(size uint64) []byte {
	if size > m.limit {
		m.refused = true
		return nil
	}
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size]
		return m.buf
	}
	// Double, within the limit, so that a guest growing a page at a time
	// copies its memory a logarithmic number of times.
	c := 2 * uint64(cap(m.buf))
	if c < size {
		c = size
	}
	if c > m.limit {
		c = m.limit
	}
	buf := make([]byte, size, c)
	copy(buf, m.buf)
	m.buf = buf
	return buf
}

// Free implements experimental.LinearMemory.
func (m *linearMemory) Free() { m.buf = nil }
