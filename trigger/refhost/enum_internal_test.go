package refhost

import (
	"strings"
	"testing"
)

// TestEnumsString checks every value of each enumeration: its name is its
// own, and the values just outside print as numbers.
func TestEnumsString(t *testing.T) {
	type enum struct {
		name     string
		values   []string
		outside  []string
		fallback string
	}
	var rules, kinds, resources []string
	for r := Rule(1); r < ruleEnd; r++ {
		rules = append(rules, r.String())
	}
	for k := Kind(1); k < kindEnd; k++ {
		kinds = append(kinds, k.String())
	}
	for r := Resource(1); r < resourceEnd; r++ {
		resources = append(resources, r.String())
	}
	enums := []enum{
		{"Rule", rules, []string{Rule(0).String(), ruleEnd.String()}, "Rule("},
		{"Kind", kinds, []string{Kind(0).String(), kindEnd.String()}, "Kind("},
		{"Resource", resources, []string{Resource(0).String(), resourceEnd.String()}, "Resource("},
	}
	for _, e := range enums {
		t.Run(e.name, func(t *testing.T) {
			seen := map[string]bool{}
			for _, v := range e.values {
				if strings.HasPrefix(v, e.fallback) || seen[v] {
					t.Errorf("%s value %q is a fallback or a repeat", e.name, v)
				}
				seen[v] = true
			}
			for _, v := range e.outside {
				if !strings.HasPrefix(v, e.fallback) {
					t.Errorf("%s outside value prints %q", e.name, v)
				}
			}
		})
	}
}

// TestRulesAreErrors checks that each rule's error names the package.
func TestRulesAreErrors(t *testing.T) {
	for r := Rule(1); r < ruleEnd; r++ {
		if got := r.Error(); got != "refhost: "+r.String() {
			t.Errorf("Rule %d Error() = %q", r, got)
		}
	}
}
