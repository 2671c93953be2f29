package trigger

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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

// TestViolationMessages pins the full message of every rule: the path, the
// rule, the value given, the bound or allowed values and, for the common
// mistakes, what to do.
func TestViolationMessages(t *testing.T) {
	canon := string(validConfig(t).encode())
	parse := func(old, new string) func(*testing.T) error {
		return func(t *testing.T) error {
			if !strings.Contains(canon, old) {
				t.Fatalf("canonical encoding lacks %q", old)
			}
			_, err := ParseConfig([]byte(strings.Replace(canon, old, new, 1)))
			return err
		}
	}
	validate := func(edit func(*Config)) func(*testing.T) error {
		return func(t *testing.T) error { return configWith(t, edit).Validate() }
	}
	match := func(edit func([]Credential) []Credential) func(*testing.T) error {
		return func(t *testing.T) error {
			c := validConfig(t)
			_, err := MatchCredentials(c, edit(testCredentials(t, c)))
			return err
		}
	}
	// load writes a credentials file of validConfig's tenants, edited, into
	// a fresh working directory (so that a cause names a relative path)
	// and loads it.
	load := func(edit func(t *testing.T, es []credEntry)) func(*testing.T) error {
		return func(t *testing.T) error {
			dir := t.TempDir()
			t.Chdir(dir)
			c := validConfig(t)
			es := credEntries(t, ".", c)
			edit(t, es)
			writeCredentialsFile(t, ".", es)
			_, err := LoadCredentials("credentials.json", c, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
			return err
		}
	}
	addr := func(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
	long := strings.Repeat("x", 70)
	seen := make(map[Rule]bool, ruleEnd)
	for _, tc := range []struct {
		name string
		err  func(*testing.T) error
		want []string
	}{
		{"syntax", parse(canon, ""), []string{
			`(document): syntax: is not one JSON object (or nests deeper than 16, or has trailing data)`,
		}},
		{"too large", parse(canon, canon+strings.Repeat(" ", MaxConfigBytes)), []string{
			`(document): too_large: 526772 is above the maximum 524288 (bytes); split the bindings across configurations`,
		}},
		{"unknown field", parse(`{"profile"`, `{"extra":1,"profile"`), []string{
			`extra: unknown_field: is not a field of the configuration; check its spelling against the configuration reference`,
		}},
		{"duplicate key", parse(`{"id":"b0",`, `{"id":"b0","id":"b9",`), []string{
			`bindings[0].id: duplicate_key: appears twice in one object; keep one`,
		}},
		{"missing field", parse(`"max_deliver":5,`, ``), []string{
			`bindings[0].max_deliver: missing_field: is required`,
		}},
		{"invalid utf-8", parse(`"filter_subject":"acme.orders.0"`, "\"filter_subject\":\"acme.orders.\xff\""), []string{
			`bindings[0].filter_subject: invalid_utf8: holds bytes that are not UTF-8, or a \u escape of half a surrogate pair, in a string; save the file as UTF-8 and escape a character outside the BMP as both halves of its pair`,
		}},
		{"wrong type", parse(`"max_deliver":5`, `"max_deliver":"5"`), []string{
			`bindings[0].max_deliver: wrong_type: has the wrong JSON type (integers take no fraction or exponent)`,
		}},
		{"not canonical", parse(`"profile":`, `"profile": `), []string{
			`profile: not_canonical: differs from the canonical encoding here; write it with validate -write-canonical FILE`,
		}},
		{"integer overflow", parse(`"max_deliver":5`, `"max_deliver":99999999999999999999`), []string{
			`bindings[0].max_deliver: out_of_range: 99999999999999999999 is beyond the integers a field takes (-9223372036854775808 to 9223372036854775807); see the configuration reference for its bounds`,
		}},
		{"profile", validate(func(c *Config) { c.Profile = "nats-jetstream-pull-v2" }), []string{
			`profile: profile: "nats-jetstream-pull-v2" is not the allowed value "nats-jetstream-pull-v1"`,
		}},
		{"range below", validate(func(c *Config) { c.PollIntervalMS = 5 }), []string{
			`poll_interval_ms: out_of_range: 5 is below the minimum 10 (ms)`,
		}},
		{"range above", validate(func(c *Config) { c.Bindings[2].MaxDeliver = 17 }), []string{
			`bindings[2].max_deliver: out_of_range: 17 is above the maximum 16`,
		}},
		{"range bytes", validate(func(c *Config) { c.Bindings[0].MaxPayloadBytes = 64 << 10 }), []string{
			`bindings[0].max_payload_bytes: out_of_range: 65536 is above the maximum 32768 (bytes)`,
		}},
		{"count", validate(func(c *Config) { c.Bindings = nil }), []string{
			`bindings: count_out_of_range: 0 is below the minimum 1 (entries)`,
			`tenants[0]: unused_tenant: "acme" is named by no binding; remove the tenant or bind it`,
			`tenants[1]: unused_tenant: "globex" is named by no binding; remove the tenant or bind it`,
		}},
		{"budget over timeout", validate(func(c *Config) { c.Bindings[0].RootBudgetMS = 2500 }), []string{
			`bindings[0].root_budget_ms: root_budget_over_timeout: 2500 is above the binding's operation_timeout_ms 2000 (ms); lower root_budget_ms to at most 2000 or raise operation_timeout_ms`,
		}},
		{"ack wait too short", validate(func(c *Config) { c.Bindings[0].AckWaitMS = 2500 }), []string{
			`bindings[0].ack_wait_ms: ack_wait_too_short: 2500 is below the minimum 3000 (ms): the binding's operation_timeout_ms 2000 plus 1000; raise ack_wait_ms to at least 3000 or lower operation_timeout_ms`,
		}},
		{"id with space", validate(func(c *Config) { c.Bindings[0].ID = "b 0" }), []string{
			`bindings[0].id: invalid_id: "b 0" is not 1-64 bytes of A-Z a-z 0-9 . _ - :`,
		}},
		{"id too long", validate(func(c *Config) { c.Bindings[0].ID = long }), []string{
			`bindings[0].id: invalid_id: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"... (70 bytes) is above the maximum 64 (bytes)`,
		}},
		{"name with space", validate(func(c *Config) { c.Bindings[0].Principal = "svc orders" }), []string{
			`bindings[0].principal: invalid_name: "svc orders" is not 1-256 bytes of printable ASCII without space`,
		}},
		{"name with invalid utf-8", validate(func(c *Config) { c.Bindings[0].Contract = "a\xffb\n" }), []string{
			`bindings[0].contract: invalid_name: "a\xffb\n" is not 1-256 bytes of printable ASCII without space`,
		}},
		{"asset name with dot", validate(func(c *Config) { c.Bindings[0].Stream = "OR.DERS" }), []string{
			`bindings[0].stream: invalid_asset_name: "OR.DERS" is not 1-255 bytes of UTF-8 without space, control characters, '.', '*', '>', '/' or '\'; a dot separates subject tokens: use '_' or '-' instead`,
		}},
		{"asset name empty", validate(func(c *Config) { c.Bindings[0].Consumer = "" }), []string{
			`bindings[0].consumer: invalid_asset_name: "" is not 1-255 bytes of UTF-8 without space, control characters, '.', '*', '>', '/' or '\'`,
		}},
		{"server name upper case", validate(func(c *Config) { c.Tenants[0].Destination.ServerName = "NATS.test" }), []string{
			`tenants[0].destination.server_name: invalid_server_name: "NATS.test" is not a lower-case DNS name of at most 253 bytes (no IP address, no trailing dot); write it in lower case`,
		}},
		{"subject", validate(func(c *Config) { c.Bindings[0].FilterSubject = "acme..x" }), []string{
			`bindings[0].filter_subject: invalid_subject: "acme..x" is not 1-256 bytes of non-empty dot-separated tokens without space or control characters`,
		}},
		{"wildcard", validate(func(c *Config) { c.Bindings[0].FilterSubject = "acme.>" }), []string{
			`bindings[0].filter_subject: wildcard_subject: "acme.>" holds '*' or '>': a filter subject is literal; give each literal subject its own binding`,
		}},
		{"duplicate binding id", validate(func(c *Config) { c.Bindings[2].ID = "b0" }), []string{
			`bindings[2].id: duplicate_id: "b0" is already the id of bindings[0]; give each binding its own id`,
		}},
		{"duplicate tenant id", validate(func(c *Config) { c.Tenants[1].ID = "acme"; c.Bindings[2].Tenant = "acme" }), []string{
			`tenants[1].id: duplicate_id: "acme" is already the id of tenants[0]; give each tenant its own id`,
		}},
		{"duplicate consumer", validate(func(c *Config) { c.Bindings[1].Consumer = "c0" }), []string{
			`bindings[1].consumer: duplicate_stream_consumer: "c0" on stream "ORDERS" is already the consumer of bindings[0]; give each binding its own durable consumer`,
		}},
		{"unknown tenant", validate(func(c *Config) { c.Bindings[2].Tenant = "initech" }), []string{
			`bindings[2].tenant: unknown_tenant: "initech" is not the id of a tenant; allowed: "acme", "globex"`,
			`tenants[1]: unused_tenant: "globex" is named by no binding; remove the tenant or bind it`,
		}},
		{"shared filter", validate(func(c *Config) { c.Bindings[2].FilterSubject = c.Bindings[0].FilterSubject }), []string{
			`bindings[2].filter_subject: filter_shared_across_tenants: "acme.orders.0" is already the filter subject of bindings[0] of tenant "acme"; give each tenant its own subjects`,
		}},
		{"address ipv6", validate(func(c *Config) { c.Tenants[0].Destination.Address = addr("[::1]:4222") }), []string{
			`tenants[0].destination.address: invalid_address: "[::1]:4222" is not an IPv4 address with a non-zero port (not unspecified, multicast or broadcast); write it as a.b.c.d:port`,
		}},
		{"address port zero", validate(func(c *Config) { c.Tenants[0].Destination.Address = addr("192.0.2.1:0") }), []string{
			`tenants[0].destination.address: invalid_address: "192.0.2.1:0" is not an IPv4 address with a non-zero port (not unspecified, multicast or broadcast); write it as a.b.c.d:port`,
		}},
		{"non-public without opt-in", validate(func(c *Config) {
			c.Tenants[0].Destination.Address, c.Tenants[0].Destination.AllowNonPublic = addr("10.1.2.3:4222"), false
		}), []string{
			`tenants[0].destination.address: non_public_address: "10.1.2.3:4222" is in the non-public range 10.0.0.0/8; set allow_non_public: true on this destination if the broker is meant to be reached there`,
		}},
		{"needless opt-in", validate(func(c *Config) { c.Tenants[0].Destination.Address = addr("8.8.8.8:4222") }), []string{
			`tenants[0].destination.allow_non_public: needless_non_public_opt_in: true is set for the public address "8.8.8.8:4222"; remove allow_non_public`,
		}},
		{"root cas", validate(func(c *Config) { c.Tenants[0].Destination.RootCAsPEM = "not a certificate" }), []string{
			`tenants[0].destination.root_cas_pem: invalid_root_cas: (17 bytes) does not hold only PEM CERTIFICATE blocks without headers, at least one, each parsable`,
		}},
		{"spki pin", validate(func(c *Config) { c.Tenants[0].Destination.SPKISHA256 = "abcd" }), []string{
			`tenants[0].destination.spki_sha256: invalid_spki_pin: "abcd" is not 64 lower-case hex digits (the SHA-256 of the certificate's public key)`,
		}},
		{"credential missing", match(func(cs []Credential) []Credential { return cs[:1] }), []string{
			`tenants[0]: credential_missing: has no credential; add one credential for this tenant`,
		}},
		{"credential duplicate", match(func(cs []Credential) []Credential { return append(cs, cs[0]) }), []string{
			`credentials[2].tenant: credential_duplicate: names a tenant another credential already serves; keep one credential per tenant`,
		}},
		{"credential unknown tenant", match(func(cs []Credential) []Credential { cs[0].Tenant = "initech"; return cs }), []string{
			`credentials[0].tenant: credential_unknown_tenant: names no tenant of the configuration`,
			`tenants[1]: credential_missing: has no credential; add one credential for this tenant`,
		}},
		{"credential provider", match(func(cs []Credential) []Credential { cs[1].ProviderID = "nats-us"; return cs }), []string{
			`credentials[1].provider_id: credential_provider_mismatch: differs from the tenant's provider_id`,
		}},
		{"credential destination", match(func(cs []Credential) []Credential { cs[1].Destination.ServerName = "other.test"; return cs }), []string{
			`credentials[1].destination: credential_destination_mismatch: differs from the tenant's destination; copy the tenant's destination`,
		}},
		{"credential secret", match(func(cs []Credential) []Credential { cs[1].Secret.Wipe(); return cs }), []string{
			`credentials[1].secret: credential_secret_unusable: is missing or wiped`,
		}},
		{"unreadable", load(func(_ *testing.T, es []credEntry) { es[0]["file"] = "absent.tok" }), []string{
			`credentials[0].file: unreadable: cannot be opened or read, or is not a regular file (open absent.tok: no such file or directory)`,
		}},
		{"unknown kind", load(func(_ *testing.T, es []credEntry) { es[0]["kind"] = "jwt" }), []string{
			`credentials[0].kind: unknown_kind: is not creds, nkey, user_password, token or certificate`,
		}},
		{"secret shared", load(func(t *testing.T, es []credEntry) { writeSecret(t, ".", "acme.tok", []byte("token-of-acme"), 0o644) }), []string{
			`credentials[0].file: secret_file_shared: names a secret file its group or others may access; chmod 600 the file`,
		}},
		{"secret malformed", load(func(_ *testing.T, es []credEntry) { es[1]["kind"] = "nkey" }), []string{
			`credentials[1].file: secret_malformed: names a file that does not hold a usable credential of the entry's kind (credential: malformed credential)`,
		}},
		{"secret expired", load(func(t *testing.T, es []credEntry) {
			writeSecret(t, ".", "acme.creds", credsFile(t, time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC)), 0o600)
			es[0]["kind"], es[0]["file"] = "creds", "acme.creds"
		}), []string{
			`credentials[0].file: secret_expired: names a user JWT whose expiry has passed; issue a new one (credential: jwt expired)`,
		}},
		{"client key mismatch", load(func(t *testing.T, es []credEntry) {
			writeClientCert(t, ".", "acme", certNow.Add(-time.Hour), certNow.Add(time.Hour))
			writeClientCert(t, ".", "other", certNow.Add(-time.Hour), certNow.Add(time.Hour))
			withCert(es[0], "acme")
			es[0]["client_key"] = "other.key"
		}), []string{
			`credentials[0].client_key: client_key_mismatch: names a private key that is not the client certificate's; pair the certificate with the key it was issued for (credential: private key does not match the client certificate)`,
		}},
		{"client certificate expired", load(func(t *testing.T, es []credEntry) {
			writeClientCert(t, ".", "acme", certNow.Add(-2*time.Hour), certNow.Add(-time.Hour))
			withCert(es[0], "acme")
		}), []string{
			`credentials[0].client_cert: client_cert_not_valid: names a client certificate that has expired or is not yet valid; issue a new one, or check the clock (credential: client certificate expired)`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err(t)
			if diff := cmp.Diff(tc.want, messagesOf(t, err)); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			for _, v := range violationsOrCredentialsOf(err) {
				seen[v.Rule] = true
			}
		})
	}
	for r := Rule(1); r < ruleEnd; r++ {
		if !seen[r] {
			t.Errorf("no case has a message for rule %v", r)
		}
	}
}

// violationsOrCredentialsOf returns the violations of a *ConfigError or a
// *CredentialsError.
func violationsOrCredentialsOf(err error) []Violation {
	var ce *ConfigError
	var me *CredentialsError
	switch {
	case errors.As(err, &ce):
		return ce.Violations
	case errors.As(err, &me):
		return me.Violations
	default:
		return nil
	}
}

// messagesOf returns the message of every violation of err, a
// *ConfigError or a *CredentialsError, failing the test for any other.
func messagesOf(t *testing.T, err error) []string {
	t.Helper()
	var out []string
	var ce *ConfigError
	var me *CredentialsError
	switch {
	case errors.As(err, &ce):
		for i := range ce.Violations {
			out = append(out, ce.Message(i))
		}
	case errors.As(err, &me):
		for i := range me.Violations {
			out = append(out, me.Message(i))
		}
	default:
		t.Fatalf("error %v is neither a *ConfigError nor a *CredentialsError", err)
	}
	return out
}
