;; wasi.wat: a guest granted WASI (wasmhost.GrantWASI) that exits or
;; sleeps, for the host's exit cause and its sleeps cut at the deadline.
;;
;; WIT:
;;   handle: func(arg: string) -> result<_, enum { rejected }>
;;
;; Core (TestGuestsValidate checks these lines against the binary):
;;   import wasi_snapshot_preview1 proc_exit (func (param i32))
;;   import wasi_snapshot_preview1 poll_oneoff (func (param i32 i32 i32 i32) (result i32))
;;   export memory (memory)
;;   export cabi_realloc (func (param i32 i32 i32 i32) (result i32))
;;   export handle (func (param i32 i32) (result i32))
;;
;; By the argument's first byte: 'e' calls proc_exit(3); 's' sleeps for an
;; hour (poll_oneoff on one relative monotonic clock subscription), then
;; returns ok; anything else, the empty string included, returns ok. The
;; result area is the 2 zero bytes at 64: ok.
;; Regenerate wasi.wasm with `make guests` (wat2wasm wasi.wat -o wasi.wasm).
(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff"
    (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)

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

  ;; The subscription at 128 (48 bytes): userdata 0, tag 0 (clock), clock
  ;; id 1 (monotonic) at 144, timeout at 152 in ns, precision 0, flags 0
  ;; (relative). Its event goes to 256, the event count to 320.
  (func $handle (export "handle") (param $p i32) (param $n i32) (result i32)
    (if (i32.eqz (local.get $n))
      (then (return (i32.const 64))))
    (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 101)) ;; 'e'
      (then (call $proc_exit (i32.const 3))))
    (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 115)) ;; 's'
      (then
        (i32.store (i32.const 144) (i32.const 1))
        (i64.store (i32.const 152) (i64.const 3600000000000))
        (drop (call $poll_oneoff (i32.const 128) (i32.const 256) (i32.const 1) (i32.const 320)))))
    (i32.const 64)))
