package acksubject_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/acksubject"
	"pgregory.net/rapid"
)

func TestAccountHash(t *testing.T) {
	tests := []struct {
		name    string
		account string
		want    string
	}{
		// Seen live in a v2 ack subject of the global account (PROTOCOL.md §6.1).
		{"global account", globalAccount, globalAccountV2H},
		// The rest computed independently of this package from SHA-256 and
		// the broker's base62 digit order.
		{"system account", "$SYS", "ki1IfA3O"},
		{"one letter", "A", "NUmM6cRx"},
		{"empty", "", "fqA4S4SK"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, acksubject.AccountHash(tt.account)); diff != "" {
				t.Errorf("AccountHash() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAccountHashIsAValidToken(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		account := rapid.String().Draw(t, "account")
		info := validInfo(acksubject.FormV2)
		info.AccountHash = acksubject.AccountHash(account)
		if err := info.Validate(); err != nil {
			t.Fatalf("Info with AccountHash(%q) invalid: %v", account, err)
		}
	})
}
