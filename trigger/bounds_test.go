package trigger

import (
	"fmt"
	"strings"
	"testing"
)

// withTenants returns a configuration of n tenants, each with one binding.
func withTenants(t testing.TB, n int) Config {
	c := validConfig(t)
	c.Tenants, c.Bindings = nil, nil
	for i := range n {
		id := fmt.Sprintf("t%d", i)
		c.Tenants = append(c.Tenants, Tenant{ID: id, ProviderID: "p", Destination: testDestination(t, uint16(5000+i), 1)})
		c.Bindings = append(c.Bindings, testBinding(id, i))
	}
	return c
}

// withBindings returns a configuration of one tenant with n bindings.
func withBindings(t testing.TB, n int) Config {
	c := validConfig(t)
	c.Tenants = c.Tenants[:1]
	c.Bindings = nil
	for i := range n {
		c.Bindings = append(c.Bindings, testBinding("acme", i))
	}
	return c
}

// TestBounds checks every bound of the profile at the limit (valid) and
// one past it (the violation at its path).
func TestBounds(t *testing.T) {
	b0 := func(key string) string { return "bindings[0]." + key }
	type tc struct {
		name string
		cfg  Config
		want []Violation
	}
	set := func(name string, edit func(*Config), want ...Violation) tc {
		return tc{name, configWith(t, edit), want}
	}
	cases := []tc{
		set("poll interval min", func(c *Config) { c.PollIntervalMS = MinPollIntervalMS }),
		set("poll interval below min", func(c *Config) { c.PollIntervalMS = MinPollIntervalMS - 1 }, Violation{"poll_interval_ms", RuleRange}),
		set("poll interval max", func(c *Config) { c.PollIntervalMS = maxPollIntervalMS }),
		set("poll interval above max", func(c *Config) { c.PollIntervalMS = maxPollIntervalMS + 1 }, Violation{"poll_interval_ms", RuleRange}),
		set("control line min", func(c *Config) { c.MaxControlLineBytes = minControlLineBytes }),
		set("control line below min", func(c *Config) { c.MaxControlLineBytes = minControlLineBytes - 1 }, Violation{"max_control_line_bytes", RuleRange}),
		set("control line max", func(c *Config) { c.MaxControlLineBytes = maxControlLineBytes }),
		set("control line above max", func(c *Config) { c.MaxControlLineBytes = maxControlLineBytes + 1 }, Violation{"max_control_line_bytes", RuleRange}),
		set("header min", func(c *Config) { c.MaxHeaderBytes = minHeaderBytes }),
		set("header below min", func(c *Config) { c.MaxHeaderBytes = minHeaderBytes - 1 }, Violation{"max_header_bytes", RuleRange}),
		set("header max", func(c *Config) { c.MaxHeaderBytes = maxHeaderBytes }),
		set("header above max", func(c *Config) { c.MaxHeaderBytes = maxHeaderBytes + 1 }, Violation{"max_header_bytes", RuleRange}),
		{"tenants min", withTenants(t, minTenants), nil},
		{"tenants below min", withTenants(t, minTenants-1), []Violation{{"tenants", RuleCount}, {"bindings", RuleCount}}},
		{"tenants max", withTenants(t, MaxTenants), nil},
		{"tenants above max", withTenants(t, MaxTenants+1), []Violation{{"tenants", RuleCount}}},
		{"bindings min", withBindings(t, minBindings), nil},
		{"bindings below min", withBindings(t, minBindings-1), []Violation{{"bindings", RuleCount}, {"tenants[0]", RuleUnusedTenant}}},
		{"bindings max", withBindings(t, MaxBindings), nil},
		{"bindings above max", withBindings(t, MaxBindings+1), []Violation{{"bindings", RuleCount}}},
		set("payload min", func(c *Config) { c.Bindings[0].MaxPayloadBytes = minPayloadBytes }),
		set("payload below min", func(c *Config) { c.Bindings[0].MaxPayloadBytes = minPayloadBytes - 1 }, Violation{b0("max_payload_bytes"), RuleRange}),
		set("payload max", func(c *Config) { c.Bindings[0].MaxPayloadBytes = MaxPayloadBytes }),
		set("payload above max", func(c *Config) { c.Bindings[0].MaxPayloadBytes = MaxPayloadBytes + 1 }, Violation{b0("max_payload_bytes"), RuleRange}),
		set("timeout min", func(c *Config) {
			c.Bindings[0].OperationTimeoutMS, c.Bindings[0].RootBudgetMS = minOperationTimeoutMS, minOperationTimeoutMS
		}),
		set("timeout below min", func(c *Config) {
			c.Bindings[0].OperationTimeoutMS, c.Bindings[0].RootBudgetMS = minOperationTimeoutMS-1, 50
		}, Violation{b0("operation_timeout_ms"), RuleRange}),
		set("timeout max", func(c *Config) {
			c.Bindings[0].OperationTimeoutMS, c.Bindings[0].AckWaitMS = maxOperationTimeoutMS, maxOperationTimeoutMS+AckWaitMarginMS
		}),
		set("timeout above max", func(c *Config) { c.Bindings[0].OperationTimeoutMS = maxOperationTimeoutMS + 1 }, Violation{b0("operation_timeout_ms"), RuleRange}),
		set("root budget min", func(c *Config) { c.Bindings[0].RootBudgetMS = minRootBudgetMS }),
		set("root budget zero", func(c *Config) { c.Bindings[0].RootBudgetMS = minRootBudgetMS - 1 }, Violation{b0("root_budget_ms"), RuleRange}),
		set("root budget equals timeout", func(c *Config) { c.Bindings[0].RootBudgetMS = c.Bindings[0].OperationTimeoutMS }),
		set("root budget over timeout", func(c *Config) { c.Bindings[0].RootBudgetMS = c.Bindings[0].OperationTimeoutMS + 1 }, Violation{b0("root_budget_ms"), RuleBudgetOverTimeout}),
		set("max deliver min", func(c *Config) { c.Bindings[0].MaxDeliver = minMaxDeliver }),
		set("max deliver below min", func(c *Config) { c.Bindings[0].MaxDeliver = minMaxDeliver - 1 }, Violation{b0("max_deliver"), RuleRange}),
		set("max deliver max", func(c *Config) { c.Bindings[0].MaxDeliver = MaxMaxDeliver }),
		set("max deliver above max", func(c *Config) { c.Bindings[0].MaxDeliver = MaxMaxDeliver + 1 }, Violation{b0("max_deliver"), RuleRange}),
		set("ack wait timeout plus margin", func(c *Config) { c.Bindings[0].AckWaitMS = c.Bindings[0].OperationTimeoutMS + AckWaitMarginMS }),
		set("ack wait below timeout plus margin", func(c *Config) {
			c.Bindings[0].AckWaitMS = c.Bindings[0].OperationTimeoutMS + AckWaitMarginMS - 1
		}, Violation{b0("ack_wait_ms"), RuleAckWaitTooShort}),
		set("ack wait least of all", func(c *Config) {
			c.Bindings[0].OperationTimeoutMS, c.Bindings[0].RootBudgetMS = minOperationTimeoutMS, minOperationTimeoutMS
			c.Bindings[0].AckWaitMS = minOperationTimeoutMS + AckWaitMarginMS
		}),
		set("ack wait below least of all", func(c *Config) {
			c.Bindings[0].OperationTimeoutMS, c.Bindings[0].RootBudgetMS = minOperationTimeoutMS, minOperationTimeoutMS
			c.Bindings[0].AckWaitMS = minOperationTimeoutMS + AckWaitMarginMS - 1
		}, Violation{b0("ack_wait_ms"), RuleRange}),
		set("ack wait max", func(c *Config) { c.Bindings[0].AckWaitMS = maxAckWaitMS }),
		set("ack wait above max", func(c *Config) { c.Bindings[0].AckWaitMS = maxAckWaitMS + 1 }, Violation{b0("ack_wait_ms"), RuleRange}),
		set("nak delay min", func(c *Config) { c.Bindings[0].NakDelayMS = MinNakDelayMS }),
		set("nak delay below min", func(c *Config) { c.Bindings[0].NakDelayMS = MinNakDelayMS - 1 }, Violation{b0("nak_delay_ms"), RuleRange}),
		set("nak delay max", func(c *Config) { c.Bindings[0].NakDelayMS = maxNakDelayMS }),
		set("nak delay above max", func(c *Config) { c.Bindings[0].NakDelayMS = maxNakDelayMS + 1 }, Violation{b0("nak_delay_ms"), RuleRange}),
		set("binding id max", func(c *Config) { c.Bindings[0].ID = strings.Repeat("i", maxIDLen) }),
		set("binding id too long", func(c *Config) { c.Bindings[0].ID = strings.Repeat("i", maxIDLen+1) }, Violation{b0("id"), RuleID}),
		set("tenant id max", func(c *Config) {
			c.Tenants[1].ID = strings.Repeat("t", maxIDLen)
			c.Bindings[2].Tenant = c.Tenants[1].ID
		}),
		set("tenant id too long", func(c *Config) {
			c.Tenants[1].ID = strings.Repeat("t", maxIDLen+1)
			c.Bindings[2].Tenant = c.Tenants[1].ID
		}, Violation{"tenants[1].id", RuleID}, Violation{"bindings[2].tenant", RuleID}),
		set("provider id max", func(c *Config) { c.Tenants[0].ProviderID = strings.Repeat("p", maxIDLen) }),
		set("provider id too long", func(c *Config) { c.Tenants[0].ProviderID = strings.Repeat("p", maxIDLen+1) }, Violation{"tenants[0].provider_id", RuleID}),
		set("name max", func(c *Config) { c.Bindings[0].Principal = strings.Repeat("n", MaxTargetNameLen) }),
		set("name too long", func(c *Config) { c.Bindings[0].Principal = strings.Repeat("n", MaxTargetNameLen+1) }, Violation{b0("principal"), RuleName}),
		set("route max", func(c *Config) { c.Bindings[0].Route = strings.Repeat("r", MaxTargetNameLen) }),
		set("route too long", func(c *Config) { c.Bindings[0].Route = strings.Repeat("r", MaxTargetNameLen+1) }, Violation{b0("route"), RuleName}),
		set("stream max", func(c *Config) { c.Bindings[0].Stream = strings.Repeat("S", maxAssetNameLen) }),
		set("stream too long", func(c *Config) { c.Bindings[0].Stream = strings.Repeat("S", maxAssetNameLen+1) }, Violation{b0("stream"), RuleAssetName}),
		set("consumer max", func(c *Config) { c.Bindings[0].Consumer = strings.Repeat("C", maxAssetNameLen) }),
		set("consumer too long", func(c *Config) { c.Bindings[0].Consumer = strings.Repeat("C", maxAssetNameLen+1) }, Violation{b0("consumer"), RuleAssetName}),
		set("subject max", func(c *Config) { c.Bindings[0].FilterSubject = "a." + strings.Repeat("s", maxFilterSubjectLen-2) }),
		set("subject too long", func(c *Config) { c.Bindings[0].FilterSubject = "a." + strings.Repeat("s", maxFilterSubjectLen-1) }, Violation{b0("filter_subject"), RuleSubject}),
		set("server name max", func(c *Config) { c.Tenants[0].Destination.ServerName = longName(maxServerNameLen) }),
		set("server name too long", func(c *Config) { c.Tenants[0].Destination.ServerName = longName(maxServerNameLen + 1) }, Violation{"tenants[0].destination.server_name", RuleServerName}),
		set("server name label max", func(c *Config) { c.Tenants[0].Destination.ServerName = strings.Repeat("l", 63) + ".test" }),
		set("server name label too long", func(c *Config) { c.Tenants[0].Destination.ServerName = strings.Repeat("l", 64) + ".test" }, Violation{"tenants[0].destination.server_name", RuleServerName}),
		{"encoding max", sizedConfig(t, MaxConfigBytes), nil},
		{"encoding too large", sizedConfig(t, MaxConfigBytes+1), []Violation{{"", RuleTooLarge}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := diffViolations(tc.want, violationsOf(t, tc.cfg.Validate())); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
			_, err := ParseConfig(tc.cfg.encode())
			if diff := diffViolations(tc.want, violationsOf(t, err)); diff != "" {
				t.Errorf("ParseConfig (-want +got):\n%s", diff)
			}
		})
	}
}

// longName returns a valid-looking DNS name of exactly n bytes.
func longName(n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strings.Repeat("a", min(63, n-b.Len())))
	}
	s := b.String()
	if s[len(s)-1] == '.' || len(s) != n {
		panic("longName: bad length")
	}
	return s
}

// sizedConfig returns a configuration whose canonical encoding is exactly
// n bytes (n near MaxConfigBytes), otherwise valid.
func sizedConfig(t testing.TB, n int) Config {
	t.Helper()
	c := withBindings(t, MaxBindings)
	for i := range c.Bindings {
		b := &c.Bindings[i]
		b.ID = fmt.Sprintf("%0*d", maxIDLen, i)
		b.Principal = strings.Repeat("p", MaxTargetNameLen)
		b.Service = strings.Repeat("s", MaxTargetNameLen)
		b.Contract = strings.Repeat("c", MaxTargetNameLen)
		b.Function = strings.Repeat("f", MaxTargetNameLen)
		b.Route = strings.Repeat("r", MaxTargetNameLen)
		b.Stream = fmt.Sprintf("%0*d", maxAssetNameLen, i)
		b.Consumer = fmt.Sprintf("%0*d", maxAssetNameLen, i)
		b.FilterSubject = fmt.Sprintf("s.%0*d", maxFilterSubjectLen-2, i)
	}
	excess := len(c.encode()) - n
	if excess < 0 {
		t.Fatalf("sizedConfig: cannot reach %d bytes", n)
	}
	for i := range c.Bindings {
		for _, f := range []*string{&c.Bindings[i].Route, &c.Bindings[i].Principal} {
			cut := min(excess, MaxTargetNameLen-1)
			*f = (*f)[cut:]
			excess -= cut
		}
	}
	if got := len(c.encode()); got != n {
		t.Fatalf("sizedConfig: %d bytes, want %d", got, n)
	}
	return c
}
