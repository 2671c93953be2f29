package trigger

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/latent-systems/latent-nats/internal/jsontree"
)

// Sentinels. ErrInvalidConfig and ErrInvalidCredentials match every
// *ConfigError and *CredentialsError. Each Rule is also an error, matched
// by the errors that carry at least one violation of it:
// errors.Is(err, RuleWildcard) reports whether a configuration was refused
// for a wildcard filter. No message contains a secret, payload bytes or
// broker text.
var (
	ErrInvalidConfig      = errors.New("trigger: invalid config")
	ErrInvalidCredentials = errors.New("trigger: credentials do not match the config")
	ErrNotMarshalable     = errors.New("trigger: credentials are not marshalled")
	// ErrInvalidSplit: Split was asked for fewer than one part or for
	// more parts than the configuration has bindings.
	ErrInvalidSplit = errors.New("trigger: split into fewer than one part or more parts than bindings")
)

// Rule names what a Violation breaks.
type Rule uint8

// Rules. Each is an error (Rule.Error), matched by errors.Is.
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
	RuleID                                      // an ID: 1-maxIDLen of A-Z a-z 0-9 . _ - :
	RuleName                                    // a name: 1-MaxTargetNameLen printable ASCII, no space
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
	RuleUTF8                                    // invalid UTF-8 or an unpaired surrogate escape in a string
	RuleUnreadable                              // a file cannot be opened or read, or is not a regular file
	RuleCredentialKind                          // a credentials file's kind is not creds, nkey, user_password, token or certificate
	RuleSecretShared                            // a secret file with any permission bit for group or others
	RuleSecretMalformed                         // a secret file package credential refuses
	RuleSecretExpired                           // a secret file's user JWT whose expiry has passed
	RuleClientCertKey                           // a client key that is not the client certificate's
	RuleClientCertValidity                      // a client certificate expired or not yet valid
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
	case RuleUTF8:
		return "invalid_utf8"
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
	case RuleUnreadable:
		return "unreadable"
	case RuleCredentialKind:
		return "unknown_kind"
	case RuleSecretShared:
		return "secret_file_shared"
	case RuleSecretMalformed:
		return "secret_malformed"
	case RuleSecretExpired:
		return "secret_expired"
	case RuleClientCertKey:
		return "client_key_mismatch"
	case RuleClientCertValidity:
		return "client_cert_not_valid"
	default:
		return "Rule(" + strconv.Itoa(int(r)) + ")"
	}
}

// Error returns "trigger: config rule " and the rule's name, so that a
// Rule is the sentinel of its violations.
func (r Rule) Error() string { return "trigger: config rule " + r.String() }

// syntaxDetail is RuleSyntax's description for a document read with the
// depth bound maxDepth.
func syntaxDetail(maxDepth int) Detail {
	return Detail{Want: "is not one JSON object (or nests deeper than " + strconv.Itoa(maxDepth) + ", or has trailing data)"}
}

// Detail returns the rule's description, what a violation says when it
// carries no detail of its own: Validate gives the value and the bound;
// the decoding rules, the rules of matching credentials and an
// out-of-range number that does not fit an int carry only this.
func (r Rule) Detail() Detail {
	switch r {
	case RuleSyntax:
		return syntaxDetail(maxDepth)
	case RuleTooLarge:
		return Detail{Want: "is above the maximum " + strconv.Itoa(MaxConfigBytes) + " (bytes)", Fix: "split the bindings across configurations"}
	case RuleUnknownField:
		return Detail{Want: "is not a field of the configuration", Fix: "check its spelling against the configuration reference"}
	case RuleDuplicateKey:
		return Detail{Want: "appears twice in one object", Fix: "keep one"}
	case RuleMissingField:
		return Detail{Want: "is required"}
	case RuleWrongType:
		return Detail{Want: "has the wrong JSON type (integers take no fraction or exponent)"}
	case RuleNotCanonical:
		return Detail{Want: "differs from the canonical encoding here", Fix: "write it with validate -write-canonical FILE"}
	case RuleUTF8:
		return Detail{Want: "holds bytes that are not UTF-8, or a \\u escape of half a surrogate pair, in a string", Fix: "save the file as UTF-8 and escape a character outside the BMP as both halves of its pair"}
	case RuleProfile:
		return Detail{Want: "is not the allowed value " + strconv.Quote(ProfileName)}
	case RuleRange:
		return Detail{Want: "is outside its bounds (see the configuration reference)"}
	case RuleCount:
		return Detail{Want: "has a number of entries outside its bounds"}
	case RuleBudgetOverTimeout:
		return Detail{Want: "is above the binding's operation_timeout_ms"}
	case RuleAckWaitTooShort:
		return Detail{Want: "is below the binding's operation_timeout_ms plus " + strconv.Itoa(AckWaitMarginMS) + " (ms)"}
	case RuleID:
		return Detail{Want: idWant()}
	case RuleName:
		return Detail{Want: nameWant()}
	case RuleAssetName:
		return Detail{Want: assetNameWant()}
	case RuleServerName:
		return Detail{Want: serverNameWant()}
	case RuleSubject:
		return Detail{Want: subjectWant()}
	case RuleWildcard:
		return Detail{Want: wildcardWant, Fix: wildcardFix}
	case RuleDuplicateID:
		return Detail{Want: "is used twice", Fix: "give each tenant and each binding its own id"}
	case RuleDuplicateConsumer:
		return Detail{Want: "is a stream/consumer pair used twice", Fix: "give each binding its own durable consumer"}
	case RuleUnknownTenant:
		return Detail{Want: "is not the id of a tenant of this configuration"}
	case RuleUnusedTenant:
		return Detail{Want: "is named by no binding", Fix: "remove the tenant or bind it"}
	case RuleSharedFilter:
		return Detail{Want: "is the filter subject of another tenant's binding", Fix: "give each tenant its own subjects"}
	case RuleAddress:
		return Detail{Want: addressWant, Fix: addressFix}
	case RuleNonPublic:
		return Detail{Want: "is not a public address", Fix: nonPublicFix}
	case RuleNeedlessOptIn:
		return Detail{Want: "is set for a public address", Fix: "remove allow_non_public"}
	case RuleRootCAs:
		return Detail{Want: rootCAsWant}
	case RuleSPKIPin:
		return Detail{Want: pinWant()}
	case RuleCredentialMissing:
		return Detail{Want: "has no credential", Fix: "add one credential for this tenant"}
	case RuleCredentialDuplicate:
		return Detail{Want: "names a tenant another credential already serves", Fix: "keep one credential per tenant"}
	case RuleCredentialUnknownTenant:
		return Detail{Want: "names no tenant of the configuration"}
	case RuleCredentialProvider:
		return Detail{Want: "differs from the tenant's provider_id"}
	case RuleCredentialDestination:
		return Detail{Want: "differs from the tenant's destination", Fix: "copy the tenant's destination"}
	case RuleCredentialSecret:
		return Detail{Want: "is missing or wiped"}
	case RuleUnreadable:
		return Detail{Want: "cannot be opened or read, or is not a regular file"}
	case RuleCredentialKind:
		return Detail{Want: "is not creds, nkey, user_password, token or certificate"}
	case RuleSecretShared:
		return Detail{Want: "names a secret file its group or others may access", Fix: "chmod 600 the file"}
	case RuleSecretMalformed:
		return Detail{Want: "names a file that does not hold a usable credential of the entry's kind"}
	case RuleSecretExpired:
		return Detail{Want: "names a user JWT whose expiry has passed", Fix: "issue a new one"}
	case RuleClientCertKey:
		return Detail{Want: "names a private key that is not the client certificate's", Fix: "pair the certificate with the key it was issued for"}
	case RuleClientCertValidity:
		return Detail{Want: "names a client certificate that has expired or is not yet valid", Fix: "issue a new one, or check the clock"}
	default:
		return Detail{Want: "breaks " + r.String()}
	}
}

// The words of the rules, used by Rule.Detail and by Validate. A word
// that names a bound is built from its constant.
const (
	wildcardWant = "holds '*' or '>': a filter subject is literal"
	wildcardFix  = "give each literal subject its own binding"
	addressWant  = "is not an IPv4 address with a non-zero port (not unspecified, multicast or broadcast)"
	addressFix   = "write it as a.b.c.d:port"
	nonPublicFix = "set allow_non_public: true on this destination if the broker is meant to be reached there"
	rootCAsWant  = "does not hold only PEM CERTIFICATE blocks without headers, at least one, each parsable"
)

func idWant() string {
	return "is not 1-" + strconv.Itoa(maxIDLen) + " bytes of A-Z a-z 0-9 . _ - :"
}

func nameWant() string {
	return "is not 1-" + strconv.Itoa(MaxTargetNameLen) + " bytes of printable ASCII without space"
}

func assetNameWant() string {
	return "is not 1-" + strconv.Itoa(maxAssetNameLen) + " bytes of UTF-8 without space, control characters, '.', '*', '>', '/' or '\\'"
}

func serverNameWant() string {
	return "is not a lower-case DNS name of at most " + strconv.Itoa(maxServerNameLen) + " bytes (no IP address, no trailing dot)"
}

func subjectWant() string {
	return "is not 1-" + strconv.Itoa(maxFilterSubjectLen) + " bytes of non-empty dot-separated tokens without space or control characters"
}

func pinWant() string {
	return "is not " + strconv.Itoa(hex.EncodedLen(sha256.Size)) + " lower-case hex digits (the SHA-256 of the certificate's public key)"
}

// maxQuotedBytes bounds how much of a string from the configuration a
// Detail quotes, in bytes, before the quotes and escapes are added.
const maxQuotedBytes = 64

// quoted returns s quoted for a Detail: cut to maxQuotedBytes bytes (at a
// rune boundary when s is valid UTF-8) with "..." and the full length
// after a cut, invalid UTF-8 and control characters escaped.
func quoted(s string) string {
	if len(s) <= maxQuotedBytes {
		return strconv.Quote(s)
	}
	return strconv.Quote(jsontree.Cut(s, maxQuotedBytes)) + "... (" + strconv.Itoa(len(s)) + " bytes)"
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

// Detail says what one violation found and how to fix it: the value
// given, the bound or the allowed values it breaks, and for the common
// mistakes what to do. A string from the configuration appears quoted, cut
// to maxQuotedBytes bytes, with invalid UTF-8 and control characters
// escaped; a credential's values never appear.
type Detail struct {
	// Got is the value given, such as "5" or "\"acme.>\""; "" when the
	// value is not shown.
	Got string
	// Want names the bound, the allowed values or the rule broken, such as
	// "is below the minimum 10 (ms)".
	Want string
	// Fix, when set, says what to do.
	Fix string
}

// String returns "got want; fix", leaving out what is empty.
func (d Detail) String() string {
	s := d.Want
	if d.Got != "" {
		s = d.Got + " " + s
	}
	if d.Fix != "" {
		s += "; " + d.Fix
	}
	return s
}

// ConfigError reports every violation of a configuration, in document
// order, a bounded number of them (Truncated says more were found).
// Details[i], when present, says what Violations[i] found (see Message).
// errors.Is matches ErrInvalidConfig and the sentinel of each rule broken.
type ConfigError struct {
	Violations []Violation
	Details    []Detail
	Truncated  bool
}

// Detail returns what violation i found: Details[i] when present, else
// the rule's description (Rule.Detail).
func (e *ConfigError) Detail(i int) Detail {
	if i < len(e.Details) && e.Details[i].Want != "" {
		return e.Details[i]
	}
	return e.Violations[i].Rule.Detail()
}

// Message returns violation i as "path: rule: detail", such as
// "poll_interval_ms: out_of_range: 5 is below the minimum 10 (ms)".
func (e *ConfigError) Message(i int) string {
	return e.Violations[i].String() + ": " + e.Detail(i).String()
}

// Error lists the first few violations as "path: rule", the first one
// followed by its rule's description (Rule.Detail, never the value given):
// "trigger: invalid config: poll_interval_ms: out_of_range: is outside its
// bounds (see the configuration reference); bindings[0].stream:
// invalid_asset_name; and 3 more". It holds no value from the
// configuration; a key read from it appears in a path only quoted, cut and
// escaped. Message(i) adds what violation i found.
func (e *ConfigError) Error() string {
	return describeViolations("trigger: invalid config", e.Violations, e.Truncated)
}

// Unwrap returns ErrInvalidConfig and the sentinels of the rules broken.
func (e *ConfigError) Unwrap() []error { return ruleSentinels(ErrInvalidConfig, e.Violations) }

// CredentialsError reports every mismatch between a credential set and a
// configuration, and (LoadCredentials, CheckCredentialsFile) every
// violation of a credentials file and the secret files it names. Details[i],
// when present, says what Violations[i] found; Causes[i], when present and
// non-nil, is why a file could not be used: a file-system error (which
// names the file) or package credential's sentinel, never a secret or a
// file's contents. errors.Is matches ErrInvalidCredentials, the sentinel of
// each rule broken and each cause.
type CredentialsError struct {
	Violations []Violation
	Details    []Detail
	Causes     []error
	Truncated  bool
}

// Detail returns what violation i found: Details[i] when present, else
// the rule's description (Rule.Detail).
func (e *CredentialsError) Detail(i int) Detail {
	if i < len(e.Details) && e.Details[i].Want != "" {
		return e.Details[i]
	}
	return e.Violations[i].Rule.Detail()
}

// cause returns Causes[i], or nil.
func (e *CredentialsError) cause(i int) error {
	if i < len(e.Causes) {
		return e.Causes[i]
	}
	return nil
}

// Error lists the first few violations as ConfigError.Error does; no
// credential value appears in it.
func (e *CredentialsError) Error() string {
	return describeViolations("trigger: credentials do not match the config", e.Violations, e.Truncated)
}

// Message returns violation i as "path: rule: detail", with its cause in
// parentheses when it has one; no credential value appears in it.
func (e *CredentialsError) Message(i int) string {
	s := e.Violations[i].String() + ": " + e.Detail(i).String()
	if c := e.cause(i); c != nil {
		s += " (" + c.Error() + ")"
	}
	return s
}

// Unwrap returns ErrInvalidCredentials, the sentinels of the rules broken
// and the causes.
func (e *CredentialsError) Unwrap() []error {
	out := ruleSentinels(ErrInvalidCredentials, e.Violations)
	for _, c := range e.Causes {
		if c != nil {
			out = append(out, c)
		}
	}
	return out
}

// describeViolationsMax is how many violations an error message lists.
const describeViolationsMax = 8

// describeViolations writes a message listing up to describeViolationsMax
// violations, the first with its rule's description: a bounded text with
// no value from the input.
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
		if i == 0 {
			b.WriteString(": " + v.Rule.Detail().String())
		}
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
		if !slices.Contains(out, error(v.Rule)) {
			out = append(out, v.Rule)
		}
	}
	return out
}

// Sentinels of installation, pools and the run loop; those of the
// configuration are above. No message contains a secret, payload bytes or
// broker text.
var (
	// ErrEpochConflict is matched by every *EpochError: the registry's
	// current epoch for the logical ID is not the expected one, or the new
	// epoch does not move forward.
	ErrEpochConflict = errors.New("trigger: epoch transition refused")
	// ErrSuperseded: a newer epoch of the same logical ID was installed;
	// this installation makes no further step.
	ErrSuperseded = errors.New("trigger: installation superseded by a newer epoch")
	// ErrClosed: the installation (or the pools) was closed.
	ErrClosed = errors.New("trigger: closed")
	// ErrRunning: Run or Step was called while a Run or a Step drives the
	// installation.
	ErrRunning = errors.New("trigger: already running")
	// ErrReentrant: Step or Run was called with the context the runtime
	// gave one of the installation's own host callbacks, or one derived
	// from it: from inside the step (see host.go).
	ErrReentrant = errors.New("trigger: step or run called from inside the step's own host callback")
	// ErrPoolExhausted is matched by every *ReservationError: a shared pool
	// limit refused a reservation, so nothing was sent.
	ErrPoolExhausted = errors.New("trigger: pool reservation unavailable")
	// ErrDialBackoff: the tenant client's last dial failed and its backoff
	// has not elapsed, so nothing was dialled.
	ErrDialBackoff = errors.New("trigger: tenant client in dial backoff")
	// ErrInvalidPoolLimits is matched by every *PoolLimitsError.
	ErrInvalidPoolLimits = errors.New("trigger: invalid pool limits")
	// ErrInvalidLogicalID: a logical ID empty, longer than an ID may
	// be (docs/CONFIGURATION.md) or with
	// bytes other than printable ASCII.
	ErrInvalidLogicalID = errors.New("trigger: invalid logical id")
	// ErrNoHost: Run or Step was given a nil Host.
	ErrNoHost = errors.New("trigger: nil host")
)

// EpochError reports a refused epoch transition of one logical ID.
type EpochError struct {
	LogicalID string
	// Current is the registry's epoch (0 when the ID was never installed).
	Current  uint64
	Expected uint64
	Epoch    uint64
}

func (e *EpochError) Error() string {
	return "trigger: epoch transition refused for " + strconv.QuoteToASCII(e.LogicalID) +
		": current " + strconv.FormatUint(e.Current, 10) +
		", expected " + strconv.FormatUint(e.Expected, 10) +
		", new " + strconv.FormatUint(e.Epoch, 10)
}

// Unwrap returns ErrEpochConflict.
func (e *EpochError) Unwrap() error { return ErrEpochConflict }

// Resource names what a pool reservation ran out of.
type Resource uint8

// Resources of the shared pools.
const (
	// ResourceBytes: PoolLimits.MaxBytes, all accounted bytes.
	ResourceBytes Resource = iota + 1
	// ResourceMetadataBytes: PoolLimits.MaxMetadataBytes, the installation
	// charges.
	ResourceMetadataBytes
	// ResourceInstallations: PoolLimits.MaxInstallations.
	ResourceInstallations
	// ResourceRequests: PoolLimits.MaxRequests.
	ResourceRequests
	// ResourceClients: PoolLimits.MaxClients.
	ResourceClients
	// ResourceConnections: PoolLimits.MaxConnections.
	ResourceConnections
	// ResourceTenantRequests: PoolLimits.MaxTenantRequests.
	ResourceTenantRequests
	// ResourceTenantConnections: PoolLimits.MaxTenantConnections.
	ResourceTenantConnections
	// ResourceProviderRequests: PoolLimits.MaxProviderRequests.
	ResourceProviderRequests
	// ResourceProviderConnections: PoolLimits.MaxProviderConnections.
	ResourceProviderConnections
)

// numResources is the number of Resource values; they are 1..numResources.
const numResources = int(ResourceProviderConnections)

// String returns the resource's name, or "Resource(n)" outside the list.
func (r Resource) String() string {
	switch r {
	case ResourceBytes:
		return "bytes"
	case ResourceMetadataBytes:
		return "metadata bytes"
	case ResourceInstallations:
		return "installations"
	case ResourceRequests:
		return "requests"
	case ResourceClients:
		return "clients"
	case ResourceConnections:
		return "connections"
	case ResourceTenantRequests:
		return "tenant requests"
	case ResourceTenantConnections:
		return "tenant connections"
	case ResourceProviderRequests:
		return "provider requests"
	case ResourceProviderConnections:
		return "provider connections"
	}
	return "Resource(" + strconv.Itoa(int(r)) + ")"
}

// ReservationError reports the pool limit that refused a reservation.
type ReservationError struct {
	Resource Resource
}

func (e *ReservationError) Error() string {
	return "trigger: pool reservation unavailable: " + e.Resource.String()
}

// Unwrap returns ErrPoolExhausted.
func (e *ReservationError) Unwrap() error { return ErrPoolExhausted }

// PoolLimitsError reports the first PoolLimits field out of its bounds.
type PoolLimitsError struct {
	Field string
}

func (e *PoolLimitsError) Error() string {
	return "trigger: invalid pool limits: " + e.Field + " out of range"
}

// Unwrap returns ErrInvalidPoolLimits.
func (e *PoolLimitsError) Unwrap() error { return ErrInvalidPoolLimits }

// reservationError returns a *ReservationError for r.
func reservationError(r Resource) error { return &ReservationError{Resource: r} }
