package trigger

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseConfigStrict checks the JSON-level rules: each input is the
// canonical encoding of validConfig with one edit.
func TestParseConfigStrict(t *testing.T) {
	canon := string(validConfig(t).encode())
	edit := func(old, new string) string {
		if !strings.Contains(canon, old) {
			t.Fatalf("canonical encoding lacks %q", old)
		}
		return strings.Replace(canon, old, new, 1)
	}
	d0 := func(key string) string { return "tenants[0].destination." + key }
	b0 := func(key string) string { return "bindings[0]." + key }
	for _, tc := range []struct {
		name  string
		input string
		want  []Violation
	}{
		{"canonical", canon, nil},
		{"unknown root field", edit(`{"profile"`, `{"extra":1,"profile"`), []Violation{{"extra", RuleUnknownField}}},
		{"unknown tenant field", edit(`{"id":"acme",`, `{"id":"acme","x":true,`), []Violation{{"tenants[0].x", RuleUnknownField}}},
		{"unknown destination field", edit(`"destination":{`, `"destination":{"port":1,`), []Violation{{d0("port"), RuleUnknownField}}},
		{"unknown binding field, case differs", edit(`{"id":"b0",`, `{"id":"b0","Id":"x",`), []Violation{{`bindings[0]["Id"]`, RuleUnknownField}}},
		{"unknown field with control character", edit(`{"profile"`, `{"a\nb":{"deep":[1]},"profile"`), []Violation{{`["a\nb"]`, RuleUnknownField}}},
		{"unknown field with a long key", edit(`{"profile"`, `{"`+strings.Repeat("k", 100)+`":1,"profile"`), []Violation{{`["` + strings.Repeat("k", 64) + `"]`, RuleUnknownField}}},
		{"duplicate key", edit(`{"id":"b0",`, `{"id":"b0","id":"b9",`), []Violation{{b0("id"), RuleDuplicateKey}}},
		{"duplicate root key", edit(`{"profile"`, `{"poll_interval_ms":5,"profile"`), []Violation{
			{"poll_interval_ms", RuleDuplicateKey}, {"poll_interval_ms", RuleRange}}}, // the first value is kept
		{"missing field", edit(`"max_deliver":5,`, ``), []Violation{{b0("max_deliver"), RuleMissingField}}},
		{"missing profile", edit(`"profile":"nats-jetstream-pull-v1",`, ``), []Violation{{"profile", RuleMissingField}}},
		{"missing destination", edit(canon[strings.Index(canon, `,"destination"`):strings.Index(canon, `}},{"id":"globex"`)+1], ``), []Violation{
			{"tenants[0].destination", RuleMissingField}}},
		{"string for integer", edit(`"max_deliver":5`, `"max_deliver":"5"`), []Violation{{b0("max_deliver"), RuleWrongType}}},
		{"fraction", edit(`"poll_interval_ms":100`, `"poll_interval_ms":100.0`), []Violation{{"poll_interval_ms", RuleWrongType}}},
		{"exponent", edit(`"poll_interval_ms":100`, `"poll_interval_ms":1e2`), []Violation{{"poll_interval_ms", RuleWrongType}}},
		{"null", edit(`"poll_interval_ms":100`, `"poll_interval_ms":null`), []Violation{{"poll_interval_ms", RuleWrongType}}},
		{"integer for string", edit(`"id":"b0"`, `"id":7`), []Violation{{b0("id"), RuleWrongType}}},
		{"bool for string", edit(`"route":"blue"`, `"route":true`), []Violation{{"bindings[1].route", RuleWrongType}}},
		{"string for bool", edit(`"allow_non_public":true`, `"allow_non_public":"true"`), []Violation{
			{d0("allow_non_public"), RuleWrongType}, {d0("address"), RuleNonPublic}}},
		{"object for array", canon[:strings.Index(canon, `"bindings":[`)] + `"bindings":{}}`, []Violation{
			{"bindings", RuleWrongType}, {"tenants[0]", RuleUnusedTenant}, {"tenants[1]", RuleUnusedTenant}}},
		{"array for object", edit(`"destination":{`, `"destination":[{`)[:strings.Index(canon, `},{"id":"globex"`)+1] + "]" + canon[strings.Index(canon, `},{"id":"globex"`):], []Violation{
			{"tenants[0].destination", RuleWrongType}}},
		{"top-level array", "[" + canon + "]", []Violation{{"", RuleWrongType}}},
		{"top-level null", "null", []Violation{{"", RuleWrongType}}},
		{"integer overflow", edit(`"max_deliver":5`, `"max_deliver":99999999999999999999`), []Violation{{b0("max_deliver"), RuleRange}}},
		{"negative", edit(`"max_deliver":5`, `"max_deliver":-5`), []Violation{{b0("max_deliver"), RuleRange}}},
		{"empty input", "", []Violation{{"", RuleSyntax}}},
		{"truncated", canon[:len(canon)-1], []Violation{{"", RuleSyntax}}},
		{"truncated inside a binding", canon[:strings.Index(canon, `"nak_delay_ms":500`)+16], []Violation{{"bindings[0]", RuleSyntax}}},
		{"missing comma", edit(`,"service"`, ` "service"`), []Violation{{"bindings[0]", RuleSyntax}}},
		{"trailing value", canon + "{}", []Violation{{"", RuleSyntax}}},
		{"trailing garbage", canon + "x", []Violation{{"", RuleSyntax}}},
		{"nested too deep", edit(`{"profile"`, `{"x":`+strings.Repeat("[", 20)+strings.Repeat("]", 20)+`,"profile"`), []Violation{
			{"x" + strings.Repeat("[0]", maxDepth), RuleSyntax}}},
		{"trailing newline", canon + "\n", []Violation{{"", RuleNotCanonical}}},
		{"leading space", " " + canon, []Violation{{"", RuleNotCanonical}}},
		{"space after colon", edit(`"profile":`, `"profile": `), []Violation{{"profile", RuleNotCanonical}}},
		{"indented", strings.ReplaceAll(canon, `,"`, ",\n  \""), []Violation{{"", RuleNotCanonical}}},
		{"keys reordered", edit(`"max_control_line_bytes":4096,"max_header_bytes":4096`, `"max_header_bytes":4096,"max_control_line_bytes":4096`), []Violation{
			{"", RuleNotCanonical}}},
		{"escaped letter", edit(`"service":"orders"`, `"service":"\u006frders"`), []Violation{{b0("service"), RuleNotCanonical}}},
		{"unescaped ampersand", edit(`"contract":"latent:orders/handler@1.0.0"`, `"contract":"a&b"`), []Violation{{b0("contract"), RuleNotCanonical}}},
		{"escaped ampersand", edit(`"contract":"latent:orders/handler@1.0.0"`, `"contract":"a\u0026b"`), nil},
		{"escaped slash", edit(`"contract":"latent:orders/handler@1.0.0"`, `"contract":"latent:orders\/handler@1.0.0"`), []Violation{
			{b0("contract"), RuleNotCanonical}}},
		{"invalid utf-8", edit(`"stream":"ORDERS"`, "\"stream\":\"OR\xffDERS\""), []Violation{{b0("stream"), RuleUTF8}}},
		{"minus zero", edit(`"max_deliver":5`, `"max_deliver":-0`), []Violation{{b0("max_deliver"), RuleRange}}},
		{"empty optional route", edit(`"function":"handle",`, `"function":"handle","route":"",`), []Violation{{b0("route"), RuleNotCanonical}}},
		{"empty optional pin", edit(`"allow_non_public":true}`, `"allow_non_public":true,"spki_sha256":""}`), []Violation{
			{d0("spki_sha256"), RuleNotCanonical}}},
		{"explicit false opt-in", edit(`"allow_non_public":true`, `"allow_non_public":false`), []Violation{
			{d0("allow_non_public"), RuleNotCanonical}, {d0("address"), RuleNonPublic}}},
		{"port with leading zero", edit(`"127.0.0.1:4222"`, `"127.0.0.1:04222"`), []Violation{{d0("address"), RuleNotCanonical}}},
		{"address not an address", edit(`"127.0.0.1:4222"`, `"localhost:4222"`), []Violation{{d0("address"), RuleAddress}}},
		{"address without port", edit(`"127.0.0.1:4222"`, `"127.0.0.1"`), []Violation{{d0("address"), RuleAddress}}},
		{"address ipv6", edit(`"127.0.0.1:4222"`, `"[::1]:4222"`), []Violation{{d0("address"), RuleAddress}}},
		{"missing tenants", edit(canon[strings.Index(canon, `"tenants"`):strings.Index(canon, `"bindings"`)], ``), []Violation{
			{"tenants", RuleMissingField},
			{b0("tenant"), RuleUnknownTenant},
			{"bindings[1].tenant", RuleUnknownTenant},
			{"bindings[2].tenant", RuleUnknownTenant},
		}},
		{"one past the size limit", strings.Repeat(" ", MaxConfigBytes+1), []Violation{{"", RuleTooLarge}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.input))
			if diff := diffViolations(tc.want, violationsOf(t, err)); diff != "" {
				t.Fatalf("ParseConfig (-want +got):\n%s", diff)
			}
			if err != nil {
				if diff := cmp.Diff(Config{}, c, cmpConfig); diff != "" {
					t.Errorf("ParseConfig returned a config with an error (-want +got):\n%s", diff)
				}
				return
			}
			b, err := c.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.input {
				t.Error("accepted input does not re-encode to the same bytes")
			}
		})
	}
}

func TestParseConfigAtSizeLimit(t *testing.T) {
	b := sizedConfig(t, MaxConfigBytes).encode()
	if len(b) != MaxConfigBytes {
		t.Fatalf("encoding is %d bytes", len(b))
	}
	if _, err := ParseConfig(b); err != nil {
		t.Fatalf("ParseConfig at MaxConfigBytes: %v", err)
	}
	over := sizedConfig(t, MaxConfigBytes+1).encode()
	_, err := ParseConfig(over)
	if diff := diffViolations([]Violation{{"", RuleTooLarge}}, violationsOf(t, err)); diff != "" {
		t.Errorf("ParseConfig at MaxConfigBytes+1 (-want +got):\n%s", diff)
	}
}

func TestCanonicalConfig(t *testing.T) {
	c := validConfig(t)
	canon := string(c.encode())
	loose := strings.NewReplacer(`,"`, ",\n  \"", `":`, `": `, `"service":"orders"`, `"service":"\u006frders"`).Replace(canon)
	loose = strings.Replace(loose, `"function": "handle",`, `"route": "", "function": "handle",`, 1) + "\n"
	for _, tc := range []struct {
		name  string
		input string
	}{
		{"canonical", canon},
		{"white space, escapes, empty optional", loose},
		{"reordered keys", strings.Replace(canon, `"profile":"nats-jetstream-pull-v1","poll_interval_ms":100`, `"poll_interval_ms":100,"profile":"nats-jetstream-pull-v1"`, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CanonicalConfig([]byte(tc.input))
			if err != nil {
				t.Fatalf("CanonicalConfig: %v", err)
			}
			if diff := cmp.Diff(canon, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("still strict", func(t *testing.T) {
		_, err := CanonicalConfig([]byte(strings.Replace(canon, `"max_deliver":5`, `"max_deliver":5,"max_deliver":6`, 1)))
		if !errors.Is(err, RuleDuplicateKey) {
			t.Errorf("CanonicalConfig error = %v, want RuleDuplicateKey", err)
		}
	})
}

// TestCanonicalForm pins the canonical encoding of a small configuration
// byte for byte.
func TestCanonicalForm(t *testing.T) {
	c := validConfig(t)
	c.Tenants = c.Tenants[:1]
	c.Bindings = c.Bindings[:2]
	c.Bindings[1].Contract = "a<b>&c"
	pemJSON := strings.ReplaceAll(c.Tenants[0].Destination.RootCAsPEM, "\n", `\n`)
	want := `{"profile":"nats-jetstream-pull-v1","poll_interval_ms":100,"max_control_line_bytes":4096,"max_header_bytes":4096,` +
		`"tenants":[{"id":"acme","provider_id":"nats-eu","destination":{"address":"127.0.0.1:4222","server_name":"nats.test",` +
		`"root_cas_pem":"` + pemJSON + `","allow_non_public":true}}],` +
		`"bindings":[{"id":"b0","tenant":"acme","principal":"svc:orders","service":"orders","contract":"latent:orders/handler@1.0.0",` +
		`"function":"handle","stream":"ORDERS","consumer":"c0","filter_subject":"acme.orders.0","max_payload_bytes":4096,` +
		`"operation_timeout_ms":2000,"root_budget_ms":1500,"max_deliver":5,"ack_wait_ms":30000,"nak_delay_ms":500},` +
		`{"id":"b1","tenant":"acme","principal":"svc:orders","service":"orders","contract":"a\u003cb\u003e\u0026c",` +
		`"function":"handle","route":"blue","stream":"ORDERS","consumer":"c1","filter_subject":"acme.orders.1","max_payload_bytes":4096,` +
		`"operation_timeout_ms":2000,"root_budget_ms":1500,"max_deliver":5,"ack_wait_ms":30000,"nak_delay_ms":500}]}`
	got, err := c.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
