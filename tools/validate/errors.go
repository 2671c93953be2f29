package validate

import (
	"errors"
	"strconv"

	"github.com/latent-systems/latent-nats/trigger"
)

// Every rule, of the configuration, of the credentials file and of the
// matching of credentials to tenants, is a trigger.Rule, its own sentinel
// (the credentials file is read by trigger.LoadCredentials). No message
// contains a secret or the contents of a file.

// Source names the file a Violation is in.
type Source uint8

// Sources.
const (
	// SourceConfig is the trigger configuration JSON.
	SourceConfig Source = iota + 1
	// SourceCredentials is the credentials file (see the package
	// documentation for its format).
	SourceCredentials
)

// String returns "config" or "credentials".
func (s Source) String() string {
	switch s {
	case SourceConfig:
		return "config"
	case SourceCredentials:
		return "credentials"
	default:
		return "Source(" + strconv.Itoa(int(s)) + ")"
	}
}

// Violation is one broken rule at one JSON path of one file.
type Violation struct {
	// Source is the file.
	Source Source
	// Path is the JSON path of the offending value in that file, such as
	// "bindings[3].ack_wait_ms" or "credentials[1].file"; "" is the
	// document itself. A tenant without a credential is reported at the
	// configuration's path of that tenant ("tenants[0]").
	Path string
	// Rule is the name of the rule broken: a trigger.Rule's String.
	Rule string
	// Err is the rule's sentinel (the trigger.Rule itself), for errors.Is.
	Err error
	// Cause, when set, is the underlying error: a file-system error (which
	// names the file) or the credential package's sentinel. It never
	// carries a secret or file contents.
	Cause error
	// Detail names the value given, the bound or allowed values it breaks
	// and, for common mistakes, what to do (trigger.Detail). It never
	// carries a credential's value.
	Detail trigger.Detail
}

// String returns "source: path: rule: detail (cause)", such as "config:
// poll_interval_ms: out_of_range: 5 is below the minimum 10 (ms)" or
// "credentials: credentials[0].file: secret_expired: names a user JWT
// whose expiry has passed; issue a new one (credential: jwt expired)",
// leaving out what is empty; without a detail, the error in parentheses.
func (v Violation) String() string {
	p := v.Path
	if p == "" {
		p = "(document)"
	}
	s := v.Source.String() + ": " + p + ": " + v.Rule
	if v.Detail.Want != "" {
		s += ": " + v.Detail.String()
	}
	why := v.Cause
	if why == nil && v.Detail.Want == "" {
		why = v.Err
	}
	if why != nil {
		s += " (" + why.Error() + ")"
	}
	return s
}

// configViolation converts a trigger violation found in src and what it
// found.
func configViolation(src Source, v trigger.Violation, d trigger.Detail) Violation {
	return Violation{Source: src, Path: v.Path, Rule: v.Rule.String(), Err: v.Rule, Detail: d}
}

// Error reports the violations that stopped Load.
type Error struct {
	Violations []Violation
}

// Error names how many violations were found and the first of them.
func (e *Error) Error() string {
	if len(e.Violations) == 0 {
		return "validate: invalid input"
	}
	s := "validate: " + strconv.Itoa(len(e.Violations)) + " violation(s); first: " + e.Violations[0].String()
	return s
}

// Unwrap returns ErrInvalid and the sentinels of the rules broken.
func (e *Error) Unwrap() []error {
	out := []error{ErrInvalid}
	for _, v := range e.Violations {
		if v.Err != nil && !containsErr(out, v.Err) {
			out = append(out, v.Err)
		}
	}
	return out
}

// ErrInvalid is matched by every *Error.
var ErrInvalid = errors.New("validate: invalid configuration or credentials")

func containsErr(list []error, err error) bool {
	for _, e := range list {
		if e == err {
			return true
		}
	}
	return false
}
