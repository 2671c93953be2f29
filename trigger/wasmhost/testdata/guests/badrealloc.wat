;; badrealloc.wat: a hostile guest whose allocator returns an out-of-bounds
;; block.
;;
;; WIT:
;;   handle: func(arg: string) -> result<_, enum { rejected }>
;;
;; Core (TestGuestsValidate checks these lines against the binary):
;;   export memory (memory)
;;   export cabi_realloc (func (param i32 i32 i32 i32) (result i32))
;;   export handle (func (param i32 i32) (result i32))
;;
;; cabi_realloc returns 0xFFFFFFFF whatever it is asked: the host must not
;; write the argument there. handle returns ok.
;; Regenerate badrealloc.wasm with `make guests` (wat2wasm badrealloc.wat -o badrealloc.wasm).
(module
  (memory (export "memory") 1)

  (func (export "cabi_realloc")
    (param $old_ptr i32) (param $old_size i32) (param $align i32) (param $new_size i32)
    (result i32)
    (i32.const 0xFFFFFFFF))

  ;; ok: discriminant 0, enum index 0, in the 2-byte result area at 64.
  (func (export "handle") (param $ptr i32) (param $len i32) (result i32)
    (i32.store16 (i32.const 64) (i32.const 0))
    (i32.const 64))
)
