package wasmhost

import (
	"errors"
	"strconv"

	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// Sentinels.
var (
	// ErrInvalidConfig: a Config outside its bounds.
	ErrInvalidConfig = errors.New("wasmhost: invalid config")

	// ErrRegister is matched by every *RegisterError.
	ErrRegister = errors.New("wasmhost: module refused")

	// ErrGuest is matched by every *GuestError: an activation the guest
	// could not complete, a platform failure.
	ErrGuest = errors.New("wasmhost: guest failed")

	// ErrClosed: the Runtime is closed.
	ErrClosed = errors.New("wasmhost: runtime closed")
)

// Problem is why a module was refused at registration. Each Problem is
// also an error, so errors.Is(err, ProblemImport) reports it.
type Problem uint8

// Problems.
const (
	// ProblemModule: a Module outside its bounds or rules: a function
	// named twice or by a name the ABI reserves (memory, cabi_realloc,
	// _initialize), no functions or more than 256, a memory
	// ceiling outside 1..MaxMemoryPages, a binary empty or over
	// MaxModuleBytes, grants outside the list, an invalid parameter or
	// result type. Names outside the reference host's rules are its
	// refusal (ProblemRegistration).
	ProblemModule Problem = iota + 1
	// ProblemInvalid: the binary does not decode or validate as a core
	// WebAssembly module (several memories, a shared or a 64-bit memory
	// among the reasons).
	ProblemInvalid
	// ProblemMissingExport: the module lacks an export the ABI needs
	// (memory, cabi_realloc) or a declared function, or exports its
	// memory under another name.
	ProblemMissingExport
	// ProblemExportSignature: an export of another core type than the
	// canonical ABI gives its declaration.
	ProblemExportSignature
	// ProblemImport: an import the host does not grant: any import
	// without GrantWASI, and with it anything but the functions of
	// wasi_snapshot_preview1 listed in docs/GUESTS.md, each of its type.
	ProblemImport
	// ProblemMemory: the module's initial memory is above its ceiling.
	ProblemMemory
	// ProblemTable: the module defines more than 16 tables, or one
	// whose minimum or maximum is over 65,536.
	ProblemTable
	// ProblemRegistration: the reference host refused the function
	// (a name, a duplicate registration, memory above its
	// MaxMemoryBytes); the error wraps the reference host's.
	ProblemRegistration
	problemEnd
)

// String describes the problem in a few lower-case words.
func (p Problem) String() string {
	switch p {
	case ProblemModule:
		return "invalid module declaration"
	case ProblemInvalid:
		return "not a valid webassembly module"
	case ProblemMissingExport:
		return "missing export"
	case ProblemExportSignature:
		return "export of the wrong type"
	case ProblemImport:
		return "import not granted"
	case ProblemMemory:
		return "memory outside its ceiling"
	case ProblemTable:
		return "table outside its bounds"
	case ProblemRegistration:
		return "registration refused"
	}
	return "Problem(" + strconv.Itoa(int(p)) + ")"
}

// Error returns the problem prefixed with the package name.
func (p Problem) Error() string { return "wasmhost: " + p.String() }

// RegisterError is a module refused at registration. Name is the export
// or import at fault ("module.name" for an import), or empty. An import's
// name comes from the binary: it is cut to maxNameInError bytes, and
// Error quotes it, so no more of the binary reaches a message.
type RegisterError struct {
	Problem Problem
	Name    string
	// Err is the cause, when there is one (the reference host's error, a
	// type error); nil otherwise. A compiler's diagnostic is not kept: it
	// may quote the binary.
	Err error
}

// maxNameInError bounds the import name a RegisterError carries.
const maxNameInError = 128

// boundedName is name cut to maxNameInError bytes.
func boundedName(name string) string {
	if len(name) > maxNameInError {
		return name[:maxNameInError] + "..."
	}
	return name
}

// Error returns a message such as
// `wasmhost: module refused: import not granted: "env.evil"`.
func (e *RegisterError) Error() string {
	s := "wasmhost: module refused: " + e.Problem.String()
	if e.Name != "" {
		s += ": " + strconv.Quote(e.Name)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns ErrRegister, the Problem and the cause.
func (e *RegisterError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrRegister, e.Problem, e.Err}
	}
	return []error{ErrRegister, e.Problem}
}

// Cause is why a guest's activation failed on the platform's side.
type Cause uint8

// Causes. Each ends the activation as a platform failure
// (trigger.OutcomePlatformFailure), unless the activation's context was
// done, which makes it a timeout or a cancellation.
const (
	// CauseInstantiate: the fresh instance could not be made (a start
	// function trapped, the initial memory could not be had).
	CauseInstantiate Cause = iota + 1
	// CauseTrap: the guest trapped (unreachable, a bound, a division by
	// zero, a stack overflow).
	CauseTrap
	// CauseMemory: the guest failed after a growth of its memory past the
	// ceiling was refused.
	CauseMemory
	// CauseExit: the guest called proc_exit. (A Go guest's panic traps:
	// CauseTrap.)
	CauseExit
	// CauseLower: the arguments could not be written into the guest
	// (cabi_realloc failed or returned a pointer out of bounds or
	// misaligned).
	CauseLower
	// CauseLift: the result the guest returned was refused by lifting
	// (Err is the *LiftError).
	CauseLift
	// CauseInterrupted: the guest was stopped because the activation's
	// context was done (its deadline, budget, or the owner's stop).
	CauseInterrupted
	causeEnd
)

// String describes the cause in a few lower-case words.
func (c Cause) String() string {
	switch c {
	case CauseInstantiate:
		return "instantiation failed"
	case CauseTrap:
		return "trap"
	case CauseMemory:
		return "memory exhausted"
	case CauseExit:
		return "exited"
	case CauseLower:
		return "arguments refused"
	case CauseLift:
		return "result refused"
	case CauseInterrupted:
		return "interrupted"
	}
	return "Cause(" + strconv.Itoa(int(c)) + ")"
}

// Error returns the cause prefixed with the package name.
func (c Cause) Error() string { return "wasmhost: " + c.String() }

// GuestError is an activation that failed on the platform's side. It
// carries no argument, result or output bytes.
type GuestError struct {
	Cause Cause
	// ExitCode is the code given to proc_exit, for CauseExit.
	ExitCode uint32
	// Err is the underlying error where it is the project's own (a
	// *LiftError, a *LowerError) or a context's error; nil otherwise
	// (an engine's trap message is not kept).
	Err error
}

// Error returns a message such as "wasmhost: guest failed: trap".
func (e *GuestError) Error() string {
	s := "wasmhost: guest failed: " + e.Cause.String()
	if e.Cause == CauseExit {
		s += " with code " + strconv.FormatUint(uint64(e.ExitCode), 10)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns ErrGuest, the Cause and Err.
func (e *GuestError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrGuest, e.Cause, e.Err}
	}
	return []error{ErrGuest, e.Cause}
}

// Sentinels of the canonical ABI.
var (
	// ErrLiftRefused is matched by every *LiftError: core values and
	// memory returned by an export that are not one value of its declared
	// result type, or one too large.
	ErrLiftRefused = errors.New("wasmhost: result lifting refused")

	// ErrLowerRefused is matched by every *LowerError: arguments that
	// could not be written into the guest.
	ErrLowerRefused = errors.New("wasmhost: argument lowering refused")
)

// Rule is what a guest's result (*LiftError) or the lowering of its
// arguments (*LowerError) breaks: the one vocabulary of both. Each Rule is
// also an error, so errors.Is(err, RuleBounds) reports whether an error
// broke it. Where the canonical ABI traps, lifting refuses with the rule
// named here.
type Rule uint8

// Rules.
const (
	// RuleBounds: a pointer, or a pointer plus a length, past the end of
	// the memory (computed without overflow): in a result, or returned by
	// cabi_realloc, or a memory that shrank under a block cabi_realloc
	// returned.
	RuleBounds Rule = iota + 1
	// RuleAlignment: a list or result pointer, or a pointer cabi_realloc
	// returned, that is not a multiple of its type's alignment.
	RuleAlignment
	// RuleInvalidUTF8: string bytes in a result that are not valid UTF-8.
	RuleInvalidUTF8
	// RuleInvalidChar: a char in a result that is not a Unicode scalar
	// value (a surrogate, or 0x110000 and above).
	RuleInvalidChar
	// RuleDiscriminant: a variant, enum, option or result discriminant
	// not below its number of cases.
	RuleDiscriminant
	// RuleTooLarge: a result over 65,536 units, a string or list
	// over the spec's 2^28-1 bytes in a result or 2^32-1 in an argument,
	// or a type nested deeper than refhost.MaxTypeDepth.
	RuleTooLarge
	// RuleCoreValue: a flat result value that does not fit its core type
	// (an i32 or f32 with bits above the low 32), or a number of flat
	// values other than the signature's.
	RuleCoreValue
	// RuleWrongType: an argument's Go value that is not a value of its
	// declared type (see refhost's "Go values"), a string that is not
	// valid UTF-8, a rune that is not a Unicode scalar value, or a number
	// of arguments other than of parameters.
	RuleWrongType
	// RuleReallocFailed: the call of cabi_realloc returned an error (a
	// trap, an interruption); the LowerError wraps it.
	RuleReallocFailed
	ruleEnd
)

// String describes the rule in a few lower-case words.
func (r Rule) String() string {
	switch r {
	case RuleBounds:
		return "pointer or length out of bounds"
	case RuleAlignment:
		return "misaligned pointer"
	case RuleInvalidUTF8:
		return "invalid utf-8"
	case RuleInvalidChar:
		return "char not a unicode scalar value"
	case RuleDiscriminant:
		return "discriminant out of range"
	case RuleTooLarge:
		return "too large"
	case RuleCoreValue:
		return "core value outside its type"
	case RuleWrongType:
		return "value not of its declared type"
	case RuleReallocFailed:
		return "realloc failed"
	}
	return "Rule(" + strconv.Itoa(int(r)) + ")"
}

// Error returns the rule prefixed with the package name.
func (r Rule) Error() string { return "wasmhost: " + r.String() }

// LiftError reports a result the guest returned that lifting refused. It
// carries no byte of the guest's memory: Path is built from declared
// names and indexes only.
type LiftError struct {
	// Path locates the fault in the result, in refhost's path syntax:
	// ".field", "[index]" (a list element or tuple member), ".some",
	// ".ok", ".err" or ".case" steps; empty for the result itself.
	Path string
	// Rule is the rule broken.
	Rule Rule
}

// Error returns a message such as
// "wasmhost: result lifting refused at .items[3]: invalid utf-8", or
// without " at <path>" when the result itself is at fault.
func (e *LiftError) Error() string {
	s := "wasmhost: result lifting refused"
	if e.Path != "" {
		s += " at " + e.Path
	}
	return s + ": " + e.Rule.String()
}

// Unwrap returns ErrLiftRefused and the Rule.
func (e *LiftError) Unwrap() []error { return []error{ErrLiftRefused, e.Rule} }

// LowerError reports arguments that could not be lowered into a guest.
// It carries no byte of the arguments.
type LowerError struct {
	// Path locates the value at fault: "[i]" for argument i, followed by
	// steps as in LiftError (".field", "[index]", ".some", ...); empty
	// for the argument list as a whole (its count, or the block that
	// holds it when it is passed through memory).
	Path string
	// Rule is the rule broken.
	Rule Rule
	// Err is the error cabi_realloc's call returned, for
	// RuleReallocFailed; nil otherwise. Its text is not repeated in
	// Error: an engine's message may quote the guest.
	Err error
}

// Error returns a message such as
// "wasmhost: argument lowering refused at [1].name: realloc failed".
func (e *LowerError) Error() string {
	s := "wasmhost: argument lowering refused"
	if e.Path != "" {
		s += " at " + e.Path
	}
	return s + ": " + e.Rule.String()
}

// Unwrap returns ErrLowerRefused, the Rule and Err.
func (e *LowerError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrLowerRefused, e.Rule, e.Err}
	}
	return []error{ErrLowerRefused, e.Rule}
}

// maxPathSteps bounds the steps of a path: one per level of a type, and
// one for the argument index.
const maxPathSteps = refhost.MaxTypeDepth + 1

// step is one step of a path: a name (".name") or, when name is empty,
// an index ("[index]").
type step struct {
	name  string
	index uint64
}

// path is the location of the value being lifted or lowered. It lives in
// a fixed array, so following it allocates nothing until an error renders
// it; its capacity bounds the recursion.
type path struct {
	steps [maxPathSteps]step
	n     int
}

// push appends s, or reports false when the path is full (a type nested
// deeper than refhost.MaxTypeDepth).
func (p *path) push(s step) bool {
	if p.n == len(p.steps) {
		return false
	}
	p.steps[p.n] = s
	p.n++
	return true
}

// pop removes the last step.
func (p *path) pop() { p.n-- }

// String renders the path in refhost's syntax: ".items[3].some".
func (p *path) String() string {
	var b []byte
	for _, s := range p.steps[:p.n] {
		if s.name != "" {
			b = append(b, '.')
			b = append(b, s.name...)
			continue
		}
		b = append(b, '[')
		b = strconv.AppendUint(b, s.index, 10)
		b = append(b, ']')
	}
	return string(b)
}
