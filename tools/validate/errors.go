package validate

import (
	"errors"
	"strconv"

	"github.com/latent-systems/latent-nats/trigger"
)

// Sentinels of this package's rules (see Rule.Err). Configuration rules and
// the matching of credentials to tenants are trigger.Rule values, each its
// own sentinel. No message contains a secret or the contents of a file.
var (
	ErrUnreadable      = errors.New("validate: file cannot be read")
	ErrTooLarge        = errors.New("validate: file too large")
	ErrSyntax          = errors.New("validate: credentials file is not one JSON object")
	ErrUnknownField    = errors.New("validate: unknown credentials field")
	ErrDuplicateKey    = errors.New("validate: duplicate credentials key")
	ErrMissingField    = errors.New("validate: missing credentials field")
	ErrWrongType       = errors.New("validate: credentials value of the wrong type")
	ErrCount           = errors.New("validate: credentials count out of range")
	ErrKind            = errors.New("validate: unknown credential kind")
	ErrAddress         = errors.New("validate: destination address is not an ipv4 address and port")
	ErrSecretShared    = errors.New("validate: secret file accessible to group or others")
	ErrSecretMalformed = errors.New("validate: secret file does not hold a usable credential")
	ErrSecretExpired   = errors.New("validate: credential expired")
	errUnknownRule     = errors.New("validate: unknown rule")
)

// Rule names what a credentials-file Violation breaks.
type Rule uint8

// Rules of the credentials file and of reading the files named. Each maps
// to one sentinel (Rule.Err).
const (
	RuleUnreadable      Rule = iota + 1 // a file cannot be opened or read, or is not a regular file
	RuleTooLarge                        // a file over its size bound
	RuleSyntax                          // not one JSON value, nested too deep, or trailing data
	RuleUnknownField                    // a key the schema does not have
	RuleDuplicateKey                    // a key twice in one object
	RuleMissingField                    // a required key absent
	RuleWrongType                       // a value of the wrong JSON type
	RuleCount                           // credentials: 1 to trigger.MaxTenants entries
	RuleKind                            // kind is not creds, nkey, user_password or token
	RuleAddress                         // destination.address is not "a.b.c.d:port"
	RuleSecretShared                    // a secret file with any permission bit for group or others
	RuleSecretMalformed                 // the secret file's contents are refused by package credential
	RuleSecretExpired                   // a user JWT whose expiry has passed
	ruleEnd
)

// String returns the rule's name.
func (r Rule) String() string {
	switch r {
	case RuleUnreadable:
		return "unreadable"
	case RuleTooLarge:
		return "too_large"
	case RuleSyntax:
		return "syntax"
	case RuleUnknownField:
		return "unknown_field"
	case RuleDuplicateKey:
		return "duplicate_key"
	case RuleMissingField:
		return "missing_field"
	case RuleWrongType:
		return "wrong_type"
	case RuleCount:
		return "count_out_of_range"
	case RuleKind:
		return "unknown_kind"
	case RuleAddress:
		return "invalid_address"
	case RuleSecretShared:
		return "secret_file_shared"
	case RuleSecretMalformed:
		return "secret_malformed"
	case RuleSecretExpired:
		return "secret_expired"
	default:
		return "Rule(" + strconv.Itoa(int(r)) + ")"
	}
}

// Err returns the sentinel the rule maps to.
func (r Rule) Err() error {
	switch r {
	case RuleUnreadable:
		return ErrUnreadable
	case RuleTooLarge:
		return ErrTooLarge
	case RuleSyntax:
		return ErrSyntax
	case RuleUnknownField:
		return ErrUnknownField
	case RuleDuplicateKey:
		return ErrDuplicateKey
	case RuleMissingField:
		return ErrMissingField
	case RuleWrongType:
		return ErrWrongType
	case RuleCount:
		return ErrCount
	case RuleKind:
		return ErrKind
	case RuleAddress:
		return ErrAddress
	case RuleSecretShared:
		return ErrSecretShared
	case RuleSecretMalformed:
		return ErrSecretMalformed
	case RuleSecretExpired:
		return ErrSecretExpired
	default:
		return errUnknownRule
	}
}

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
	// Rule is the name of the rule broken: a trigger.Rule's String for the
	// configuration and the matching of credentials to tenants, a Rule's
	// String for the credentials file.
	Rule string
	// Err is the rule's sentinel (the trigger.Rule itself, or Rule.Err), for
	// errors.Is.
	Err error
	// Cause, when set, is the underlying error: a file-system error (which
	// names the file) or the credential package's sentinel. It never
	// carries a secret or file contents.
	Cause error
	// Detail, set for the trigger package's rules, names the value given,
	// the bound or allowed values it breaks and, for common mistakes, what
	// to do (trigger.Detail). It never carries a credential's value.
	Detail trigger.Detail
}

// String returns "source: path: rule: detail" for the trigger package's
// rules, such as "config: poll_interval_ms: out_of_range: 5 is below the
// minimum 10 (ms)", and "source: path: rule (explanation)" for the others.
func (v Violation) String() string {
	p := v.Path
	if p == "" {
		p = "(document)"
	}
	s := v.Source.String() + ": " + p + ": " + v.Rule
	if v.Detail.Want != "" {
		return s + ": " + v.Detail.String()
	}
	why := v.Err
	if v.Cause != nil {
		why = v.Cause
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

// fileViolation builds a violation of one of this package's rules.
func fileViolation(src Source, path string, r Rule, cause error) Violation {
	return Violation{Source: src, Path: path, Rule: r.String(), Err: r.Err(), Cause: cause}
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
