;; norealloc.wat: a guest without an allocator.
;;
;; WIT:
;;   handle: func(arg: string) -> result<_, enum { rejected }>
;;
;; Core (TestGuestsValidate checks these lines against the binary):
;;   export memory (memory)
;;   export handle (func (param i32 i32) (result i32))
;;
;; No cabi_realloc: the host has nowhere to put the argument. handle
;; returns ok.
;; Regenerate norealloc.wasm with `make guests` (wat2wasm norealloc.wat -o norealloc.wasm).
(module
  (memory (export "memory") 1)

  ;; ok: discriminant 0, enum index 0, in the 2-byte result area at 64.
  (func (export "handle") (param $ptr i32) (param $len i32) (result i32)
    (i32.store16 (i32.const 64) (i32.const 0))
    (i32.const 64))
)
