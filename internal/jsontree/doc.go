// Package jsontree owns the first pass of the project's strict JSON
// decoders: it reads exactly one JSON value into a tree that keeps every
// object member in input order, duplicate keys included, with the byte span
// each value was read from; it refuses to apply any schema, to merge or
// drop duplicate keys, and to read nesting past the caller's depth bound.
//
// A schema walk over the tree (in the package that owns the format) can
// then report every unknown, duplicate or missing key and every value of
// the wrong type with its path, instead of stopping at the first, which
// encoding/json's Unmarshal cannot do: it keeps the last of duplicate keys
// and ignores or stops at the rest.
//
// Contents:
//
//   - The tree: [Kind], [Node], [Member]; [Node.Locate] maps a byte offset of
//     the input to the path of the value that holds it, [Node.Depth] the
//     depth of the deepest value.
//   - [Parse] and its depth rule.
//   - Paths: the syntax shared by the decoders' violations ([Field],
//     [Index], [Key]): "bindings[3].ack_wait_ms", with a key read from input
//     quoted and cut to [MaxPathKeyBytes] when it is not plain.
//   - Errors: [ParseError] and the sentinels it wraps.
//
// Numbers are kept as the text they were written in; strings are unescaped
// as encoding/json unescapes them (invalid UTF-8 and lone surrogates become
// U+FFFD).
package jsontree
