// Package acksubject owns the closed grammar of JetStream acknowledgement
// subjects (the reply of a pulled message) as nats-server 2.14.6 emits them,
// and formats them back; it refuses every other subject, including forms a
// broker would still accept.
//
// # Grammar
//
// Two forms are accepted, told apart by their token count:
//
//	classic (9 tokens):  $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<timestamp>.<pending>
//	v2 (11 tokens):      $JS.ACK._.<account hash>.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<timestamp>.<pending>
//
// Tokens are separated by single dots and indexed from 0. The rules:
//
//   - tokens 0 and 1 are exactly "$JS" and "ACK";
//   - in the v2 form the domain (token 2) is exactly "_" and the
//     account hash (token 3) is 8 characters of 0-9, A-Z, a-z
//     (see [AccountHash]);
//   - stream and consumer tokens follow the broker's asset-name rule: not
//     empty, none of space, TAB, CR, LF, FF, '.', '*', '>', '\', '/'; so '@',
//     '%', '~', '$' and non-ASCII bytes are valid;
//   - numbers are plain ASCII decimal: no sign, no leading zero (a lone "0"
//     is fine where zero is allowed), no overflow; delivered, stream sequence
//     and consumer sequence are uint64 values of at least 1, the timestamp is
//     an int64 of Unix nanoseconds, at least 0, and pending is any uint64.
//
// Every accepted subject is exactly what [Info.String] makes of the [Info]
// parsed from it, byte for byte, and every valid Info formats to a subject
// that [Parse] reads back into the same Info.
//
// # Where this grammar is stricter than the broker
//
// nats-server 2.14.6 (consumer.go ackReplyInfo, parseAckReplyNum;
// jetstream.go isValidAssetName) reads acknowledgements more loosely than it
// writes them. Parse follows what the broker writes:
//
//   - the broker's reader takes 11 or more tokens as v2 and leaves the
//     domain and account hash to its subscription; Parse takes exactly 11
//     tokens, only the "_" domain and only a well-formed hash;
//   - the broker accepts leading zeros and silently wraps numbers that
//     overflow; it never writes either, so Parse refuses both. A uint64 field
//     may use the whole uint64 range: the broker writes it with %d and its
//     int64 reader wraps to the same bits, so the two agree;
//   - the broker names a stream or durable of at most [MaxNameLen] bytes
//     but does not cap a non-durable consumer name; Parse caps both, and
//     also refuses NUL, which no subject of this project may carry;
//   - the broker treats a zero delivery count or sequence as "cannot parse";
//     Parse refuses them with [RuleZero].
//
// Where the broker is stricter than this grammar nothing is lost: a subject
// that the broker emits always parses.
//
// # Errors
//
// A malformed subject yields a [*SyntaxError] naming the token index, the
// field and the [Rule] that failed; it matches [ErrInvalid] and its Rule with
// errors.Is. No error carries any byte of the subject, not even of the
// failing token: stream and consumer names are configuration a log need not
// hold, and the index and rule are enough to find the fault.
//
// [Binding.Check] confirms that a parsed Info names the configured stream and
// consumer (and, for v2, the expected account hash); a mismatch is a
// [*MismatchError] that matches [ErrMismatch].
//
// # Allocation
//
// Parse does not allocate: the Stream, Consumer and AccountHash fields of the
// returned Info are substrings of the subject and keep it alive. A subject
// held in a reused byte buffer is read with [Binding.ParseBytes], which takes
// them from the binding and does not allocate, with the same grammar and
// errors. [Info.Append] appends to
// the caller's buffer without allocating.
//
// The package imports nothing of this project and keeps no state.
package acksubject
