;; badrealloc2.wat: a hostile guest whose allocator returns misaligned
;; blocks.
;;
;; WIT:
;;   handle: func(arg: list<u32>) -> result<_, enum { rejected }>
;;
;; Core (TestGuestsValidate checks these lines against the binary):
;;   export memory (memory)
;;   export cabi_realloc (func (param i32 i32 i32 i32) (result i32))
;;   export handle (func (param i32 i32) (result i32))
;;
;; cabi_realloc returns 3 whatever it is asked: in bounds, fine for align 1,
;; misaligned for align 2, 4 and 8. handle takes a list<u32> so the host
;; asks for align 4 and must refuse the block. handle returns ok.
;; Regenerate badrealloc2.wasm with `make guests` (wat2wasm badrealloc2.wat -o badrealloc2.wasm).
(module
  (memory (export "memory") 1)

  (func (export "cabi_realloc")
    (param $old_ptr i32) (param $old_size i32) (param $align i32) (param $new_size i32)
    (result i32)
    (i32.const 3))

  ;; ok: discriminant 0, enum index 0, in the 2-byte result area at 64.
  (func (export "handle") (param $ptr i32) (param $len i32) (result i32)
    (i32.store16 (i32.const 64) (i32.const 0))
    (i32.const 64))
)
