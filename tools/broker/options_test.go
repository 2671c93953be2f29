package broker

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func tenants(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("t%d", i)
	}
	return names
}

// dnsName returns a valid host name of exactly n bytes (n >= 4).
func dnsName(n int) string {
	var b strings.Builder
	for b.Len() < n-4 {
		label := min(63, n-4-b.Len())
		if label > 1 && b.Len()+label+1 > n-4 {
			label--
		}
		b.WriteString(strings.Repeat("a", label))
		b.WriteByte('.')
	}
	s := b.String()
	s = s[:len(s)-1]
	for len(s)+4 < n {
		s += "b"
	}
	return s + ".xyz"
}

func TestOptionsValidate(t *testing.T) {
	ok := Options{Tenants: []string{"t1"}}
	with := func(f func(*Options)) Options {
		o := ok
		f(&o)
		return o
	}
	for _, tc := range []struct {
		name      string
		opts      Options
		wantField string // "" = valid
	}{
		{"minimal", ok, ""},
		{"no tenants", Options{}, "Tenants"},
		{"MaxTenantAccounts", with(func(o *Options) { o.Tenants = tenants(MaxTenantAccounts) }), ""},
		{"MaxTenantAccounts+1", with(func(o *Options) { o.Tenants = tenants(MaxTenantAccounts + 1) }), "Tenants"},
		{"tenant name at MaxTenantNameLen", with(func(o *Options) { o.Tenants = []string{strings.Repeat("a", MaxTenantNameLen)} }), ""},
		{"tenant name past MaxTenantNameLen", with(func(o *Options) { o.Tenants = []string{strings.Repeat("a", MaxTenantNameLen+1)} }), "Tenants"},
		{"empty tenant name", with(func(o *Options) { o.Tenants = []string{""} }), "Tenants"},
		{"tenant name with a dot", with(func(o *Options) { o.Tenants = []string{"a.b"} }), "Tenants"},
		{"tenant name with a space", with(func(o *Options) { o.Tenants = []string{"a b"} }), "Tenants"},
		{"duplicate tenants", with(func(o *Options) { o.Tenants = []string{"a", "a"} }), "Tenants"},
		{"server name at MaxServerNameLen", with(func(o *Options) { o.ServerName = dnsName(MaxServerNameLen) }), ""},
		{"server name past MaxServerNameLen", with(func(o *Options) { o.ServerName = dnsName(MaxServerNameLen + 1) }), "ServerName"},
		{"server name IPv4", with(func(o *Options) { o.ServerName = "127.0.0.1" }), "ServerName"},
		{"server name IPv6", with(func(o *Options) { o.ServerName = "::1" }), "ServerName"},
		{"server name one label", with(func(o *Options) { o.ServerName = "localhost" }), "ServerName"},
		{"server name upper case", with(func(o *Options) { o.ServerName = "Broker.test" }), "ServerName"},
		{"server name numeric last label", with(func(o *Options) { o.ServerName = "a.123" }), "ServerName"},
		{"server name label hyphen", with(func(o *Options) { o.ServerName = "-a.test" }), "ServerName"},
		{"server name label 63", with(func(o *Options) { o.ServerName = strings.Repeat("a", 63) + ".test" }), ""},
		{"server name label 64", with(func(o *Options) { o.ServerName = strings.Repeat("a", 64) + ".test" }), "ServerName"},
		{"handshake out of range", with(func(o *Options) { o.Handshake = HandshakeFallback + 1 }), "Handshake"},
		{"delay without fallback", with(func(o *Options) { o.FallbackDelay = time.Second }), "FallbackDelay"},
		{"fallback without delay", with(func(o *Options) { o.Handshake = HandshakeFallback }), "FallbackDelay"},
		{"fallback 1ms", with(func(o *Options) { o.Handshake, o.FallbackDelay = HandshakeFallback, time.Millisecond }), ""},
		{"fallback below 1ms", with(func(o *Options) { o.Handshake, o.FallbackDelay = HandshakeFallback, time.Millisecond-1 }), "FallbackDelay"},
		{"fallback at MaxFallbackDelay", with(func(o *Options) { o.Handshake, o.FallbackDelay = HandshakeFallback, MaxFallbackDelay }), ""},
		{"fallback past MaxFallbackDelay", with(func(o *Options) { o.Handshake, o.FallbackDelay = HandshakeFallback, MaxFallbackDelay+1 }), "FallbackDelay"},
		{"TLSTimeout at MaxTLSTimeout", with(func(o *Options) { o.TLSTimeout = MaxTLSTimeout }), ""},
		{"TLSTimeout past MaxTLSTimeout", with(func(o *Options) { o.TLSTimeout = MaxTLSTimeout + 1 }), "TLSTimeout"},
		{"TLSTimeout negative", with(func(o *Options) { o.TLSTimeout = -1 }), "TLSTimeout"},
		{"MaxFileStore at limit", with(func(o *Options) { o.MaxFileStore = MaxFileStore }), ""},
		{"MaxFileStore past limit", with(func(o *Options) { o.MaxFileStore = MaxFileStore + 1 }), "MaxFileStore"},
		{"MaxFileStore negative", with(func(o *Options) { o.MaxFileStore = -1 }), "MaxFileStore"},
		{"small file store clamps default account disk", with(func(o *Options) { o.MaxFileStore = 1 << 20 }), ""},
		{"account memory at MemoryLimit", with(func(o *Options) { o.AccountLimits.MemoryStorage = MemoryLimit }), ""},
		{"account memory past MemoryLimit", with(func(o *Options) { o.AccountLimits.MemoryStorage = MemoryLimit + 1 }), "AccountLimits"},
		{"account disk past file store", with(func(o *Options) { o.AccountLimits.DiskStorage = DefaultMaxFileStore + 1 }), "AccountLimits"},
		{"account streams negative", with(func(o *Options) { o.AccountLimits.Streams = -1 }), "AccountLimits"},
		{"JetStreamDomain", with(func(o *Options) { o.JetStreamDomain = "hub-1_a" }), ""},
		{"JetStreamDomain at MaxTenantNameLen", with(func(o *Options) { o.JetStreamDomain = strings.Repeat("d", MaxTenantNameLen) }), ""},
		{"JetStreamDomain past MaxTenantNameLen", with(func(o *Options) { o.JetStreamDomain = strings.Repeat("d", MaxTenantNameLen+1) }), "JetStreamDomain"},
		{"JetStreamDomain with a dot", with(func(o *Options) { o.JetStreamDomain = "a.b" }), "JetStreamDomain"},
		{"JetStreamDomain with a quote", with(func(o *Options) { o.JetStreamDomain = `a"b` }), "JetStreamDomain"},
		{"SyncInterval always", with(func(o *Options) { o.SyncInterval = "always" }), ""},
		{"SyncInterval ALWAYS", with(func(o *Options) { o.SyncInterval = "ALWAYS" }), "SyncInterval"},
		{"SyncInterval 2m", with(func(o *Options) { o.SyncInterval = "2m" }), ""},
		{"SyncInterval at MinSyncInterval", with(func(o *Options) { o.SyncInterval = MinSyncInterval.String() }), ""},
		{"SyncInterval below MinSyncInterval", with(func(o *Options) { o.SyncInterval = (MinSyncInterval - 1).String() }), "SyncInterval"},
		{"SyncInterval at MaxSyncInterval", with(func(o *Options) { o.SyncInterval = MaxSyncInterval.String() }), ""},
		{"SyncInterval past MaxSyncInterval", with(func(o *Options) { o.SyncInterval = (MaxSyncInterval + 1).String() }), "SyncInterval"},
		{"SyncInterval zero", with(func(o *Options) { o.SyncInterval = "0s" }), "SyncInterval"},
		{"SyncInterval negative", with(func(o *Options) { o.SyncInterval = "-2m" }), "SyncInterval"},
		{"SyncInterval without unit", with(func(o *Options) { o.SyncInterval = "120" }), "SyncInterval"},
		{"SyncInterval with a space", with(func(o *Options) { o.SyncInterval = " 2m" }), "SyncInterval"},
		{"SyncInterval word", with(func(o *Options) { o.SyncInterval = "never" }), "SyncInterval"},
		{"LameDuckDuration at MinLameDuckDuration", with(func(o *Options) { o.LameDuckDuration = MinLameDuckDuration }), ""},
		{"LameDuckDuration below MinLameDuckDuration", with(func(o *Options) { o.LameDuckDuration = MinLameDuckDuration - 1 }), "LameDuckDuration"},
		{"LameDuckDuration at MaxLameDuckDuration", with(func(o *Options) { o.LameDuckDuration = MaxLameDuckDuration }), ""},
		{"LameDuckDuration past MaxLameDuckDuration", with(func(o *Options) { o.LameDuckDuration = MaxLameDuckDuration + 1 }), "LameDuckDuration"},
		{"LameDuckDuration negative", with(func(o *Options) { o.LameDuckDuration = -time.Minute }), "LameDuckDuration"},
		{"LameDuckGracePeriod 1ns", with(func(o *Options) { o.LameDuckGracePeriod = 1 }), ""},
		{"LameDuckGracePeriod negative", with(func(o *Options) { o.LameDuckGracePeriod = -1 }), "LameDuckGracePeriod"},
		{"LameDuckGracePeriod below the default duration", with(func(o *Options) { o.LameDuckGracePeriod = DefaultLameDuckDuration - 1 }), ""},
		{"LameDuckGracePeriod at the default duration", with(func(o *Options) { o.LameDuckGracePeriod = DefaultLameDuckDuration }), "LameDuckGracePeriod"},
		{"LameDuckGracePeriod below the duration", with(func(o *Options) {
			o.LameDuckDuration, o.LameDuckGracePeriod = MinLameDuckDuration, MinLameDuckDuration-1
		}), ""},
		{"LameDuckGracePeriod at the duration", with(func(o *Options) {
			o.LameDuckDuration, o.LameDuckGracePeriod = MinLameDuckDuration, MinLameDuckDuration
		}), "LameDuckGracePeriod"},
		{"default grace period with the shortest duration", with(func(o *Options) { o.LameDuckDuration = MinLameDuckDuration }), ""},
		{"a signing key", with(func(o *Options) { o.SigningKeys = []SigningKey{{Tenant: "t1", Role: "r", PubAllow: []string{"a"}}} }), ""},
		{"MaxSigningKeys", with(func(o *Options) { o.SigningKeys = signingKeys("t1", MaxSigningKeys) }), ""},
		{"MaxSigningKeys+1", with(func(o *Options) { o.SigningKeys = signingKeys("t1", MaxSigningKeys+1) }), "SigningKeys"},
		{"signing key of an unknown tenant", with(func(o *Options) { o.SigningKeys = signingKeys("t2", 1) }), "SigningKey.Tenant"},
		{"signing key without a role", with(func(o *Options) { o.SigningKeys = []SigningKey{{Tenant: "t1"}} }), "SigningKey.Role"},
		{"role at MaxRoleLen", with(func(o *Options) { o.SigningKeys = []SigningKey{{Tenant: "t1", Role: strings.Repeat("r", MaxRoleLen)}} }), ""},
		{"role past MaxRoleLen", with(func(o *Options) {
			o.SigningKeys = []SigningKey{{Tenant: "t1", Role: strings.Repeat("r", MaxRoleLen+1)}}
		}), "SigningKey.Role"},
		{"duplicate role of a tenant", with(func(o *Options) {
			o.SigningKeys = []SigningKey{{Tenant: "t1", Role: "r"}, {Tenant: "t1", Role: "r"}}
		}), "SigningKey.Role"},
		{"one role in two tenants", with(func(o *Options) {
			o.Tenants = []string{"t1", "t2"}
			o.SigningKeys = []SigningKey{{Tenant: "t1", Role: "r"}, {Tenant: "t2", Role: "r"}}
		}), ""},
		{"scope subjects at MaxScopeSubjects", with(func(o *Options) {
			o.SigningKeys = []SigningKey{{Tenant: "t1", Role: "r", PubAllow: slices.Repeat([]string{"a"}, MaxScopeSubjects)}}
		}), ""},
		{"scope subjects past MaxScopeSubjects", with(func(o *Options) {
			o.SigningKeys = []SigningKey{{Tenant: "t1", Role: "r", SubDeny: slices.Repeat([]string{"a"}, MaxScopeSubjects+1)}}
		}), "SigningKey subjects"},
		{"empty scope subject", with(func(o *Options) { o.SigningKeys = []SigningKey{{Tenant: "t1", Role: "r", PubDeny: []string{""}}} }), "SigningKey subjects"},
		{"Extra at MaxExtraLen", with(func(o *Options) { o.Extra = strings.Repeat("#", MaxExtraLen) }), ""},
		{"Extra past MaxExtraLen", with(func(o *Options) { o.Extra = strings.Repeat("#", MaxExtraLen+1) }), "Extra"},
		{"Extra with NUL", with(func(o *Options) { o.Extra = "a\x00" }), "Extra"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.validate()
			var oe *OptionError
			gotField := ""
			if errors.As(err, &oe) {
				gotField = oe.Field
			}
			if diff := cmp.Diff(tc.wantField, gotField); diff != "" {
				t.Errorf("validate() = %v; field (-want +got):\n%s", err, diff)
			}
			if (tc.wantField != "") != errors.Is(err, ErrInvalidOptions) {
				t.Errorf("validate() = %v; errors.Is(ErrInvalidOptions) disagrees with the field", err)
			}
		})
	}
}

// signingKeys returns n signing keys of tenant with distinct roles.
func signingKeys(tenant string, n int) []SigningKey {
	out := make([]SigningKey, n)
	for i := range out {
		out[i] = SigningKey{Tenant: tenant, Role: fmt.Sprintf("r%d", i)}
	}
	return out
}

func TestDNSNameHelper(t *testing.T) {
	for _, n := range []int{MaxServerNameLen, MaxServerNameLen + 1} {
		if got := len(dnsName(n)); got != n {
			t.Errorf("len(dnsName(%d)) = %d", n, got)
		}
	}
}

func TestHandshakeModeString(t *testing.T) {
	for _, tc := range []struct {
		mode HandshakeMode
		want string
	}{
		{HandshakeFirst, "first"},
		{HandshakeAfterInfo, "after-info"},
		{HandshakeAuto, "auto"},
		{HandshakeFallback, "fallback"},
		{0, "HandshakeMode(0)"},
		{HandshakeFallback + 1, "HandshakeMode(5)"},
	} {
		if got := tc.mode.String(); got != tc.want {
			t.Errorf("HandshakeMode(%d).String() = %q, want %q", int(tc.mode), got, tc.want)
		}
	}
}

func TestAccountLimitsDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want AccountLimits
	}{
		{"zero", Options{}, AccountLimits{DefaultAccountMemory, DefaultAccountDisk, DefaultAccountStreams, DefaultAccountConsumers}},
		{"small file store", Options{MaxFileStore: 1 << 20}, AccountLimits{DefaultAccountMemory, 1 << 20, DefaultAccountStreams, DefaultAccountConsumers}},
		{"given", Options{AccountLimits: AccountLimits{1, 2, 3, 4}}, AccountLimits{1, 2, 3, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.opts.accountLimits()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
