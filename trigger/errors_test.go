package trigger

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRules lists every rule: each has its own name and is its own
// error, "trigger: config rule <name>".
func TestRules(t *testing.T) {
	want := map[Rule]string{
		RuleSyntax:                  "syntax",
		RuleTooLarge:                "too_large",
		RuleUnknownField:            "unknown_field",
		RuleDuplicateKey:            "duplicate_key",
		RuleMissingField:            "missing_field",
		RuleWrongType:               "wrong_type",
		RuleNotCanonical:            "not_canonical",
		RuleProfile:                 "profile",
		RuleRange:                   "out_of_range",
		RuleCount:                   "count_out_of_range",
		RuleBudgetOverTimeout:       "root_budget_over_timeout",
		RuleAckWaitTooShort:         "ack_wait_too_short",
		RuleID:                      "invalid_id",
		RuleName:                    "invalid_name",
		RuleAssetName:               "invalid_asset_name",
		RuleServerName:              "invalid_server_name",
		RuleSubject:                 "invalid_subject",
		RuleWildcard:                "wildcard_subject",
		RuleDuplicateID:             "duplicate_id",
		RuleDuplicateConsumer:       "duplicate_stream_consumer",
		RuleUnknownTenant:           "unknown_tenant",
		RuleUnusedTenant:            "unused_tenant",
		RuleSharedFilter:            "filter_shared_across_tenants",
		RuleAddress:                 "invalid_address",
		RuleNonPublic:               "non_public_address",
		RuleNeedlessOptIn:           "needless_non_public_opt_in",
		RuleRootCAs:                 "invalid_root_cas",
		RuleSPKIPin:                 "invalid_spki_pin",
		RuleCredentialMissing:       "credential_missing",
		RuleCredentialDuplicate:     "credential_duplicate",
		RuleCredentialUnknownTenant: "credential_unknown_tenant",
		RuleCredentialProvider:      "credential_provider_mismatch",
		RuleCredentialDestination:   "credential_destination_mismatch",
		RuleCredentialSecret:        "credential_secret_unusable",
		RuleUTF8:                    "invalid_utf8",
		RuleUnreadable:              "unreadable",
		RuleCredentialKind:          "unknown_kind",
		RuleSecretShared:            "secret_file_shared",
		RuleSecretMalformed:         "secret_malformed",
		RuleSecretExpired:           "secret_expired",
		RuleClientCertKey:           "client_key_mismatch",
		RuleClientCertValidity:      "client_cert_not_valid",
	}
	if len(want) != int(ruleEnd)-1 {
		t.Fatalf("table lists %d rules, the enum has %d", len(want), int(ruleEnd)-1)
	}
	for r := RuleSyntax; r < ruleEnd; r++ {
		t.Run(r.String(), func(t *testing.T) {
			name, ok := want[r]
			if !ok {
				t.Fatalf("rule %d not in the table", r)
			}
			if r.String() != name {
				t.Errorf("String() = %q, want %q", r.String(), name)
			}
			if r.Error() != "trigger: config rule "+name {
				t.Errorf("Error() = %q", r.Error())
			}
		})
	}
	for _, r := range []Rule{0, ruleEnd} {
		if !strings.HasPrefix(r.String(), "Rule(") {
			t.Errorf("rule %d: String %q", r, r.String())
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
	for _, target := range []error{ErrInvalidConfig, RuleRange, RuleAssetName} {
		if !errors.Is(err, target) {
			t.Errorf("errors.Is(err, %v) = false", target)
		}
	}
	for _, target := range []error{RuleSyntax, RuleWildcard, RuleCount, RuleName, ErrInvalidCredentials} {
		if errors.Is(err, target) {
			t.Errorf("errors.Is(err, %v) = true", target)
		}
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "trigger: invalid config: poll_interval_ms: out_of_range: is outside its bounds (see the configuration reference); ") || !strings.HasSuffix(msg, "; and 2 more") {
		t.Errorf("message %q", msg)
	}
	if got := (Violation{Rule: RuleTooLarge}).String(); got != "(document): too_large" {
		t.Errorf("root violation renders as %q", got)
	}
}

func TestViolationsTruncated(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range maxViolations + 10 {
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
	if len(ce.Violations) != maxViolations || !ce.Truncated {
		t.Errorf("%d violationList, truncated %v; want %d, true", len(ce.Violations), ce.Truncated, maxViolations)
	}
	if !strings.HasSuffix(ce.Error(), "; list truncated") {
		t.Errorf("message %q does not say it is truncated", ce.Error())
	}
}

// TestConfigErrorMessage pins Error's text (issue 20: it was terse): the
// first violation's path, rule and the rule's description, the others'
// path and rule, bounded, and never a value from the configuration; a key
// read from the input appears only quoted and escaped.
func TestConfigErrorMessage(t *testing.T) {
	tests := []struct {
		name   string
		input  []byte
		want   string
		absent string // a value from the input, never in the message
	}{
		{
			name:   "range",
			input:  configWith(t, func(c *Config) { c.PollIntervalMS = 7 }).encode(),
			want:   "trigger: invalid config: poll_interval_ms: out_of_range: is outside its bounds (see the configuration reference)",
			absent: "7",
		},
		{
			name:   "asset name",
			input:  configWith(t, func(c *Config) { c.Bindings[2].Stream = "SECRET.VALUE" }).encode(),
			want:   "trigger: invalid config: bindings[2].stream: invalid_asset_name: " + assetNameWant(),
			absent: "SECRET",
		},
		{
			name:  "two violations",
			input: configWith(t, func(c *Config) { c.Bindings[0].FilterSubject = "acme.orders.>"; c.Bindings[1].MaxDeliver = 0 }).encode(),
			want: "trigger: invalid config: bindings[0].filter_subject: wildcard_subject: " + wildcardWant + "; " + wildcardFix +
				"; bindings[1].max_deliver: out_of_range",
			absent: "acme.orders",
		},
		{
			name:  "unknown key escaped",
			input: []byte(`{"po\nll":1}`),
			want: `trigger: invalid config: ["po\nll"]: unknown_field: is not a field of the configuration; check its spelling against the configuration reference` +
				"; profile: missing_field; poll_interval_ms: missing_field; max_control_line_bytes: missing_field" +
				"; max_header_bytes: missing_field; tenants: missing_field; bindings: missing_field",
			absent: "zz-value",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig(tc.input)
			if err == nil {
				t.Fatal("ParseConfig accepted the input")
			}
			got := err.Error()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			if strings.Contains(got, tc.absent) {
				t.Errorf("message %q holds the value %q", got, tc.absent)
			}
		})
	}
}
