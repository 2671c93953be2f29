package broker

import (
	"strings"
	"testing"
)

// TestValidAssetName: the broker's asset-name rule (acksubject.CheckName),
// its bound included, and no control character beyond it.
func TestValidAssetName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"ORDERS", true},
		{"a@b%c~$ü", true},
		{strings.Repeat("n", 255), true},
		{strings.Repeat("n", 256), false},
		{"", false},
		{"a.b", false},
		{"a*", false},
		{"a>", false},
		{"a/b", false},
		{`a\b`, false},
		{"a b", false},
		{"a\x01b", false},
		{"a\x7fb", false},
	} {
		if got := validAssetName(tc.name); got != tc.ok {
			t.Errorf("validAssetName(%q) = %v, want %v", tc.name, got, tc.ok)
		}
	}
}

// TestValidDNSNameBeyondConn: what the harness requires beyond
// conn.ValidServerName.
func TestValidDNSNameBeyondConn(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"broker.latent.test", true},
		{"a.b1", true},
		{"Broker.test", false},
		{"localhost", false},
		{"a.123", false},
		{"1.2.3.4", false},
		{"a..b", false},
	} {
		if got := validDNSName(tc.name); got != tc.ok {
			t.Errorf("validDNSName(%q) = %v, want %v", tc.name, got, tc.ok)
		}
	}
}
