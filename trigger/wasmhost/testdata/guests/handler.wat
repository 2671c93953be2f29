;; handler.wat: the well-behaved guest of the wasmhost conformance suite;
;; tools/demo/guest does the same in Go.
;;
;; WIT:
;;   handle: func(arg: string) -> result<_, enum { rejected }>
;;   calls: func() -> u32
;;
;; Core (TestGuestsValidate checks these lines against the binary):
;;   export memory (memory)
;;   export cabi_realloc (func (param i32 i32 i32 i32) (result i32))
;;   export handle (func (param i32 i32) (result i32))
;;   export calls (func (result i32))
;;
;; handle returns a pointer to its 2-byte result area: the u8 discriminant
;; (0 ok, 1 err) then the u8 enum index (0 rejected). By the argument's bytes:
;;   "fail"   err(rejected)
;;   "retry"  traps (unreachable)
;;   "block"  loops forever
;;   "grow"   memory.grow(1) until it returns -1, then traps
;;   other    ok
;; Every call of handle increments the global calls; a call that finds it
;; non-zero already (the instance was reused) traps. calls returns it.
;;
;; Memory: the literals at 16..44, the result area at 64, the heap from 1024.
;; Regenerate handler.wasm with `make guests` (wat2wasm handler.wat -o handler.wasm).
(module
  (memory (export "memory") 1)

  (data (i32.const 16) "fail")
  (data (i32.const 24) "retry")
  (data (i32.const 32) "block")
  (data (i32.const 40) "grow")

  (global $calls (mut i32) (i32.const 0))

  ;; heap is the bump allocator's next free byte; static data lives below it.
  (global $heap (mut i32) (i32.const 1024))

  ;; cabi_realloc(old_ptr, old_size, align, new_size) -> ptr. The host only
  ;; asks for fresh blocks, (0, 0, align, size): a bump allocation aligned up
  ;; to align, growing memory as needed. Traps when align is not a power of
  ;; two, when the block would pass 4 GiB or when memory.grow fails.
  (func $cabi_realloc (export "cabi_realloc")
    (param $old_ptr i32) (param $old_size i32) (param $align i32) (param $new_size i32)
    (result i32)
    (local $ptr i64) (local $end i64) (local $pages i64)
    (if (i32.or (i32.eqz (local.get $align))
                (i32.and (local.get $align) (i32.sub (local.get $align) (i32.const 1))))
      (then unreachable))
    ;; i64 arithmetic, so nothing wraps.
    (local.set $ptr
      (i64.and
        (i64.add (i64.extend_i32_u (global.get $heap))
                 (i64.extend_i32_u (i32.sub (local.get $align) (i32.const 1))))
        (i64.sub (i64.const 0) (i64.extend_i32_u (local.get $align)))))
    (local.set $end (i64.add (local.get $ptr) (i64.extend_i32_u (local.get $new_size))))
    (if (i64.gt_u (local.get $end) (i64.const 0xFFFFFFFF))
      (then unreachable))
    (local.set $pages (i64.shr_u (i64.add (local.get $end) (i64.const 0xFFFF)) (i64.const 16)))
    (if (i64.gt_u (local.get $pages) (i64.extend_i32_u (memory.size)))
      (then
        (if (i32.eq (memory.grow (i32.wrap_i64
                      (i64.sub (local.get $pages) (i64.extend_i32_u (memory.size)))))
                    (i32.const -1))
          (then unreachable))))
    (global.set $heap (i32.wrap_i64 (local.get $end)))
    (i32.wrap_i64 (local.get $ptr)))

  ;; equal reports whether the n bytes at p are the m bytes at q.
  (func $equal (param $p i32) (param $n i32) (param $q i32) (param $m i32) (result i32)
    (if (i32.ne (local.get $n) (local.get $m))
      (then (return (i32.const 0))))
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $n)))
        (if (i32.ne (i32.load8_u (local.get $p)) (i32.load8_u (local.get $q)))
          (then (return (i32.const 0))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $q (i32.add (local.get $q) (i32.const 1)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next)))
    (i32.const 1))

  (func (export "handle") (param $ptr i32) (param $len i32) (result i32)
    (if (global.get $calls)
      (then unreachable))
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    ;; ok, enum index 0
    (i32.store16 (i32.const 64) (i32.const 0))
    (if (call $equal (local.get $ptr) (local.get $len) (i32.const 16) (i32.const 4))
      (then
        (i32.store8 (i32.const 64) (i32.const 1))
        (return (i32.const 64))))
    (if (call $equal (local.get $ptr) (local.get $len) (i32.const 24) (i32.const 5))
      (then unreachable))
    (if (call $equal (local.get $ptr) (local.get $len) (i32.const 32) (i32.const 5))
      (then (loop $forever (br $forever))))
    (if (call $equal (local.get $ptr) (local.get $len) (i32.const 40) (i32.const 4))
      (then
        (loop $more
          (br_if $more (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))
        unreachable))
    (i32.const 64))

  (func (export "calls") (result i32)
    (global.get $calls))
)
