package acksubject

import (
	"errors"
	"strconv"
)

// Sentinels for the conditions callers branch on.
var (
	// ErrInvalid is matched by every error that reports a subject or an
	// Info outside the grammar (every *SyntaxError).
	ErrInvalid = errors.New("acksubject: invalid ack subject")

	// ErrMismatch is matched by every *MismatchError: a valid subject that
	// names another stream, consumer or account.
	ErrMismatch = errors.New("acksubject: ack subject does not match the binding")
)

// Rule is the grammar rule a token broke. Each Rule is also an error, so
// errors.Is(err, RuleLeadingZero) reports whether a *SyntaxError broke it.
type Rule uint8

const (
	// RuleTooLong: the subject is longer than MaxLen.
	RuleTooLong Rule = iota + 1
	// RuleTokenCount: the subject has neither 9 (the classic form) nor 11 (v2)
	// tokens.
	RuleTokenCount
	// RuleEmpty: the token is empty.
	RuleEmpty
	// RuleWildcard: the token is exactly "*" or ">".
	RuleWildcard
	// RulePrefix: token 0 is not "$JS" or token 1 is not "ACK".
	RulePrefix
	// RuleDomain: the v2 domain token is not "_".
	RuleDomain
	// RuleAccountHash: the account hash is not 8 characters of
	// 0-9, A-Z, a-z (or, for an Info of the classic form, is set at all).
	RuleAccountHash
	// RuleNameTooLong: a stream or consumer name is longer than MaxNameLen.
	RuleNameTooLong
	// RuleNameByte: a stream or consumer name holds a byte the broker's
	// asset-name rule forbids, or NUL.
	RuleNameByte
	// RuleSign: a number starts with '+' or '-' (or an Info timestamp is
	// negative).
	RuleSign
	// RuleNotDecimal: a number holds a byte other than ASCII 0-9.
	RuleNotDecimal
	// RuleLeadingZero: a number of more than one digit starts with '0'.
	RuleLeadingZero
	// RuleOverflow: a number exceeds its type (uint64, or int64 for the
	// timestamp).
	RuleOverflow
	// RuleZero: a delivery count or sequence is 0.
	RuleZero
	// RuleForm: an Info's Form is outside the enumeration.
	RuleForm
	// RuleExtended: the subject begins as the v2 form does ($JS.ACK, a
	// domain token, an account hash) but has more than 11 tokens: a
	// later server's extension of the v2 form, which this grammar does
	// not read. A caller may treat it as unsupported rather than corrupt.
	RuleExtended
)

// String describes the rule in a few lower-case words.
func (r Rule) String() string {
	switch r {
	case RuleTooLong:
		return "subject too long"
	case RuleTokenCount:
		return "wrong token count"
	case RuleEmpty:
		return "empty token"
	case RuleWildcard:
		return "wildcard token"
	case RulePrefix:
		return "not $JS.ACK"
	case RuleDomain:
		return "domain other than _"
	case RuleAccountHash:
		return "malformed account hash"
	case RuleNameTooLong:
		return "name too long"
	case RuleNameByte:
		return "forbidden byte in name"
	case RuleSign:
		return "signed number"
	case RuleNotDecimal:
		return "not a decimal number"
	case RuleLeadingZero:
		return "leading zero"
	case RuleOverflow:
		return "number overflows"
	case RuleZero:
		return "zero count or sequence"
	case RuleForm:
		return "unknown form"
	case RuleExtended:
		return "extended v2 form"
	}
	return "Rule(" + strconv.Itoa(int(r)) + ")"
}

// Error returns the rule prefixed with the package name.
func (r Rule) Error() string { return "acksubject: " + r.String() }

// SyntaxError reports a subject, or an Info, outside the grammar. It carries
// no byte of the subject.
type SyntaxError struct {
	// Index is the 0-based token index of the failing token (for an Info,
	// the index the field would have in its subject), or -1 when the rule
	// concerns the whole subject or a field the form does not carry.
	Index int
	// Field is the part of the subject that failed.
	Field Field
	// Rule is the rule it broke.
	Rule Rule
}

// Error returns a message such as
// "acksubject: token 4 (delivered): leading zero".
func (e *SyntaxError) Error() string {
	if e.Index < 0 {
		return "acksubject: " + e.Field.String() + ": " + e.Rule.String()
	}
	return "acksubject: token " + strconv.Itoa(e.Index) + " (" + e.Field.String() + "): " + e.Rule.String()
}

// Unwrap returns ErrInvalid and the Rule, so errors.Is matches either.
func (e *SyntaxError) Unwrap() []error { return []error{ErrInvalid, e.Rule} }

// MismatchError reports a valid subject naming another stream, consumer or
// account than the Binding it was checked against. It carries neither name.
type MismatchError struct {
	// Field is FieldStream, FieldConsumer or FieldAccountHash.
	Field Field
}

// Error returns a message such as
// "acksubject: stream does not match the binding".
func (e *MismatchError) Error() string {
	return "acksubject: " + e.Field.String() + " does not match the binding"
}

// Unwrap returns ErrMismatch.
func (e *MismatchError) Unwrap() error { return ErrMismatch }

// syntaxError builds the error for the token at index.
func syntaxError(index int, field Field, rule Rule) error {
	return &SyntaxError{Index: index, Field: field, Rule: rule}
}
