package trigger

import (
	"net/netip"
	"strings"
	"testing"
)

// TestViolationPaths checks each rule at its path, through Validate and
// through ParseConfig of the same configuration's encoding.
func TestViolationPaths(t *testing.T) {
	d0 := func(key string) string { return "tenants[0].destination." + key }
	b0 := func(key string) string { return "bindings[0]." + key }
	addr := func(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
	junk := "not a certificate"
	cert := pemOf(testCert(t, "nats.test", 1))
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want []Violation
	}{
		{"profile", func(c *Config) { c.Profile = "nats-jetstream-pull-v2" }, []Violation{{"profile", RuleProfile}}},
		{"empty profile", func(c *Config) { c.Profile = "" }, []Violation{{"profile", RuleProfile}}},
		{"tenant id empty", func(c *Config) { c.Tenants[1].ID = ""; c.Bindings[2].Tenant = "" }, []Violation{
			{"tenants[1].id", RuleID}, {"bindings[2].tenant", RuleID}}},
		{"tenant id with space", func(c *Config) { c.Tenants[1].ID = "glo bex"; c.Bindings[2].Tenant = "glo bex" }, []Violation{
			{"tenants[1].id", RuleID}, {"bindings[2].tenant", RuleID}}},
		{"duplicate tenant id", func(c *Config) { c.Tenants[1].ID = "acme"; c.Bindings[2].Tenant = "acme" }, []Violation{
			{"tenants[1].id", RuleDuplicateID}}},
		{"provider id with slash", func(c *Config) { c.Tenants[0].ProviderID = "a/b" }, []Violation{{"tenants[0].provider_id", RuleID}}},
		{"unknown tenant", func(c *Config) { c.Bindings[2].Tenant = "initech" }, []Violation{
			{"bindings[2].tenant", RuleUnknownTenant}, {"tenants[1]", RuleUnusedTenant}}},
		{"duplicate binding id", func(c *Config) { c.Bindings[2].ID = "b0" }, []Violation{{"bindings[2].id", RuleDuplicateID}}},
		{"binding id with space", func(c *Config) { c.Bindings[0].ID = "b 0" }, []Violation{{b0("id"), RuleID}}},
		{"principal with space", func(c *Config) { c.Bindings[0].Principal = "svc orders" }, []Violation{{b0("principal"), RuleName}}},
		{"service empty", func(c *Config) { c.Bindings[0].Service = "" }, []Violation{{b0("service"), RuleName}}},
		{"contract non-ascii", func(c *Config) { c.Bindings[0].Contract = "vértice" }, []Violation{{b0("contract"), RuleName}}},
		{"function with tab", func(c *Config) { c.Bindings[0].Function = "a\tb" }, []Violation{{b0("function"), RuleName}}},
		{"route with newline", func(c *Config) { c.Bindings[1].Route = "a\nb" }, []Violation{{"bindings[1].route", RuleName}}},
		{"stream with dot", func(c *Config) { c.Bindings[0].Stream = "OR.DERS" }, []Violation{{b0("stream"), RuleAssetName}}},
		{"stream empty", func(c *Config) { c.Bindings[0].Stream = "" }, []Violation{{b0("stream"), RuleAssetName}}},
		{"stream with space", func(c *Config) { c.Bindings[0].Stream = "OR DERS" }, []Violation{{b0("stream"), RuleAssetName}}},
		{"stream with star", func(c *Config) { c.Bindings[0].Stream = "ORDERS*" }, []Violation{{b0("stream"), RuleAssetName}}},
		{"stream with gt", func(c *Config) { c.Bindings[0].Stream = "ORDERS>" }, []Violation{{b0("stream"), RuleAssetName}}},
		{"consumer with slash", func(c *Config) { c.Bindings[0].Consumer = "c/0" }, []Violation{{b0("consumer"), RuleAssetName}}},
		{"consumer with backslash", func(c *Config) { c.Bindings[0].Consumer = `c\0` }, []Violation{{b0("consumer"), RuleAssetName}}},
		{"consumer with form feed", func(c *Config) { c.Bindings[0].Consumer = "c\f0" }, []Violation{{b0("consumer"), RuleAssetName}}},
		{"consumer with NUL", func(c *Config) { c.Bindings[0].Consumer = "c\x000" }, []Violation{{b0("consumer"), RuleAssetName}}},
		{"asset name allows broker-valid punctuation", func(c *Config) { c.Bindings[0].Stream = "ORD@ERS%~-_ü" }, nil},
		{"duplicate stream/consumer", func(c *Config) { c.Bindings[1].Consumer = "c0" }, []Violation{{"bindings[1].consumer", RuleDuplicateConsumer}}},
		{"same consumer name on another stream", func(c *Config) { c.Bindings[1].Consumer, c.Bindings[1].Stream = "c0", "OTHER" }, nil},
		{"filter wildcard token", func(c *Config) { c.Bindings[0].FilterSubject = "acme.*" }, []Violation{{b0("filter_subject"), RuleWildcard}}},
		{"filter full wildcard", func(c *Config) { c.Bindings[0].FilterSubject = "acme.>" }, []Violation{{b0("filter_subject"), RuleWildcard}}},
		{"filter star inside token", func(c *Config) { c.Bindings[0].FilterSubject = "acme.a*b" }, []Violation{{b0("filter_subject"), RuleWildcard}}},
		{"filter empty", func(c *Config) { c.Bindings[0].FilterSubject = "" }, []Violation{{b0("filter_subject"), RuleSubject}}},
		{"filter empty token", func(c *Config) { c.Bindings[0].FilterSubject = "acme..x" }, []Violation{{b0("filter_subject"), RuleSubject}}},
		{"filter leading dot", func(c *Config) { c.Bindings[0].FilterSubject = ".acme" }, []Violation{{b0("filter_subject"), RuleSubject}}},
		{"filter trailing dot", func(c *Config) { c.Bindings[0].FilterSubject = "acme." }, []Violation{{b0("filter_subject"), RuleSubject}}},
		{"filter space", func(c *Config) { c.Bindings[0].FilterSubject = "acme x" }, []Violation{{b0("filter_subject"), RuleSubject}}},
		{"filter tab", func(c *Config) { c.Bindings[0].FilterSubject = "acme\tx" }, []Violation{{b0("filter_subject"), RuleSubject}}},
		{"filter CR", func(c *Config) { c.Bindings[0].FilterSubject = "acme\rx" }, []Violation{{b0("filter_subject"), RuleSubject}}},
		{"filter shared across tenants", func(c *Config) { c.Bindings[2].FilterSubject = c.Bindings[0].FilterSubject }, []Violation{
			{"bindings[2].filter_subject", RuleSharedFilter}}},
		{"filter shared within a tenant", func(c *Config) { c.Bindings[1].FilterSubject = c.Bindings[0].FilterSubject }, nil},
		{"address ipv6", func(c *Config) { c.Tenants[0].Destination.Address = addr("[::1]:4222") }, []Violation{{d0("address"), RuleAddress}}},
		{"address 4in6", func(c *Config) { c.Tenants[0].Destination.Address = addr("[::ffff:127.0.0.1]:4222") }, []Violation{{d0("address"), RuleAddress}}},
		{"address zero", func(c *Config) { c.Tenants[0].Destination.Address = netip.AddrPort{} }, []Violation{{d0("address"), RuleAddress}}},
		{"port zero", func(c *Config) { c.Tenants[0].Destination.Address = addr("127.0.0.1:0") }, []Violation{{d0("address"), RuleAddress}}},
		{"unspecified", func(c *Config) { c.Tenants[0].Destination.Address = addr("0.0.0.0:4222") }, []Violation{{d0("address"), RuleAddress}}},
		{"multicast", func(c *Config) { c.Tenants[0].Destination.Address = addr("224.0.0.1:4222") }, []Violation{{d0("address"), RuleAddress}}},
		{"broadcast", func(c *Config) {
			c.Tenants[0].Destination.Address = addr("255.255.255.255:4222")
		}, []Violation{{d0("address"), RuleAddress}}},
		{"loopback without opt-in", func(c *Config) { c.Tenants[0].Destination.AllowNonPublic = false }, []Violation{{d0("address"), RuleNonPublic}}},
		{"private without opt-in", func(c *Config) {
			c.Tenants[0].Destination.Address, c.Tenants[0].Destination.AllowNonPublic = addr("10.1.2.3:4222"), false
		}, []Violation{{d0("address"), RuleNonPublic}}},
		{"shared range without opt-in", func(c *Config) {
			c.Tenants[0].Destination.Address, c.Tenants[0].Destination.AllowNonPublic = addr("100.64.0.1:4222"), false
		}, []Violation{{d0("address"), RuleNonPublic}}},
		{"documentation range without opt-in", func(c *Config) {
			c.Tenants[0].Destination.Address, c.Tenants[0].Destination.AllowNonPublic = addr("203.0.113.9:4222"), false
		}, []Violation{{d0("address"), RuleNonPublic}}},
		{"public without opt-in", func(c *Config) {
			c.Tenants[0].Destination.Address, c.Tenants[0].Destination.AllowNonPublic = addr("8.8.8.8:4222"), false
		}, nil},
		{"public with needless opt-in", func(c *Config) { c.Tenants[0].Destination.Address = addr("8.8.8.8:4222") }, []Violation{
			{d0("allow_non_public"), RuleNeedlessOptIn}}},
		{"server name upper case", func(c *Config) { c.Tenants[0].Destination.ServerName = "NATS.test" }, []Violation{{d0("server_name"), RuleServerName}}},
		{"server name ip literal", func(c *Config) { c.Tenants[0].Destination.ServerName = "127.0.0.1" }, []Violation{{d0("server_name"), RuleServerName}}},
		{"server name empty", func(c *Config) { c.Tenants[0].Destination.ServerName = "" }, []Violation{{d0("server_name"), RuleServerName}}},
		{"server name trailing dot", func(c *Config) { c.Tenants[0].Destination.ServerName = "nats.test." }, []Violation{{d0("server_name"), RuleServerName}}},
		{"server name hyphen edge", func(c *Config) { c.Tenants[0].Destination.ServerName = "-nats.test" }, []Violation{{d0("server_name"), RuleServerName}}},
		{"server name underscore", func(c *Config) { c.Tenants[0].Destination.ServerName = "na_ts.test" }, []Violation{{d0("server_name"), RuleServerName}}},
		{"roots empty", func(c *Config) { c.Tenants[0].Destination.RootCAsPEM = "" }, []Violation{{d0("root_cas_pem"), RuleRootCAs}}},
		{"roots junk", func(c *Config) { c.Tenants[0].Destination.RootCAsPEM = junk }, []Violation{{d0("root_cas_pem"), RuleRootCAs}}},
		{"roots junk before", func(c *Config) { c.Tenants[0].Destination.RootCAsPEM = junk + "\n" + cert }, []Violation{{d0("root_cas_pem"), RuleRootCAs}}},
		{"roots junk after", func(c *Config) { c.Tenants[0].Destination.RootCAsPEM = cert + junk }, []Violation{{d0("root_cas_pem"), RuleRootCAs}}},
		{"roots two certificates", func(c *Config) {
			c.Tenants[0].Destination.RootCAsPEM = cert + "\n" + pemOf(testCert(t, "other", 3))
		}, nil},
		{"roots broken block then good block", func(c *Config) {
			c.Tenants[0].Destination.RootCAsPEM = "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n" + cert
		}, []Violation{{d0("root_cas_pem"), RuleRootCAs}}},
		{"roots private key block", func(c *Config) {
			c.Tenants[0].Destination.RootCAsPEM = strings.Replace(strings.Replace(cert, "BEGIN CERTIFICATE", "BEGIN PRIVATE KEY", 1), "END CERTIFICATE", "END PRIVATE KEY", 1)
		}, []Violation{{d0("root_cas_pem"), RuleRootCAs}}},
		{"roots garbage DER", func(c *Config) {
			c.Tenants[0].Destination.RootCAsPEM = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
		}, []Violation{{d0("root_cas_pem"), RuleRootCAs}}},
		{"roots with headers", func(c *Config) {
			c.Tenants[0].Destination.RootCAsPEM = strings.Replace(cert, "-----\n", "-----\nProc-Type: 4,ENCRYPTED\n\n", 1)
		}, []Violation{{d0("root_cas_pem"), RuleRootCAs}}},
		{"spki upper case", func(c *Config) {
			c.Tenants[0].Destination.SPKISHA256 = strings.ToUpper(SPKIPin(testCert(t, "x", 4)))
		}, []Violation{{d0("spki_sha256"), RuleSPKIPin}}},
		{"spki short", func(c *Config) { c.Tenants[0].Destination.SPKISHA256 = "abcd" }, []Violation{{d0("spki_sha256"), RuleSPKIPin}}},
		{"many at once", func(c *Config) {
			c.PollIntervalMS = 0
			c.Tenants[0].Destination.AllowNonPublic = false
			c.Bindings[0].AckWaitMS = 0
			c.Bindings[1].FilterSubject = "acme.>"
			c.Bindings[2].MaxDeliver = 17
		}, []Violation{
			{"poll_interval_ms", RuleRange},
			{d0("address"), RuleNonPublic},
			{b0("ack_wait_ms"), RuleRange},
			{"bindings[1].filter_subject", RuleWildcard},
			{"bindings[2].max_deliver", RuleRange},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := configWith(t, tc.edit)
			if diff := diffViolations(tc.want, violationsOf(t, c.Validate())); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
			_, err := ParseConfig(c.encode())
			if diff := diffViolations(tc.want, violationsOf(t, err)); diff != "" {
				t.Errorf("ParseConfig (-want +got):\n%s", diff)
			}
			if _, err := c.MarshalJSON(); (err == nil) != (tc.want == nil) {
				t.Errorf("MarshalJSON error = %v, want an error: %v", err, tc.want != nil)
			}
		})
	}
}
