// Package refhost owns a reference implementation of trigger.Host: an
// in-process registry of Go functions with declared argument types, the
// strict codec of their argument arrays
// (application/vnd.latent.wit-values.v1+json), publications, credentials
// and principals that can be revoked, routes with generations that can be
// replaced, an admission limit and per-activation input accounting. It
// refuses every payload that is not exactly one well-typed argument array,
// and never adjusts, coerces or guesses.
//
// Contents:
//
//   - MediaType and the bounds, as named constants.
//   - Types: Kind, Type, Field, Case, their constructors and String; the
//     rules a Type must follow; ParseType, the inverse of Type.String.
//   - Values: the Go values of each kind (OptionValue, VariantValue,
//     ResultValue); Signature, a function's validated parameter list;
//     Signature.Decode, the strict decoder, over the lexer of
//     internal/jsonlex; Signature.Append, the canonical encoder.
//   - The Host: its catalog, inbound reservations and statistics.
//   - Errors: sentinels, Rule (what a value or a type breaks),
//     ArgumentError, TypeError and the host's errors.
//
// # The payload encoding, version 1
//
// A payload is one JSON text (RFC 8259) in UTF-8, at most
// trigger.MaxPayloadBytes long: an array with exactly one element per
// declared parameter of the function, in declaration order. Whitespace (space, tab, LF, CR) is
// allowed between tokens and around the array; nothing else may follow
// the array. There is no byte-order mark. Each element is encoded by its
// declared type:
//
//	bool          true or false.
//	s8 s16 s32 s64
//	u8 u16 u32 u64
//	              A JSON number in integer form: an optional '-', then "0"
//	              or a digit 1-9 followed by digits. No fraction, no
//	              exponent, no '+', no leading zero, and no "-0". The
//	              value must lie in the type's range (u8 0..255, s8
//	              -128..127, and so on up to u64 and s64); it is read from
//	              the decimal text exactly, never through a float. 64-bit
//	              values are JSON numbers too, never strings: a producer
//	              whose JSON numbers are IEEE doubles must write values
//	              beyond 2^53 with an exact serialiser.
//	f32 f64       A JSON number (any form RFC 8259 allows, fraction and
//	              exponent included), rounded to the nearest value of the
//	              type; a finite number that rounds to infinity is out of
//	              range, one that rounds to zero is zero. "-0" is negative
//	              zero. The three non-finite values are the JSON strings
//	              "nan", "inf" and "-inf", exactly (every NaN is read as
//	              one quiet NaN); any other string is refused.
//	char          A JSON string holding exactly one Unicode scalar value.
//	string        A JSON string. Escapes are those of RFC 8259; the decoded
//	              text must be valid UTF-8 and a \u escape of a surrogate
//	              must be half of a correctly ordered pair, so a lone
//	              surrogate, raw or escaped, is refused. A raw control
//	              character (below U+0020) is a syntax error. Strings are
//	              bounded by the payload: a decoded string is never longer
//	              than its encoding.
//	list<T>       A JSON array of any length, each element a T.
//	tuple<T, ...> A JSON array with exactly one element per member type.
//	record{f: T, ...}
//	              A JSON object with exactly the declared fields, in any
//	              order: an unknown field, a missing field or a field given
//	              twice is refused.
//	option<T>     null for none. For some(v): the encoding of v, unless T
//	              is itself an option, in which case {"some": v}. So
//	              option<option<u8>> encodes none as null, some(none) as
//	              {"some": null} and some(some(3)) as {"some": 3}; every
//	              value has exactly one encoding, at any nesting.
//	enum{a, ...}  A JSON string, the name of one case.
//	variant{a, b(T), ...}
//	              A JSON object with exactly one member, named after the
//	              case; its value is the payload, or null for a case
//	              without payload.
//	result<T, E>  {"ok": v} or {"err": e}, exactly one member; null for a
//	              side without payload (result<_, E> has no ok payload,
//	              result<T> no err payload, result neither).
//
// Flags, resources and borrowed handles are not part of version 1.
// Object keys are compared after unescaping, byte for byte. Names (record
// fields, cases) are WIT identifiers: words of [a-z][a-z0-9]* or
// [A-Z][A-Z0-9]* joined by '-', at most 64 bytes.
//
// # Canonical form
//
// Signature.Append writes one canonical encoding of every value: no
// whitespace, record fields in declared order, integers in the form above,
// strings with only '"', '\' and the control characters escaped (\b \f \n
// \r \t, others as \u00xx in lower case), and each float as the shortest
// JSON number that reads back as the same value: take the shortest digit
// string that round-trips, then the shortest of its plain decimal form and
// its exponent forms (plain first, then the fewest digits before the point,
// on a tie; exponents carry no '+' and no leading zero). Every payload the
// decoder accepts re-encodes to a canonical payload no longer than itself,
// which decodes to the same values.
//
// # Go values
//
// Decode returns, and Append takes, one Go value per parameter:
//
//	bool bool; s8 int8; s16 int16; s32 int32; s64 int64; u8 uint8;
//	u16 uint16; u32 uint32; u64 uint64; f32 float32; f64 float64;
//	char rune; string string; list and tuple []any; record
//	map[string]any keyed by field name; option OptionValue; enum string
//	(the case name); variant VariantValue; result ResultValue.
//
// Nil is the value of no type: a payload-less variant case or result side
// has a nil Value, and every other position holds a non-nil value.
//
// # Errors and bounds
//
// Every fault is an *ArgumentError naming the argument index, the path
// below it built from declared names and indexes only (".items[3].some"),
// the byte offset and the Rule broken; it never carries a byte of the
// payload. The decoder reports the first fault it meets. Its recursion
// follows the declared type, so the nesting it reads is bounded by
// MaxTypeDepth whatever the payload holds, and the payload is refused
// before reading when longer than trigger.MaxPayloadBytes.
//
// # The host
//
// Host implements trigger.Host. Functions are registered under a service
// and a revision; a route of a service names a revision and has a
// generation that grows each time the route is set. ReserveInbound pins
// the route's revision and generation and reserves one admission slot and
// the request's maximum input bytes, or fails with an error matching
// trigger.ErrUnavailable. Activate makes the final guarded start check
// (principal, then publication), looks the function up in the pinned
// revision, decodes the payload and runs the function on a goroutine the
// Host owns, under the earlier of the activation's deadline and budget.
// Outcomes: nil error is success; an *ApplicationError whose Code the
// function declares is a declared failure; a revoked principal is
// authentication rejected and a revoked publication permission rejected;
// a missing contract or function is incompatible contract; a payload the
// signature refuses is invalid arguments; a deadline is timeout and a
// cancelled context cancelled; any other error, an undeclared code and a
// panic are platform failures. The Result's Err carries the typed reason
// where there is one, with no payload byte: the *ArgumentError of an
// invalid payload, ErrNotPublished, the declared *ApplicationError. A
// function that ignores its context keeps
// its admission and input allocation until it returns, even after
// Release; WaitIdle waits for that.
//
// A function's Call carries the activation's identity as the runtime
// derived it (principal, a fresh ActivationID and Trace) and, when the
// event's header block held exactly one valid W3C traceparent, its Link:
// the producer's trace context for the function's telemetry to record as
// a link beside Trace, never as its parent. With or without the header,
// everything else in the Call is the same.
package refhost
