//go:build wasip1

// Command guest is the demo's WebAssembly guest, written in Go: the
// functions behind the demo's bindings (place, cancel, charge), exported
// with the core signatures the Component Model's canonical ABI gives their
// WIT types, plus handle, so that trigger/wasmhost's tests run with a Go
// guest as they do with trigger/wasmhost/testdata/guests/handler.wat.
//
// Build it as a WASI reactor (the host calls _initialize once, right after
// instantiation, and never _start), as make demo does:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o demo-guest.wasm ./tools/demo/guest
//
// The tests build it the same way, with the go command on PATH (buildGuest
// in tools/demo's demo_test.go, buildGoGuest in trigger/wasmhost's
// guests_test.go).
//
// WIT, then core:
//
//	place: func(order: string, qty: u32) -> result<u32, enum { out-of-stock }>
//	  (func (param i32 i32 i32) (result i32)); result area (align 4):
//	  discriminant u8 @0, payload @4 (ok's u32, err's u8 enum index)
//	cancel: func(order: string) -> u32
//	  (func (param i32 i32) (result i32))
//	charge: func(p: record { account: u64, amount: u32, currency: enum { eur, usd } })
//	        -> result<u32, enum { declined }>
//	  (func (param i64 i32 i32) (result i32)); result area as place's
//	handle: func(arg: string) -> result<_, enum { rejected }>
//	  (func (param i32 i32) (result i32)); result area: discriminant u8
//	  @0, enum index u8 @1
//	cabi_realloc (func (param i32 i32 i32 i32) (result i32))
//
// Behaviour:
//
//   - place: err(out-of-stock) when qty > 100, else ok(calls).
//   - cancel: calls.
//   - charge: account 13 panics ("ledger unavailable"); amount 0 is
//     err(declined); else ok(calls).
//   - handle, by the argument: "fail" is err(rejected); "retry" panics;
//     "block" busy-loops forever; "grow" allocates and touches 1 MiB slices
//     until the runtime dies of it ("fatal error: out of memory"); anything
//     else is ok. A call of handle that finds calls non-zero (the instance
//     was reused) panics.
//
// A panic or fatal error inside an export of a c-shared build does not call
// proc_exit: the runtime writes it to stderr (fd_write) and ends in
// runtime.abort, a wasm trap (unreachable).
//
// calls counts the calls of place, cancel, charge and handle in this
// instance, this one included; _initialize and cabi_realloc do not count.
//
// Strings arrive as (ptr, len) in this module's memory, in blocks the host
// asked cabi_realloc for; they are read in place (unsafe.String), never
// copied. A guest is a whole program with one instance per activation, so
// the package-level state below is its instance state.
package main

import (
	"unicode/utf8"
	"unsafe"
)

// Enum indexes and result discriminants of the canonical ABI.
const (
	discOK  = 0
	discErr = 1

	outOfStock = 0 // enum { out-of-stock }
	declined   = 0 // enum { declined }
	rejected   = 0 // enum { rejected }
)

var (
	// allocations keeps every block handed out by cabi_realloc reachable,
	// so the (non-moving) collector never frees memory the host wrote.
	allocations [][]byte

	// calls counts the calls of the demo's exports in this instance.
	calls uint32

	// resultArea is the result area of place and charge: discriminant u8
	// @0, payload @4. [2]uint32 is 4-aligned; wasm is little-endian, so
	// element 0 holds the discriminant in its first byte.
	resultArea [2]uint32

	// handleArea is handle's result area: discriminant u8 @0, enum index
	// u8 @1.
	handleArea [2]byte

	// hoard keeps what "grow" allocates reachable.
	hoard [][]byte
)

func main() {}

// cabiRealloc is the canonical ABI's allocator. It only hands out fresh
// blocks (old_ptr 0, old_size 0), aligned to align, from the Go heap.
//
//go:wasmexport cabi_realloc
func cabiRealloc(oldPtr unsafe.Pointer, oldSize, align, newSize uint32) unsafe.Pointer {
	if oldPtr != nil || oldSize != 0 {
		panic("cabi_realloc: only fresh blocks are supported")
	}
	if align == 0 || align&(align-1) != 0 {
		panic("cabi_realloc: align is not a power of two")
	}
	block := make([]byte, uint64(newSize)+uint64(align))
	allocations = append(allocations, block)
	p := unsafe.Pointer(&block[0])
	return unsafe.Add(p, -uintptr(p)&uintptr(align-1))
}

//go:wasmexport place
func place(order unsafe.Pointer, orderLen, qty uint32) unsafe.Pointer {
	n := count()
	checkString(order, orderLen)
	if qty > 100 {
		return result(discErr, outOfStock)
	}
	return result(discOK, n)
}

//go:wasmexport cancel
func cancel(order unsafe.Pointer, orderLen uint32) uint32 {
	n := count()
	checkString(order, orderLen)
	return n
}

//go:wasmexport charge
func charge(account uint64, amount, currency uint32) unsafe.Pointer {
	n := count()
	if currency > 1 {
		panic("charge: currency is not an enum index")
	}
	if account == 13 {
		panic("ledger unavailable")
	}
	if amount == 0 {
		return result(discErr, declined)
	}
	return result(discOK, n)
}

//go:wasmexport handle
func handle(arg unsafe.Pointer, argLen uint32) unsafe.Pointer {
	if calls != 0 {
		panic("handle: instance reused")
	}
	count()
	handleArea = [2]byte{discOK, 0}
	switch unsafe.String((*byte)(arg), argLen) {
	case "fail":
		handleArea = [2]byte{discErr, rejected}
	case "retry":
		panic("retry requested")
	case "block":
		for {
		}
	case "grow":
		for {
			b := make([]byte, 1<<20)
			for i := 0; i < len(b); i += 4 << 10 {
				b[i] = 1
			}
			hoard = append(hoard, b)
		}
	}
	return unsafe.Pointer(&handleArea)
}

// count records one call of a demo export and returns calls.
func count() uint32 {
	calls++
	return calls
}

// result fills resultArea and returns its address.
func result(disc, payload uint32) unsafe.Pointer {
	resultArea = [2]uint32{disc, payload}
	return unsafe.Pointer(&resultArea)
}

// checkString panics unless the n bytes at p are UTF-8, as the canonical
// ABI promises a lowered string is: a host that wrote the wrong bytes, or
// passed the wrong pointer, shows up as a trap.
func checkString(p unsafe.Pointer, n uint32) {
	if !utf8.ValidString(unsafe.String((*byte)(p), n)) {
		panic("string argument is not UTF-8")
	}
}
