package trigger

import (
	"errors"
	"strings"
	"testing"
)

// TestRules lists every rule: each has its own name and maps to a
// sentinel.
func TestRules(t *testing.T) {
	want := map[Rule]struct {
		name string
		err  error
	}{
		RuleSyntax:                  {"syntax", ErrSyntax},
		RuleTooLarge:                {"too_large", ErrTooLarge},
		RuleUnknownField:            {"unknown_field", ErrUnknownField},
		RuleDuplicateKey:            {"duplicate_key", ErrDuplicateKey},
		RuleMissingField:            {"missing_field", ErrMissingField},
		RuleWrongType:               {"wrong_type", ErrWrongType},
		RuleNotCanonical:            {"not_canonical", ErrNotCanonical},
		RuleProfile:                 {"profile", ErrProfile},
		RuleRange:                   {"out_of_range", ErrOutOfRange},
		RuleCount:                   {"count_out_of_range", ErrOutOfRange},
		RuleBudgetOverTimeout:       {"root_budget_over_timeout", ErrOutOfRange},
		RuleAckWaitTooShort:         {"ack_wait_too_short", ErrOutOfRange},
		RuleID:                      {"invalid_id", ErrInvalidName},
		RuleName:                    {"invalid_name", ErrInvalidName},
		RuleAssetName:               {"invalid_asset_name", ErrInvalidName},
		RuleServerName:              {"invalid_server_name", ErrInvalidName},
		RuleSubject:                 {"invalid_subject", ErrInvalidSubject},
		RuleWildcard:                {"wildcard_subject", ErrWildcardFilter},
		RuleDuplicateID:             {"duplicate_id", ErrDuplicate},
		RuleDuplicateConsumer:       {"duplicate_stream_consumer", ErrDuplicate},
		RuleUnknownTenant:           {"unknown_tenant", ErrUnknownTenant},
		RuleUnusedTenant:            {"unused_tenant", ErrUnusedTenant},
		RuleSharedFilter:            {"filter_shared_across_tenants", ErrSharedFilter},
		RuleAddress:                 {"invalid_address", ErrAddress},
		RuleNonPublic:               {"non_public_address", ErrNonPublic},
		RuleNeedlessOptIn:           {"needless_non_public_opt_in", ErrNonPublic},
		RuleRootCAs:                 {"invalid_root_cas", ErrRootCAs},
		RuleSPKIPin:                 {"invalid_spki_pin", ErrSPKIPin},
		RuleCredentialMissing:       {"credential_missing", ErrMissingCred},
		RuleCredentialDuplicate:     {"credential_duplicate", ErrDuplicate},
		RuleCredentialUnknownTenant: {"credential_unknown_tenant", ErrUnknownTenant},
		RuleCredentialProvider:      {"credential_provider_mismatch", ErrCredMismatch},
		RuleCredentialDestination:   {"credential_destination_mismatch", ErrCredMismatch},
		RuleCredentialSecret:        {"credential_secret_unusable", ErrCredUnusable},
		RuleUTF8:                    {"invalid_utf8", ErrInvalidUTF8},
	}
	if len(want) != int(ruleEnd)-1 {
		t.Fatalf("table lists %d rules, the enum has %d", len(want), int(ruleEnd)-1)
	}
	for r := RuleSyntax; r < ruleEnd; r++ {
		t.Run(r.String(), func(t *testing.T) {
			w, ok := want[r]
			if !ok {
				t.Fatalf("rule %d not in the table", r)
			}
			if r.String() != w.name {
				t.Errorf("String() = %q, want %q", r.String(), w.name)
			}
			if r.Err() != w.err {
				t.Errorf("Err() = %v, want %v", r.Err(), w.err)
			}
		})
	}
	for _, r := range []Rule{0, ruleEnd} {
		if !strings.HasPrefix(r.String(), "Rule(") || r.Err() != errUnreachableRule {
			t.Errorf("rule %d: String %q Err %v", r, r.String(), r.Err())
		}
	}
}

func TestConfigError(t *testing.T) {
	c := configWith(t, func(c *Config) {
		c.PollIntervalMS = 0
		for i := range c.Bindings {
			c.Bindings[i].MaxDeliver = 0
			c.Bindings[i].NakDelayMS = 0
			c.Bindings[i].Stream = "a.b"
		}
	})
	err := c.Validate()
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("Validate error %v is not a *ConfigError", err)
	}
	for _, target := range []error{ErrInvalidConfig, ErrOutOfRange, ErrInvalidName} {
		if !errors.Is(err, target) {
			t.Errorf("errors.Is(err, %v) = false", target)
		}
	}
	for _, target := range []error{ErrSyntax, ErrWildcardFilter, ErrInvalidCredentials} {
		if errors.Is(err, target) {
			t.Errorf("errors.Is(err, %v) = true", target)
		}
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "trigger: invalid config: poll_interval_ms: out_of_range; ") || !strings.HasSuffix(msg, "; and 2 more") {
		t.Errorf("message %q", msg)
	}
	if got := (Violation{Rule: RuleTooLarge}).String(); got != "(document): too_large" {
		t.Errorf("root violation renders as %q", got)
	}
}

func TestViolationsTruncated(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range MaxViolations + 10 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k`)
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(`":0`)
	}
	b.WriteString("}")
	_, err := ParseConfig([]byte(b.String()))
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a *ConfigError", err)
	}
	if len(ce.Violations) != MaxViolations || !ce.Truncated {
		t.Errorf("%d violationList, truncated %v; want %d, true", len(ce.Violations), ce.Truncated, MaxViolations)
	}
	if !strings.HasSuffix(ce.Error(), "; list truncated") {
		t.Errorf("message %q does not say it is truncated", ce.Error())
	}
}
