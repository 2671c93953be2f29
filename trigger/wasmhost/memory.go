package wasmhost

import "github.com/tetratelabs/wazero/experimental"

// ceiling is the memory allocator of one activation: it backs the
// instance's linear memory with a Go slice that never grows past limit
// bytes, and remembers a growth it refused. wazero asks it through the
// instantiation's context (experimental.WithMemoryAllocator), so the
// ceiling is the activation's, not the runtime's.
//
// The slice may come from pool, a buffer an earlier instance of the same
// module used: every byte the new instance can see is cleared before it
// is handed out (Reallocate clears what a growth adds), so the instance is
// as fresh as one on a new slice. The activation puts the buffer back
// (recycle) only once every call into the instance has returned on its
// own goroutine: no guest code can write it any more.
type ceiling struct {
	limit uint64
	pool  *bufferPool // nil: no reuse
	mem   *linearMemory
}

// Bounds of the buffers a module keeps for its next instances: outside
// the reference host's reservations, so a few and small.
const (
	// pooledBuffers is how many buffers of ended instances a module keeps.
	pooledBuffers = 2
	// maxPooledBytes is the largest buffer kept: a larger one is left to
	// the garbage collector.
	maxPooledBytes = 8 << 20
)

// bufferPool is a module's few buffers of ended instances: at most
// pooledBuffers of at most maxPooledBytes each.
type bufferPool struct {
	free chan []byte
}

func newBufferPool() *bufferPool {
	return &bufferPool{free: make(chan []byte, pooledBuffers)}
}

// get returns a kept buffer with a capacity of at least min and at most
// max bytes, emptied, or nil.
func (p *bufferPool) get(min, max uint64) []byte {
	select {
	case b := <-p.free:
		if c := uint64(cap(b)); c >= min && c <= max {
			return b[:0]
		}
	default:
	}
	return nil
}

// put keeps b if it is small enough and there is room.
func (p *bufferPool) put(b []byte) {
	if cap(b) > maxPooledBytes {
		return
	}
	select {
	case p.free <- b[:0]:
	default:
	}
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
	var buf []byte
	if c.pool != nil {
		buf = c.pool.get(capacity, limit)
	}
	if buf == nil {
		buf = make([]byte, 0, capacity)
	}
	c.mem = &linearMemory{limit: limit, buf: buf}
	return c.mem
}

// recycle gives the memory's buffer to the pool. It must be called only
// when no call into the instance is running, and the instance is never
// called again.
func (c *ceiling) recycle() {
	if c.pool == nil || c.mem == nil || c.mem.buf == nil {
		return
	}
	b := c.mem.buf
	c.mem.buf = nil
	c.pool.put(b)
}

// refused reports whether a growth past the ceiling was refused.
func (c *ceiling) refused() bool { return c.mem != nil && c.mem.refused }

// pages returns the memory's size in pages: at the last growth, which
// the guest's own goroutine made.
func (c *ceiling) pages() uint32 {
	if c.mem == nil {
		return 0
	}
	return c.mem.pages
}

// linearMemory is one instance's memory.
type linearMemory struct {
	limit   uint64
	buf     []byte
	pages   uint32
	refused bool
}

// Reallocate implements experimental.LinearMemory: nil, which fails the
// guest's memory.grow with -1, past the limit.
func (m *linearMemory) Reallocate(size uint64) []byte {
	if size > m.limit {
		m.refused = true
		return nil
	}
	m.pages = uint32(size / PageSize)
	if size <= uint64(cap(m.buf)) {
		// What the growth adds may hold an earlier instance's bytes.
		clear(m.buf[len(m.buf):size])
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

// Free implements experimental.LinearMemory. It does nothing: wazero calls
// it when the instance's resources are closed, which Runtime.Close may do
// from another goroutine; the buffer is recycled by the activation itself
// (ceiling.recycle), once no call into the instance runs, or left to the
// garbage collector.
func (m *linearMemory) Free() {}
