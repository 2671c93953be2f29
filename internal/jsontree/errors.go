package jsontree

import "errors"

// Sentinels wrapped by every *ParseError, one per reason a parse stops.
var (
	// ErrSyntax: the input is not JSON (empty, truncated, a bad token, a
	// key that is not a string).
	ErrSyntax = errors.New("jsontree: invalid json")
	// ErrTooDeep: a container sits at the depth bound or past it.
	ErrTooDeep = errors.New("jsontree: json nested too deep")
	// ErrTrailingData: anything but white space after the value.
	ErrTrailingData = errors.New("jsontree: data after the json value")
)

// ParseError reports where and why Parse stopped. Err is ErrSyntax,
// ErrTooDeep or ErrTrailingData.
type ParseError struct {
	// Path is the path (see Key and Index) of the value being read when
	// the parse stopped: the container at the bound for ErrTooDeep, the
	// innermost value open for ErrSyntax, "" (the document) for
	// ErrTrailingData and for an error before or outside the root's
	// first container.
	Path string
	// Err is the sentinel of the reason.
	Err error
}

// Error returns the reason only: the path is built from the document's keys
// and is left to the caller to show.
func (e *ParseError) Error() string { return e.Err.Error() }

// Unwrap returns the sentinel.
func (e *ParseError) Unwrap() error { return e.Err }
