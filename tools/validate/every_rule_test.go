package validate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/trigger"
)

// TestMainEveryConfigRule runs the command on configurations that together
// break every rule of the configuration: every_rule.json breaks each rule
// that can share a document with the others (an array cut to its bound,
// a syntax error, invalid UTF-8, an oversized file and a spelling
// difference each hide other findings, so they have files of their own). Each output is pinned
// in testdata/<name>.golden: one line per violation naming path, rule, the
// value given and the bound or allowed values.
func TestMainEveryConfigRule(t *testing.T) {
	large := filepath.Join(t.TempDir(), "too_large.json")
	if err := os.WriteFile(large, bytes.Repeat([]byte(" "), trigger.MaxConfigBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	seen := make(map[string]bool)
	for _, tc := range []struct {
		name   string
		config string
	}{
		{"every_rule", filepath.Join("testdata", "every_rule.json")},
		{"count", filepath.Join("testdata", "count.json")},
		{"syntax", filepath.Join("testdata", "syntax.json")},
		{"not_canonical", filepath.Join("testdata", "not_canonical.json")},
		{"invalid_utf8", filepath.Join("testdata", "invalid_utf8.json")},
		{"too_large", large},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", tc.name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runMain("-config", tc.config)
			if code != ExitViolations || stderr != "" {
				t.Errorf("exit %d, stderr %q; want %d and nothing", code, stderr, ExitViolations)
			}
			if diff := cmp.Diff(string(want), stdout); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			for _, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
				if f := strings.SplitN(line, ": ", 4); len(f) == 4 {
					seen[f[2]] = true
				}
			}
		})
	}
	rules := []trigger.Rule{trigger.RuleUTF8}
	for r := trigger.RuleSyntax; r <= trigger.RuleSPKIPin; r++ {
		rules = append(rules, r)
	}
	for _, r := range rules {
		if !seen[r.String()] {
			t.Errorf("no configuration breaks rule %v", r)
		}
	}
}

// TestEveryRuleNamesValueAndBound checks that every_rule.json's messages
// name the value given and the bound for the numbers and lengths it
// breaks, and say what to do for the common mistakes.
func TestEveryRuleNamesValueAndBound(t *testing.T) {
	_, stdout, _ := runMain("-config", filepath.Join("testdata", "every_rule.json"))
	for _, want := range []string{
		"config: poll_interval_ms: out_of_range: 5 is below the minimum 10 (ms)\n",
		"config: bindings[0].max_deliver: out_of_range: 17 is above the maximum 16\n",
		`config: profile: profile: "nats-jetstream-pull-v2" is not the allowed value "nats-jetstream-pull-v1"` + "\n",
		"config: bindings[0].root_budget_ms: root_budget_over_timeout: 2500 is above the binding's operation_timeout_ms 2000 (ms)",
		"config: bindings[1].ack_wait_ms: ack_wait_too_short: 2500 is below the minimum 3000 (ms)",
		`config: bindings[3].filter_subject: wildcard_subject: "t3.>" holds '*' or '>': a filter subject is literal; give each literal subject its own binding` + "\n",
		`config: bindings[2].stream: invalid_asset_name: "OR.DERS" `,
		"; a dot separates subject tokens: use '_' or '-' instead\n",
		`config: tenants[4].destination.address: non_public_address: "10.0.0.5:4222" is in the non-public range 10.0.0.0/8; set allow_non_public: true`,
		`config: bindings[3].id: duplicate_id: "b0" is already the id of bindings[0]; give each binding its own id` + "\n",
		`config: bindings[2].tenant: unknown_tenant: "t2" is not the id of a tenant; allowed: "t0", "t1", "t3", "t4", "t5", "t6", "t7"` + "\n",
	} {
		t.Run(want, func(t *testing.T) {
			if !strings.Contains(stdout, want) {
				t.Errorf("output lacks %q:\n%s", want, stdout)
			}
		})
	}
}
