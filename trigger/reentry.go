package trigger

import (
	"runtime"
	"sync"
)

// Host callbacks run on the goroutine that steps, while it holds the
// installation's lock. A callback that calls back into its own
// installation (Close, CloseIdle, Step or Run from inside Activate,
// ObserveStep or any other Host method) would wait for the lock it is
// running under, forever. Such a call is told apart from a call from
// another goroutine, which must wait for the step to end, by the identity
// of the calling goroutine: the stepping goroutine records its ID for the
// step, and each entry point compares its own with it.
//
// Go does not expose a goroutine's ID; it is read from the first line of
// the goroutine's own stack trace ("goroutine 18 [running]:"), a format
// runtime.Stack has kept since Go 1. That read costs about a microsecond:
// Run makes it once, Step, Close and CloseIdle once a call.

// stackBufs holds the buffers goid reads a stack header into: one that
// runtime.Stack writes escapes to the heap, so they are reused rather
// than allocated per call.
var stackBufs = sync.Pool{New: func() any { return new([32]byte) }}

// goid returns the calling goroutine's ID, 0 if it cannot be read.
func goid() uint64 {
	buf := stackBufs.Get().(*[32]byte)
	defer stackBufs.Put(buf)
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return 0
	}
	var id uint64
	for _, c := range b[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// reentrant reports whether the calling goroutine, gid, is the one running
// a step of t: a host callback calling back into t.
func (t *Triggers) reentrant(gid uint64) bool {
	return gid != 0 && t.stepper.Load() == gid
}
