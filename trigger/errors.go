package trigger

import (
	"errors"
	"slices"
	"strconv"
	"strings"
)

// Sentinels. ErrInvalidConfig and ErrInvalidCredentials match every
// *ConfigError and *CredentialsError; the others match the errors that
// carry at least one violation of the rules that map to them (Rule.Err).
// No message contains a secret, payload bytes or broker text.
var (
	ErrInvalidConfig      = errors.New("trigger: invalid config")
	ErrInvalidCredentials = errors.New("trigger: credentials do not match the config")

	ErrSyntax          = errors.New("trigger: config is not one JSON object")
	ErrTooLarge        = errors.New("trigger: config encoding too large")
	ErrUnknownField    = errors.New("trigger: unknown config field")
	ErrDuplicateKey    = errors.New("trigger: duplicate config key")
	ErrMissingField    = errors.New("trigger: missing config field")
	ErrWrongType       = errors.New("trigger: config value of the wrong type")
	ErrNotCanonical    = errors.New("trigger: config is not in canonical encoding")
	ErrProfile         = errors.New("trigger: unsupported profile")
	ErrOutOfRange      = errors.New("trigger: config value out of range")
	ErrInvalidName     = errors.New("trigger: invalid name")
	ErrInvalidSubject  = errors.New("trigger: invalid filter subject")
	ErrWildcardFilter  = errors.New("trigger: wildcard filter subject")
	ErrDuplicate       = errors.New("trigger: duplicate id or stream/consumer pair")
	ErrUnknownTenant   = errors.New("trigger: unknown tenant")
	ErrUnusedTenant    = errors.New("trigger: tenant without bindings")
	ErrSharedFilter    = errors.New("trigger: filter subject shared by two tenants")
	ErrAddress         = errors.New("trigger: destination address is not a dialable IPv4 address and port")
	ErrNonPublic       = errors.New("trigger: non-public destination address without exact opt-in")
	ErrRootCAs         = errors.New("trigger: invalid root certificates")
	ErrSPKIPin         = errors.New("trigger: invalid spki pin")
	ErrMissingCred     = errors.New("trigger: tenant without credential")
	ErrCredMismatch    = errors.New("trigger: credential not bound to its tenant's provider and destination")
	ErrCredUnusable    = errors.New("trigger: credential secret missing or wiped")
	ErrNotMarshalable  = errors.New("trigger: credentials are not marshalled")
	errUnreachableRule = errors.New("trigger: unknown rule")
)

// Rule names what a Violation breaks.
type Rule uint8

// Rules. Each maps to one sentinel (Rule.Err).
const (
	RuleSyntax                  Rule = iota + 1 // not one JSON value, nested too deep or trailing data
	RuleTooLarge                                // encoding over MaxConfigBytes
	RuleUnknownField                            // a key the schema does not have
	RuleDuplicateKey                            // a key twice in one object
	RuleMissingField                            // a required key absent
	RuleWrongType                               // a value of the wrong JSON type, or a non-integer number
	RuleNotCanonical                            // accepted, but not the bytes MarshalJSON writes
	RuleProfile                                 // profile is not ProfileName
	RuleRange                                   // a number outside its bounds
	RuleCount                                   // an array length outside its bounds
	RuleBudgetOverTimeout                       // root_budget_ms above operation_timeout_ms
	RuleAckWaitTooShort                         // ack_wait_ms below operation_timeout_ms + AckWaitMarginMS
	RuleID                                      // an ID: 1-MaxIDLen of A-Z a-z 0-9 . _ - :
	RuleName                                    // a name: 1-MaxNameLen printable ASCII, no space
	RuleAssetName                               // a stream or consumer name the broker would refuse
	RuleServerName                              // not a lower-case DNS name
	RuleSubject                                 // not a valid literal subject
	RuleWildcard                                // a '*' or '>' in a filter subject
	RuleDuplicateID                             // a binding or tenant ID used twice
	RuleDuplicateConsumer                       // a stream/consumer pair used twice
	RuleUnknownTenant                           // a binding's tenant is not configured
	RuleUnusedTenant                            // a tenant no binding uses
	RuleSharedFilter                            // a filter subject used by two tenants
	RuleAddress                                 // not IPv4, port 0, unspecified, multicast or broadcast
	RuleNonPublic                               // a non-public address without allow_non_public
	RuleNeedlessOptIn                           // allow_non_public on a public address
	RuleRootCAs                                 // root_cas_pem does not hold only parsable certificates
	RuleSPKIPin                                 // spki_sha256 is not 64 lower-case hex digits
	RuleCredentialMissing                       // a tenant has no credential
	RuleCredentialDuplicate                     // two credentials for one tenant
	RuleCredentialUnknownTenant                 // a credential for a tenant not configured
	RuleCredentialProvider                      // a credential bound to another provider
	RuleCredentialDestination                   // a credential bound to another destination
	RuleCredentialSecret                        // a credential without a usable secret
	ruleEnd
)

// String returns the rule's name.
func (r Rule) String() string {
	switch r {
	case RuleSyntax:
		return "syntax"
	case RuleTooLarge:
		return "too_large"
	case RuleUnknownField:
		return "unknown_field"
	case RuleDuplicateKey:
		return "duplicate_key"
	case RuleMissingField:
		return "missing_field"
	case RuleWrongType:
		return "wrong_type"
	case RuleNotCanonical:
		return "not_canonical"
	case RuleProfile:
		return "profile"
	case RuleRange:
		return "out_of_range"
	case RuleCount:
		return "count_out_of_range"
	case RuleBudgetOverTimeout:
		return "root_budget_over_timeout"
	case RuleAckWaitTooShort:
		return "ack_wait_too_short"
	case RuleID:
		return "invalid_id"
	case RuleName:
		return "invalid_name"
	case RuleAssetName:
		return "invalid_asset_name"
	case RuleServerName:
		return "invalid_server_name"
	case RuleSubject:
		return "invalid_subject"
	case RuleWildcard:
		return "wildcard_subject"
	case RuleDuplicateID:
		return "duplicate_id"
	case RuleDuplicateConsumer:
		return "duplicate_stream_consumer"
	case RuleUnknownTenant:
		return "unknown_tenant"
	case RuleUnusedTenant:
		return "unused_tenant"
	case RuleSharedFilter:
		return "filter_shared_across_tenants"
	case RuleAddress:
		return "invalid_address"
	case RuleNonPublic:
		return "non_public_address"
	case RuleNeedlessOptIn:
		return "needless_non_public_opt_in"
	case RuleRootCAs:
		return "invalid_root_cas"
	case RuleSPKIPin:
		return "invalid_spki_pin"
	case RuleCredentialMissing:
		return "credential_missing"
	case RuleCredentialDuplicate:
		return "credential_duplicate"
	case RuleCredentialUnknownTenant:
		return "credential_unknown_tenant"
	case RuleCredentialProvider:
		return "credential_provider_mismatch"
	case RuleCredentialDestination:
		return "credential_destination_mismatch"
	case RuleCredentialSecret:
		return "credential_secret_unusable"
	default:
		return "Rule(" + strconv.Itoa(int(r)) + ")"
	}
}

// Err returns the sentinel the rule maps to.
func (r Rule) Err() error {
	switch r {
	case RuleSyntax:
		return ErrSyntax
	case RuleTooLarge:
		return ErrTooLarge
	case RuleUnknownField:
		return ErrUnknownField
	case RuleDuplicateKey:
		return ErrDuplicateKey
	case RuleMissingField:
		return ErrMissingField
	case RuleWrongType:
		return ErrWrongType
	case RuleNotCanonical:
		return ErrNotCanonical
	case RuleProfile:
		return ErrProfile
	case RuleRange, RuleCount, RuleBudgetOverTimeout, RuleAckWaitTooShort:
		return ErrOutOfRange
	case RuleID, RuleName, RuleAssetName, RuleServerName:
		return ErrInvalidName
	case RuleSubject:
		return ErrInvalidSubject
	case RuleWildcard:
		return ErrWildcardFilter
	case RuleDuplicateID, RuleDuplicateConsumer:
		return ErrDuplicate
	case RuleUnknownTenant, RuleCredentialUnknownTenant:
		return ErrUnknownTenant
	case RuleUnusedTenant:
		return ErrUnusedTenant
	case RuleSharedFilter:
		return ErrSharedFilter
	case RuleAddress:
		return ErrAddress
	case RuleNonPublic, RuleNeedlessOptIn:
		return ErrNonPublic
	case RuleRootCAs:
		return ErrRootCAs
	case RuleSPKIPin:
		return ErrSPKIPin
	case RuleCredentialMissing:
		return ErrMissingCred
	case RuleCredentialDuplicate:
		return ErrDuplicate
	case RuleCredentialProvider, RuleCredentialDestination:
		return ErrCredMismatch
	case RuleCredentialSecret:
		return ErrCredUnusable
	default:
		return errUnreachableRule
	}
}

// Violation is one broken rule at one place. Path is the JSON path of the
// offending value, such as "bindings[3].ack_wait_ms"; "" is the document
// itself. Credential violations use the same form for the credential slice
// ("credentials[1].destination") and the config's tenants ("tenants[0]").
type Violation struct {
	Path string
	Rule Rule
}

// String returns "path: rule".
func (v Violation) String() string {
	p := v.Path
	if p == "" {
		p = "(document)"
	}
	return p + ": " + v.Rule.String()
}

// ConfigError reports every violation of a configuration, in document
// order, at most MaxViolations of them (Truncated says more were found).
// errors.Is matches ErrInvalidConfig and the sentinel of each rule broken.
type ConfigError struct {
	Violations []Violation
	Truncated  bool
}

// Error lists the first few violations.
func (e *ConfigError) Error() string {
	return describeViolations("trigger: invalid config", e.Violations, e.Truncated)
}

// Unwrap returns ErrInvalidConfig and the sentinels of the rules broken.
func (e *ConfigError) Unwrap() []error { return ruleSentinels(ErrInvalidConfig, e.Violations) }

// CredentialsError reports every mismatch between a credential set and a
// configuration. errors.Is matches ErrInvalidCredentials and the sentinel
// of each rule broken.
type CredentialsError struct {
	Violations []Violation
	Truncated  bool
}

// Error lists the first few violations.
func (e *CredentialsError) Error() string {
	return describeViolations("trigger: credentials do not match the config", e.Violations, e.Truncated)
}

// Unwrap returns ErrInvalidCredentials and the sentinels of the rules broken.
func (e *CredentialsError) Unwrap() []error {
	return ruleSentinels(ErrInvalidCredentials, e.Violations)
}

// describeViolationsMax is how many violations an error message lists.
const describeViolationsMax = 8

// describeViolations writes a message listing up to describeViolationsMax violations.
func describeViolations(head string, vs []Violation, truncated bool) string {
	var b strings.Builder
	b.WriteString(head)
	for i, v := range vs {
		if i == describeViolationsMax {
			b.WriteString("; and " + strconv.Itoa(len(vs)-i) + " more")
			break
		}
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(v.String())
	}
	if truncated {
		b.WriteString("; list truncated")
	}
	return b.String()
}

// ruleSentinels returns head and the distinct sentinels of vs.
func ruleSentinels(head error, vs []Violation) []error {
	out := []error{head}
	for _, v := range vs {
		if err := v.Rule.Err(); !slices.Contains(out, err) {
			out = append(out, err)
		}
	}
	return out
}
