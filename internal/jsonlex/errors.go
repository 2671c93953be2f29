package jsonlex

import "errors"

// Sentinels, one per kind of fault; each function returns them unwrapped,
// with the offset of the fault, so that comparing with == is enough.
var (
	// ErrSyntax: a byte that no JSON token may hold at that point, or the
	// input ends inside a value.
	ErrSyntax = errors.New("jsonlex: invalid json")
	// ErrString: a string holds a control character or an unknown or
	// malformed escape, or the input ends inside it.
	ErrString = errors.New("jsonlex: invalid json string")
	// ErrUTF8: a string holds invalid UTF-8 or an escaped surrogate that is
	// not half of a pair (see the package documentation).
	ErrUTF8 = errors.New("jsonlex: invalid utf-8 or unpaired surrogate in a json string")
	// ErrDepth: a value lies deeper than the caller's bound.
	ErrDepth = errors.New("jsonlex: json nested too deeply")
)
