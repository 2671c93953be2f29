// Package jsonlex owns the lexical level of the project's strict JSON
// decoders over a byte slice: white space, strings with their escapes and
// surrogate pairs, numbers, literals, the separators of objects and arrays,
// and skipping a whole value under a depth bound, exactly as RFC 8259
// writes them; it refuses invalid UTF-8 and unpaired surrogates, and
// allocates nothing except in AppendUnescaped, which grows the caller's
// slice.
//
// The decoders above it (internal/jspull's consumer-info reply, refhost's argument
// arrays, internal/jsontree's tree of the trigger configuration and the
// credentials file) keep their own cursor and grammar: every function takes the
// input and an offset and returns the offset it reached, or on a fault the
// offset of the fault and one of this package's sentinels, which the
// caller maps onto its own errors.
//
// # UTF-8
//
// One policy for every string: the bytes between the quotes must be valid
// UTF-8 (no overlong form, no encoded surrogate), and a \u escape of a
// surrogate must be a high half immediately followed by an escaped low
// half. Anything else is ErrUTF8. encoding/json accepts such strings and
// replaces each fault with U+FFFD; refusing them instead means a decoded
// string is exactly the text the sender wrote, and two spellings of a key
// compare equal only when they decode to the same text. Everything this
// package accepts, encoding/json accepts too and decodes to the same
// strings and numbers (FuzzLex checks it).
//
// Contents:
//
//   - Values: [Space], [Literal], [Next] and [Key] (the separators of
//     containers), [Skip].
//   - Strings: [String]; over contents it accepted, [Rune],
//     [AppendUnescaped], [Equal] and [EqualRaw].
//   - Numbers: [Number], [Integer].
//   - Errors: [ErrSyntax], [ErrString], [ErrUTF8], [ErrDepth].
package jsonlex
