;; types.wat: one echo per type family, for end-to-end tests of the host's
;; canonical ABI. Each returns its argument; sum16 and sum17 add theirs.
;;
;; WIT, then core (TestGuestsValidate checks the core lines against the binary):
;;   export memory (memory)
;;   export cabi_realloc (func (param i32 i32 i32 i32) (result i32))
;;
;;   echo-bool: func(v: bool) -> bool
;;   export echo-bool (func (param i32) (result i32))
;;   echo-s8: func(v: s8) -> s8
;;   export echo-s8 (func (param i32) (result i32))
;;   echo-u16: func(v: u16) -> u16
;;   export echo-u16 (func (param i32) (result i32))
;;   echo-s32: func(v: s32) -> s32
;;   export echo-s32 (func (param i32) (result i32))
;;   echo-u64: func(v: u64) -> u64
;;   export echo-u64 (func (param i64) (result i64))
;;   echo-f32: func(v: f32) -> f32
;;   export echo-f32 (func (param f32) (result f32))
;;   echo-f64: func(v: f64) -> f64
;;   export echo-f64 (func (param f64) (result f64))
;;   echo-char: func(v: char) -> char
;;   export echo-char (func (param i32) (result i32))
;;   echo-enum: func(v: enum { x, y, z }) -> enum { x, y, z }
;;   export echo-enum (func (param i32) (result i32))
;;   low-u64: func(v: u64) -> u32   (the low 32 bits of v)
;;   export low-u64 (func (param i64) (result i32))
;;   neg-f64: func(v: f64) -> bool  (v < 0)
;;   export neg-f64 (func (param f64) (result i32))
;;
;;   echo-string: func(v: string) -> string
;;   export echo-string (func (param i32 i32) (result i32))
;;     result area (align 4): ptr @0, len @4
;;   echo-list-u32: func(v: list<u32>) -> list<u32>
;;   export echo-list-u32 (func (param i32 i32) (result i32))
;;     result area (align 4): ptr @0, len @4; traps when ptr is not 4-aligned
;;   echo-record: func(v: record { a: u8, b: u64, c: string }) -> same record
;;   export echo-record (func (param i32 i64 i32 i32) (result i32))
;;     result area (align 8): a @0, b @8, c.ptr @16, c.len @20
;;   echo-option-u32: func(v: option<u32>) -> option<u32>
;;   export echo-option-u32 (func (param i32 i32) (result i32))
;;     result area (align 4): discriminant u8 @0, u32 @4
;;   echo-variant: func(v: variant { a(u32), b(f32), c }) -> same variant
;;   export echo-variant (func (param i32 i32) (result i32))
;;     the payload is joined to i32 (b's f32 as its bits); result area
;;     (align 4): discriminant u8 @0, payload @4
;;   echo-result: func(v: result<u64, string>) -> result<u64, string>
;;   export echo-result (func (param i32 i64 i32) (result i32))
;;     payload joined to [i64, i32]: ok's u64, or err's ptr (as i64) and len;
;;     result area (align 8): discriminant u8 @0, u64 @8 or ptr @8, len @12
;;   echo-tuple: func(v: tuple<u8, s16, f64>) -> tuple<u8, s16, f64>
;;   export echo-tuple (func (param i32 i32 f64) (result i32))
;;     result area (align 8): u8 @0, s16 @2, f64 @8
;;
;;   sum16: func(p0: u32, ..., p15: u32) -> u32
;;   export sum16 (func (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32) (result i32))
;;   sum17: func(p0: u32, ..., p16: u32) -> u32
;;   export sum17 (func (param i32) (result i32))
;;     17 flat params pass the 16 limit: one pointer to the tuple, 17
;;     consecutive u32 (68 bytes, align 4); traps when it is not 4-aligned
;;
;; Memory: every result area is at 256 (8-aligned), the heap from 1024.
;; Regenerate types.wasm with `make guests` (wat2wasm types.wat -o types.wasm).
(module
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

  (func (export "echo-bool") (param i32) (result i32) (local.get 0))
  (func (export "echo-s8") (param i32) (result i32) (local.get 0))
  (func (export "echo-u16") (param i32) (result i32) (local.get 0))
  (func (export "echo-s32") (param i32) (result i32) (local.get 0))
  (func (export "echo-u64") (param i64) (result i64) (local.get 0))
  (func (export "echo-f32") (param f32) (result f32) (local.get 0))
  (func (export "echo-f64") (param f64) (result f64) (local.get 0))
  (func (export "echo-char") (param i32) (result i32) (local.get 0))
  (func (export "echo-enum") (param i32) (result i32) (local.get 0))

  (func (export "echo-string") (param $ptr i32) (param $len i32) (result i32)
    (i32.store (i32.const 256) (local.get $ptr))
    (i32.store offset=4 (i32.const 256) (local.get $len))
    (i32.const 256))

  (func (export "echo-list-u32") (param $ptr i32) (param $len i32) (result i32)
    (if (i32.and (local.get $ptr) (i32.const 3))
      (then unreachable))
    (i32.store (i32.const 256) (local.get $ptr))
    (i32.store offset=4 (i32.const 256) (local.get $len))
    (i32.const 256))

  (func (export "echo-record")
    (param $a i32) (param $b i64) (param $c_ptr i32) (param $c_len i32) (result i32)
    (i32.store8 (i32.const 256) (local.get $a))
    (i64.store offset=8 (i32.const 256) (local.get $b))
    (i32.store offset=16 (i32.const 256) (local.get $c_ptr))
    (i32.store offset=20 (i32.const 256) (local.get $c_len))
    (i32.const 256))

  (func (export "echo-option-u32") (param $disc i32) (param $v i32) (result i32)
    (i32.store8 (i32.const 256) (local.get $disc))
    (i32.store offset=4 (i32.const 256) (local.get $v))
    (i32.const 256))

  (func (export "echo-variant") (param $disc i32) (param $payload i32) (result i32)
    (i32.store8 (i32.const 256) (local.get $disc))
    (i32.store offset=4 (i32.const 256) (local.get $payload))
    (i32.const 256))

  (func (export "echo-result") (param $disc i32) (param $p i64) (param $len i32) (result i32)
    (i32.store8 (i32.const 256) (local.get $disc))
    (if (i32.eqz (local.get $disc))
      (then (i64.store offset=8 (i32.const 256) (local.get $p)))
      (else
        (i32.store offset=8 (i32.const 256) (i32.wrap_i64 (local.get $p)))
        (i32.store offset=12 (i32.const 256) (local.get $len))))
    (i32.const 256))

  (func (export "echo-tuple") (param $a i32) (param $b i32) (param $c f64) (result i32)
    (i32.store8 (i32.const 256) (local.get $a))
    (i32.store16 offset=2 (i32.const 256) (local.get $b))
    (f64.store offset=8 (i32.const 256) (local.get $c))
    (i32.const 256))

  (func (export "sum16")
    (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32)
    (result i32)
    (i32.add (i32.add (i32.add (i32.add (local.get 0) (local.get 1))
                               (i32.add (local.get 2) (local.get 3)))
                      (i32.add (i32.add (local.get 4) (local.get 5))
                               (i32.add (local.get 6) (local.get 7))))
             (i32.add (i32.add (i32.add (local.get 8) (local.get 9))
                               (i32.add (local.get 10) (local.get 11)))
                      (i32.add (i32.add (local.get 12) (local.get 13))
                               (i32.add (local.get 14) (local.get 15))))))

  (func (export "sum17") (param $args i32) (result i32)
    (local $i i32) (local $sum i32)
    (if (i32.and (local.get $args) (i32.const 3))
      (then unreachable))
    (block $done
      (loop $next
        (br_if $done (i32.eq (local.get $i) (i32.const 17)))
        (local.set $sum
          (i32.add (local.get $sum)
                   (i32.load (i32.add (local.get $args) (i32.shl (local.get $i) (i32.const 2))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $sum))

  ;; An i32 result after an i64 or f64 parameter: wazero leaves the upper
  ;; half of the result's uint64 as the parameter left it.
  (func (export "low-u64") (param $v i64) (result i32)
    (i32.wrap_i64 (local.get $v)))
  (func (export "neg-f64") (param $v f64) (result i32)
    (f64.lt (local.get $v) (f64.const 0)))
)
