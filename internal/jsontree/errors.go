package jsontree

import "errors"

// Sentinels wrapped by every *ParseError, one per reason a parse stops.
var (
	// ErrSyntax: the input is not JSON (empty, truncated, a bad token, a
	// key that is not a string, a bad escape or a control character in a
	// string).
	ErrSyntax = errors.New("jsontree: invalid json")
	// ErrUTF8: a string (a key or a value) holds invalid UTF-8 or an
	// escaped half of a surrogate pair alone (jsonlex.ErrUTF8).
	ErrUTF8 = errors.New("jsontree: invalid utf-8 or unpaired surrogate in a json string")
	// ErrTooDeep: a value lies deeper than the depth bound.
	ErrTooDeep = errors.New("jsontree: json nested too deep")
	// ErrTrailingData: anything but white space after the value.
	ErrTrailingData = errors.New("jsontree: data after the json value")
)

// Sentinels a Walker reports, one per rule of a schema.
var (
	// ErrUnknownKey: an object holds a key its schema does not name.
	ErrUnknownKey = errors.New("jsontree: key not in the schema")
	// ErrDuplicateKey: an object holds a key twice.
	ErrDuplicateKey = errors.New("jsontree: key twice in one object")
	// ErrMissingKey: an object lacks a required key.
	ErrMissingKey = errors.New("jsontree: required key absent")
	// ErrWrongType: a value is not of the JSON type its schema names.
	ErrWrongType = errors.New("jsontree: value of the wrong json type")
)

// ParseError reports where and why Parse stopped. Err is ErrSyntax,
// ErrUTF8, ErrTooDeep or ErrTrailingData.
type ParseError struct {
	// Path is the path (see Key and Index) of the value being read when
	// the parse stopped: the value past the bound for ErrTooDeep, the
	// innermost value open for ErrSyntax and ErrUTF8 (the object, for a
	// fault in a key), "" (the document) for ErrTrailingData and for an
	// error before or outside the root's first container.
	Path string
	// Offset is the byte offset of the fault in the input.
	Offset int64
	// Err is the sentinel of the reason.
	Err error
}

// Error returns the reason only: the path is built from the document's keys
// and is left to the caller to show.
func (e *ParseError) Error() string { return e.Err.Error() }

// Unwrap returns the sentinel.
func (e *ParseError) Unwrap() error { return e.Err }
