package acksubject_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/latent-systems/latent-nats/acksubject"
)

// TestCheckName: the broker's asset-name rule at its length bound and one
// past it, and each byte it forbids, reported as the Rule Parse reports.
func TestCheckName(t *testing.T) {
	tests := []struct {
		name string
		want error
	}{
		{"ORDERS", nil},
		{"a@b%c~$ü", nil},
		{"\x7f\x01", nil},
		{strings.Repeat("n", acksubject.MaxNameLen), nil},
		{strings.Repeat("n", acksubject.MaxNameLen+1), acksubject.RuleNameTooLong},
		{"", acksubject.RuleEmpty},
		{"*", acksubject.RuleWildcard},
		{">", acksubject.RuleWildcard},
		{"a.b", acksubject.RuleNameByte},
		{"a*", acksubject.RuleNameByte},
		{"a>", acksubject.RuleNameByte},
		{`a\b`, acksubject.RuleNameByte},
		{"a/b", acksubject.RuleNameByte},
		{"a b", acksubject.RuleNameByte},
		{"a\tb", acksubject.RuleNameByte},
		{"a\rb", acksubject.RuleNameByte},
		{"a\nb", acksubject.RuleNameByte},
		{"a\fb", acksubject.RuleNameByte},
		{"a\x00b", acksubject.RuleNameByte},
	}
	for _, tt := range tests {
		if err := acksubject.CheckName(tt.name); !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
			t.Errorf("CheckName(%q) = %v, want %v", tt.name, err, tt.want)
		}
	}
}
