// Package jsontree owns the project's strict JSON decoding of documents
// with a schema (the trigger configuration, the credentials file, a
// server's INFO): it reads exactly one JSON value, with internal/jsonlex's
// tokens, UTF-8 policy and depth rule, into a tree that keeps every object member in
// input order, duplicate keys included, with the byte span each value was
// read from; it walks a schema over that tree and reports every unknown,
// duplicate or missing key and every value of the wrong type with its
// path, stopping at none. It refuses to merge or drop duplicate keys, to
// rewrite a string, and to read nesting past the caller's depth bound.
//
// encoding/json's Unmarshal cannot do this: it keeps the last of duplicate
// keys, stops at the first fault, and replaces invalid UTF-8 with U+FFFD.
//
// Contents:
//
//   - The tree: [Kind], [Node], [Member]; [Node.Locate] maps a byte offset of
//     the input to the path of the value that holds it; [Node.Int] reads a
//     number written as an integer, the one rule of integers for the
//     formats.
//   - [Parse] and its depth rule.
//   - The schema walk: [Walker], [Want].
//   - Paths: the syntax shared by the decoders' violations ([Field],
//     [Index], [Key]): "bindings[3].ack_wait_ms", with a key read from input
//     always written by Key, which quotes and cuts it when it is not plain.
//   - Errors: [ParseError] and the sentinels of the rules, the one
//     vocabulary of strict JSON faults that the formats map onto their own
//     rules: [ErrSyntax], [ErrUTF8], [ErrTooDeep], [ErrTrailingData] from
//     Parse, [ErrUnknownKey], [ErrDuplicateKey], [ErrMissingKey],
//     [ErrWrongType] from the walk.
//
// Numbers are kept as the text they were written in; strings are
// unescaped by jsonlex, which refuses invalid UTF-8 and a lone surrogate
// escape (ErrUTF8) instead of replacing them.
package jsontree
