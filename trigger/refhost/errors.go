package refhost

import (
	"errors"
	"strconv"

	"github.com/latent-systems/latent-nats/trigger"
)

// Sentinels of the codec.
var (
	// ErrInvalidArguments is matched by every *ArgumentError: a payload,
	// or Go values, that are not one argument array of the signature.
	ErrInvalidArguments = errors.New("refhost: invalid arguments")

	// ErrInvalidType is matched by every *TypeError: a Type, a type text or
	// a parameter list outside the rules.
	ErrInvalidType = errors.New("refhost: invalid type")
)

// Sentinels of the host. The first two also match the trigger package's
// words for the same condition.
var (
	// ErrNotPublished: the binding's publication was never published or is
	// revoked. It matches trigger.ErrNotEligible.
	ErrNotPublished error = &hostError{"refhost: publication not published or revoked", trigger.ErrNotEligible}

	// ErrCredentialRevoked: the tenant's credential is revoked. It matches
	// trigger.ErrCredentialRevoked.
	ErrCredentialRevoked error = &hostError{"refhost: tenant credential revoked", trigger.ErrCredentialRevoked}

	// ErrInvalidConfig: a Config outside its bounds.
	ErrInvalidConfig = errors.New("refhost: invalid host config")

	// ErrInvalidName: a service, contract, function, revision, route,
	// tenant or principal name that is empty, longer than trigger.MaxTargetNameLen
	// or holds a byte outside printable ASCII, or a space.
	ErrInvalidName = errors.New("refhost: invalid name")

	// ErrInvalidFunction: a Function without Func, with an invalid
	// parameter list or result type, with invalid failure codes, or whose
	// Memory is negative or more than the Host's MaxMemoryBytes.
	ErrInvalidFunction = errors.New("refhost: invalid function")

	// ErrInvalidContract: a Contract with no functions or too many, a
	// function named twice, or an invalid parameter list or result type
	// (an invalid name is ErrInvalidName).
	ErrInvalidContract = errors.New("refhost: invalid contract")

	// ErrDuplicateFunction: a function registered twice under the same
	// service, revision, contract and name.
	ErrDuplicateFunction = errors.New("refhost: function already registered")

	// ErrNoRoute: the binding's route is not set.
	ErrNoRoute = errors.New("refhost: route not set")

	// ErrInvalidRequest: an InboundRequest whose MaxInputBytes is outside
	// 1..trigger.MaxPayloadBytes.
	ErrInvalidRequest = errors.New("refhost: invalid inbound request")
)

// hostError is a fixed message that also matches a sentinel of package
// trigger.
type hostError struct {
	msg  string
	base error
}

func (e *hostError) Error() string { return e.msg }
func (e *hostError) Unwrap() error { return e.base }

// Rule is what a payload, a Go value given to Append, a Type, a type
// text or a parameter list breaks: the one vocabulary of *ArgumentError
// and *TypeError. Each Rule is also an error, so errors.Is(err,
// RuleOutOfRange) reports whether an error broke it.
type Rule uint8

// Rules. The first group is broken by values (*ArgumentError), the second
// by types (*TypeError); RuleSyntax and RuleTooLarge by either.
const (
	// RuleTooLarge: the payload is longer than trigger.MaxPayloadBytes (or
	// its encoding would be); more than MaxTypeNodes types in a signature,
	// or a type text longer than 64 KiB.
	RuleTooLarge Rule = iota + 1
	// RuleSyntax: not JSON: a bad literal, number, escape or delimiter, an
	// unterminated value, a raw control character in a string; or a type
	// text ParseType cannot read.
	RuleSyntax
	// RuleTrailingData: something other than whitespace after the array.
	RuleTrailingData
	// RuleArgCount: the array does not hold one element per parameter.
	RuleArgCount
	// RuleWrongType: a JSON value (or Go value) of another type than
	// declared, or a string that is not one of a float's three names.
	RuleWrongType
	// RuleNotInteger: a number with fraction or exponent, or "-0", where
	// an integer is declared.
	RuleNotInteger
	// RuleOutOfRange: an integer outside its type, or a finite float that
	// rounds to infinity.
	RuleOutOfRange
	// RuleInvalidUTF8: text that is not valid UTF-8, a lone surrogate, or
	// a char that is not a Unicode scalar value.
	RuleInvalidUTF8
	// RuleNotOneChar: a char string holding zero or several characters.
	RuleNotOneChar
	// RuleDuplicateKey: an object key given twice.
	RuleDuplicateKey
	// RuleUnknownField: a record key the type does not declare.
	RuleUnknownField
	// RuleMissingField: a declared record field absent.
	RuleMissingField
	// RuleUnknownCase: an enum or variant case, a result side or an
	// option wrapper key the type does not declare.
	RuleUnknownCase
	// RuleMemberCount: a variant, result or option wrapper object without
	// exactly one member.
	RuleMemberCount
	// RuleLength: a tuple without exactly one element per member type.
	RuleLength

	// RuleTooDeep: a type nested deeper than MaxTypeDepth.
	RuleTooDeep
	// RuleUnknownKind: a Kind outside the enumeration.
	RuleUnknownKind
	// RuleShape: a part the kind needs is missing (a list without Elem) or
	// a part it does not have is set (a bool with Fields, an enum case
	// with a payload).
	RuleShape
	// RuleEmpty: a record, tuple, enum or variant without members.
	RuleEmpty
	// RuleInvalidName: a field or case name that is not a WIT identifier
	// of at most 64 bytes.
	RuleInvalidName
	// RuleDuplicateName: a field or case name used twice in one type.
	RuleDuplicateName
	// RuleParamCount: more than 32 parameters.
	RuleParamCount
	ruleEnd
)

// String describes the rule in a few lower-case words.
func (r Rule) String() string {
	switch r {
	case RuleTooLarge:
		return "too large"
	case RuleSyntax:
		return "syntax error"
	case RuleTrailingData:
		return "data after the argument array"
	case RuleArgCount:
		return "wrong argument count"
	case RuleWrongType:
		return "wrong type"
	case RuleNotInteger:
		return "not an integer"
	case RuleOutOfRange:
		return "out of range"
	case RuleInvalidUTF8:
		return "invalid utf-8"
	case RuleNotOneChar:
		return "not one character"
	case RuleDuplicateKey:
		return "duplicate key"
	case RuleUnknownField:
		return "unknown field"
	case RuleMissingField:
		return "missing field"
	case RuleUnknownCase:
		return "unknown case"
	case RuleMemberCount:
		return "not exactly one member"
	case RuleLength:
		return "wrong tuple length"
	case RuleTooDeep:
		return "type nested too deep"
	case RuleUnknownKind:
		return "unknown kind"
	case RuleShape:
		return "parts do not match the kind"
	case RuleEmpty:
		return "no members"
	case RuleInvalidName:
		return "invalid name"
	case RuleDuplicateName:
		return "duplicate name"
	case RuleParamCount:
		return "too many parameters"
	}
	return "Rule(" + strconv.Itoa(int(r)) + ")"
}

// Error returns the rule prefixed with the package name.
func (r Rule) Error() string { return "refhost: " + r.String() }

// ArgumentError reports a payload, or Go values, outside a signature. It
// carries no byte of the payload: Path is built from declared names and
// indexes only.
type ArgumentError struct {
	// Arg is the 0-based index of the argument at fault, or -1 when the
	// payload as a whole is (size, array syntax, count, trailing data).
	Arg int
	// Path locates the fault below the argument: ".field", "[index]",
	// ".case", ".ok", ".err" or ".some" steps, empty for the argument
	// itself.
	Path string
	// Offset is the byte offset in the payload where the fault was found,
	// or -1 when encoding.
	Offset int
	// Rule is the rule broken.
	Rule Rule
}

// Error returns a message such as
// "refhost: argument 1 .items[3]: out of range (offset 42)", or
// "refhost: payload: too large (offset 0)" for the payload as a whole.
func (e *ArgumentError) Error() string {
	s := "refhost: payload: "
	if e.Arg >= 0 {
		s = "refhost: argument " + strconv.Itoa(e.Arg)
		if e.Path != "" {
			s += " " + e.Path
		}
		s += ": "
	}
	s += e.Rule.String()
	if e.Offset >= 0 {
		s += " (offset " + strconv.Itoa(e.Offset) + ")"
	}
	return s
}

// Unwrap returns ErrInvalidArguments and the Rule.
func (e *ArgumentError) Unwrap() []error { return []error{ErrInvalidArguments, e.Rule} }

// TypeError reports a Type, a type text or a parameter list outside the
// rules.
type TypeError struct {
	// Param is the 0-based parameter index, or -1 outside a signature.
	Param int
	// Path locates the fault below the parameter, as in ArgumentError
	// (".field", "[index]" for a tuple member, ".elem" for a list or
	// option element, ".case", ".ok", ".err"); names that are themselves
	// invalid are not repeated.
	Path string
	// Offset is the byte offset in the text given to ParseType, or -1.
	Offset int
	// Rule is the rule broken.
	Rule Rule
}

// Error returns a message such as
// "refhost: parameter 0 .items.elem: unknown kind", or
// "refhost: type: syntax error (offset 4)" for a type as a whole.
func (e *TypeError) Error() string {
	s := "refhost: "
	if e.Param >= 0 {
		s += "parameter " + strconv.Itoa(e.Param) + " "
	}
	if e.Path != "" {
		s += e.Path + " "
	}
	if e.Param < 0 && e.Path == "" {
		s += "type "
	}
	s = s[:len(s)-1] + ": "
	s += e.Rule.String()
	if e.Offset >= 0 {
		s += " (offset " + strconv.Itoa(e.Offset) + ")"
	}
	return s
}

// Unwrap returns ErrInvalidType and the Rule.
func (e *TypeError) Unwrap() []error { return []error{ErrInvalidType, e.Rule} }

// Resource names what an UnavailableError could not reserve.
type Resource uint8

// Resources.
const (
	// ResourceAdmission: every admission slot is held.
	ResourceAdmission Resource = iota + 1
	// ResourceInput: the input allocation cannot hold MaxInputBytes more.
	ResourceInput
	// ResourceMemory: the guest memory allocation cannot hold the pinned
	// function's Memory more.
	ResourceMemory
	resourceEnd
)

// String returns "admission", "input allocation" or "guest memory".
func (r Resource) String() string {
	switch r {
	case ResourceAdmission:
		return "admission"
	case ResourceInput:
		return "input allocation"
	case ResourceMemory:
		return "guest memory"
	}
	return "Resource(" + strconv.Itoa(int(r)) + ")"
}

// UnavailableError is returned by ReserveInbound when a slot or the input
// allocation cannot be had now. It matches trigger.ErrUnavailable.
type UnavailableError struct {
	Resource Resource
}

// Error returns a message such as "refhost: admission unavailable".
func (e *UnavailableError) Error() string {
	return "refhost: " + e.Resource.String() + " unavailable"
}

// Unwrap returns trigger.ErrUnavailable.
func (e *UnavailableError) Unwrap() error { return trigger.ErrUnavailable }

// ApplicationError is the failure a function returns when its contract
// declares it: Code must be one of the Function's Failures for the
// activation to end as trigger.OutcomeDeclaredFailure (the broker then
// terminates the delivery). Any other error is a platform failure and is
// retried while attempts remain.
type ApplicationError struct {
	// Code names the declared failure (a WIT identifier).
	Code string
}

// Error returns "refhost: application failure <code>"; a code that is not
// a valid name is left out.
func (e *ApplicationError) Error() string {
	if !validName(e.Code) {
		return "refhost: application failure"
	}
	return "refhost: application failure " + e.Code
}
