package jspull

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/conn"
)

func TestDerivePermissions(t *testing.T) {
	got, err := DerivePermissions("_INBOX_tenant", validBinding())
	if err != nil {
		t.Fatal(err)
	}
	want := Permissions{
		Publish: []string{
			"$JS.ACK.*.*.ORDERS.worker.>",
			"$JS.ACK.ORDERS.worker.>",
			"$JS.API.CONSUMER.INFO.ORDERS.worker",
			"$JS.API.CONSUMER.MSG.NEXT.ORDERS.worker",
		},
		Subscribe: []string{"_INBOX_tenant.>"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DerivePermissions (-want +got):\n%s", diff)
	}
}

func TestDerivePermissionsSeveralBindings(t *testing.T) {
	a := validBinding()
	b := validBinding()
	b.Consumer = "other"
	got, err := DerivePermissions("_INBOX", a, b, a)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"$JS.ACK.*.*.ORDERS.other.>",
		"$JS.ACK.*.*.ORDERS.worker.>",
		"$JS.ACK.ORDERS.other.>",
		"$JS.ACK.ORDERS.worker.>",
		"$JS.API.CONSUMER.INFO.ORDERS.other",
		"$JS.API.CONSUMER.INFO.ORDERS.worker",
		"$JS.API.CONSUMER.MSG.NEXT.ORDERS.other",
		"$JS.API.CONSUMER.MSG.NEXT.ORDERS.worker",
	}
	if diff := cmp.Diff(want, got.Publish); diff != "" {
		t.Errorf("Publish (-want +got):\n%s", diff)
	}
}

func TestDerivePermissionsRefuses(t *testing.T) {
	dotted := validBinding()
	dotted.Consumer = "a.b"
	tests := []struct {
		name     string
		prefix   string
		bindings []Binding
		field    string
	}{
		{"empty prefix", "", []Binding{validBinding()}, "inbox_prefix"},
		{"wildcard prefix", "_INBOX.*", []Binding{validBinding()}, "inbox_prefix"},
		{"full wildcard prefix", "_INBOX.>", []Binding{validBinding()}, "inbox_prefix"},
		{"prefix at max", strings.Repeat("p", conn.MaxInboxPrefixLen), []Binding{validBinding()}, ""},
		{"prefix past max", strings.Repeat("p", conn.MaxInboxPrefixLen+1), []Binding{validBinding()}, "inbox_prefix"},
		{"star inside a prefix token", "_INBOX.a*b", []Binding{validBinding()}, "inbox_prefix"},
		{"no bindings", "_INBOX", nil, "bindings"},
		{"dotted consumer", "_INBOX", []Binding{dotted}, "consumer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DerivePermissions(tt.prefix, tt.bindings...)
			if got := bindingField(err); got != tt.field {
				t.Errorf("DerivePermissions() = %v, want field %q", err, tt.field)
			}
		})
	}
}
