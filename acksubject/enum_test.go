package acksubject_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/acksubject"
)

func TestFormString(t *testing.T) {
	got := map[acksubject.Form]string{}
	for f := acksubject.Form(0); f <= acksubject.FormV2+1; f++ {
		got[f] = f.String()
	}
	want := map[acksubject.Form]string{0: "Form(0)", acksubject.FormClassic: "classic", acksubject.FormV2: "v2", 3: "Form(3)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Form.String (-want +got):\n%s", diff)
	}
}

func TestFieldString(t *testing.T) {
	got := map[acksubject.Field]string{}
	for f := acksubject.Field(0); f <= acksubject.FieldPending+1; f++ {
		got[f] = f.String()
	}
	want := map[acksubject.Field]string{
		0:                           "Field(0)",
		acksubject.FieldSubject:     "subject",
		acksubject.FieldPrefix:      "prefix",
		acksubject.FieldDomain:      "domain",
		acksubject.FieldAccountHash: "account hash",
		acksubject.FieldStream:      "stream",
		acksubject.FieldConsumer:    "consumer",
		acksubject.FieldDelivered:   "delivered",
		acksubject.FieldStreamSeq:   "stream sequence",
		acksubject.FieldConsumerSeq: "consumer sequence",
		acksubject.FieldTimestamp:   "timestamp",
		acksubject.FieldPending:     "pending",
		acksubject.FieldPending + 1: "Field(12)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Field.String (-want +got):\n%s", diff)
	}
}

func TestRuleString(t *testing.T) {
	got := map[acksubject.Rule]string{}
	for r := acksubject.Rule(0); r <= acksubject.RuleExtended+1; r++ {
		got[r] = r.String()
	}
	want := map[acksubject.Rule]string{
		0:                           "Rule(0)",
		acksubject.RuleTooLong:      "subject too long",
		acksubject.RuleTokenCount:   "wrong token count",
		acksubject.RuleEmpty:        "empty token",
		acksubject.RuleWildcard:     "wildcard token",
		acksubject.RulePrefix:       "not $JS.ACK",
		acksubject.RuleDomain:       "domain other than _",
		acksubject.RuleAccountHash:  "malformed account hash",
		acksubject.RuleNameTooLong:  "name too long",
		acksubject.RuleNameByte:     "forbidden byte in name",
		acksubject.RuleSign:         "signed number",
		acksubject.RuleNotDecimal:   "not a decimal number",
		acksubject.RuleLeadingZero:  "leading zero",
		acksubject.RuleOverflow:     "number overflows",
		acksubject.RuleZero:         "zero count or sequence",
		acksubject.RuleForm:         "unknown form",
		acksubject.RuleExtended:     "extended v2 form",
		acksubject.RuleExtended + 1: "Rule(17)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Rule.String (-want +got):\n%s", diff)
	}
}
