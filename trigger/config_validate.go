package trigger

import (
	"net/netip"
	"strings"
	"unicode/utf8"

	"github.com/latent-systems/latent-nats/internal/jsontree"
)

// Validate checks every bound and rule of the profile and returns a
// *ConfigError listing all violations, or nil. It is what ParseConfig
// applies after decoding, so a Config built in Go is held to the same
// rules, including the size of its encoding.
func (c Config) Validate() error {
	var vs violationList
	c.validate(&vs)
	return vs.err()
}

// violationList collects violations up to MaxViolations.
type violationList struct {
	list      []Violation
	truncated bool
}

// add records one violation.
func (vs *violationList) add(path string, r Rule) {
	if len(vs.list) == MaxViolations {
		vs.truncated = true
		return
	}
	vs.list = append(vs.list, Violation{Path: path, Rule: r})
}

// full reports whether no further violation can be recorded.
func (vs *violationList) full() bool { return len(vs.list) == MaxViolations }

// err returns the *ConfigError, or nil when nothing was recorded.
func (vs *violationList) err() error {
	if len(vs.list) == 0 && !vs.truncated {
		return nil
	}
	return &ConfigError{Violations: vs.list, Truncated: vs.truncated}
}

// validate records every violation of c.
func (c Config) validate(vs *violationList) {
	if c.Profile != ProfileName {
		vs.add("profile", RuleProfile)
	}
	checkRange(vs, "poll_interval_ms", c.PollIntervalMS, MinPollIntervalMS, MaxPollIntervalMS)
	checkRange(vs, "max_control_line_bytes", c.MaxControlLineBytes, MinControlLineBytes, MaxControlLineBytes)
	checkRange(vs, "max_header_bytes", c.MaxHeaderBytes, MinHeaderBytes, MaxHeaderBytes)

	if n := len(c.Tenants); n < MinTenants || n > MaxTenants {
		vs.add("tenants", RuleCount)
	}
	tenants := make(map[string]int, len(c.Tenants)) // ID -> first index
	for i, t := range c.Tenants {
		p := jsontree.Index("tenants", i)
		if !validID(t.ID) {
			vs.add(jsontree.Field(p, "id"), RuleID)
		} else if _, dup := tenants[t.ID]; dup {
			vs.add(jsontree.Field(p, "id"), RuleDuplicateID)
		} else {
			tenants[t.ID] = i
		}
		if !validID(t.ProviderID) {
			vs.add(jsontree.Field(p, "provider_id"), RuleID)
		}
		t.Destination.validate(vs, jsontree.Field(p, "destination"))
	}

	if n := len(c.Bindings); n < MinBindings || n > MaxBindings {
		vs.add("bindings", RuleCount)
	}
	used := make([]bool, len(c.Tenants))
	ids := make(map[string]bool, len(c.Bindings))
	pairs := make(map[[2]string]bool, len(c.Bindings))
	filters := make(map[string]string, len(c.Bindings)) // filter subject -> tenant
	for i, b := range c.Bindings {
		p := jsontree.Index("bindings", i)
		if !validID(b.ID) {
			vs.add(jsontree.Field(p, "id"), RuleID)
		} else if ids[b.ID] {
			vs.add(jsontree.Field(p, "id"), RuleDuplicateID)
		} else {
			ids[b.ID] = true
		}
		if !validID(b.Tenant) {
			vs.add(jsontree.Field(p, "tenant"), RuleID)
		} else if ti, ok := tenants[b.Tenant]; !ok {
			vs.add(jsontree.Field(p, "tenant"), RuleUnknownTenant)
		} else {
			used[ti] = true
		}
		for _, n := range [...]struct{ key, val string }{
			{"principal", b.Principal}, {"service", b.Service},
			{"contract", b.Contract}, {"function", b.Function},
		} {
			if !validName(n.val) {
				vs.add(jsontree.Field(p, n.key), RuleName)
			}
		}
		if b.Route != "" && !validName(b.Route) {
			vs.add(jsontree.Field(p, "route"), RuleName)
		}
		streamOK, consumerOK := validAssetName(b.Stream), validAssetName(b.Consumer)
		if !streamOK {
			vs.add(jsontree.Field(p, "stream"), RuleAssetName)
		}
		if !consumerOK {
			vs.add(jsontree.Field(p, "consumer"), RuleAssetName)
		}
		if pair := [2]string{b.Stream, b.Consumer}; streamOK && consumerOK {
			if pairs[pair] {
				vs.add(jsontree.Field(p, "consumer"), RuleDuplicateConsumer)
			}
			pairs[pair] = true
		}
		if r := subjectRule(b.FilterSubject); r != 0 {
			vs.add(jsontree.Field(p, "filter_subject"), r)
		} else if owner, seen := filters[b.FilterSubject]; seen && owner != b.Tenant {
			vs.add(jsontree.Field(p, "filter_subject"), RuleSharedFilter)
		} else if !seen {
			filters[b.FilterSubject] = b.Tenant
		}
		checkRange(vs, jsontree.Field(p, "max_payload_bytes"), b.MaxPayloadBytes, MinPayloadBytes, MaxPayloadBytes)
		timeoutOK := checkRange(vs, jsontree.Field(p, "operation_timeout_ms"), b.OperationTimeoutMS, MinOperationTimeoutMS, MaxOperationTimeoutMS)
		if checkRange(vs, jsontree.Field(p, "root_budget_ms"), b.RootBudgetMS, MinRootBudgetMS, MaxOperationTimeoutMS) &&
			timeoutOK && b.RootBudgetMS > b.OperationTimeoutMS {
			vs.add(jsontree.Field(p, "root_budget_ms"), RuleBudgetOverTimeout)
		}
		checkRange(vs, jsontree.Field(p, "max_deliver"), b.MaxDeliver, MinMaxDeliver, MaxMaxDeliver)
		if checkRange(vs, jsontree.Field(p, "ack_wait_ms"), b.AckWaitMS, MinOperationTimeoutMS+AckWaitMarginMS, MaxAckWaitMS) &&
			timeoutOK && b.AckWaitMS < b.OperationTimeoutMS+AckWaitMarginMS {
			vs.add(jsontree.Field(p, "ack_wait_ms"), RuleAckWaitTooShort)
		}
		checkRange(vs, jsontree.Field(p, "nak_delay_ms"), b.NakDelayMS, MinNakDelayMS, MaxNakDelayMS)
	}
	for i, u := range used {
		if !u && validID(c.Tenants[i].ID) && tenants[c.Tenants[i].ID] == i {
			vs.add(jsontree.Index("tenants", i), RuleUnusedTenant)
		}
	}
	if vs.full() {
		vs.truncated = true
		return
	}
	if n := len(c.encode()); n > MaxConfigBytes {
		vs.add("", RuleTooLarge)
	}
}

// checkRange records RuleRange unless lo <= v <= hi, and reports whether v
// was in range.
func checkRange(vs *violationList, path string, v, lo, hi int) bool {
	if v < lo || v > hi {
		vs.add(path, RuleRange)
		return false
	}
	return true
}

// validate records the violations of one destination.
func (d Destination) validate(vs *violationList, path string) {
	addr := d.Address.Addr()
	switch {
	case !d.Address.IsValid() || !addr.Is4() || d.Address.Port() == 0,
		addr.IsUnspecified(), addr.IsMulticast(), addr == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		vs.add(jsontree.Field(path, "address"), RuleAddress)
	case !isPublic(addr) && !d.AllowNonPublic:
		vs.add(jsontree.Field(path, "address"), RuleNonPublic)
	case isPublic(addr) && d.AllowNonPublic:
		vs.add(jsontree.Field(path, "allow_non_public"), RuleNeedlessOptIn)
	}
	if !validServerName(d.ServerName) {
		vs.add(jsontree.Field(path, "server_name"), RuleServerName)
	}
	if _, err := parseRoots(d.RootCAsPEM); err != nil {
		vs.add(jsontree.Field(path, "root_cas_pem"), RuleRootCAs)
	}
	if d.SPKISHA256 != "" && !validPin(d.SPKISHA256) {
		vs.add(jsontree.Field(path, "spki_sha256"), RuleSPKIPin)
	}
}

// nonPublicPrefixes lists the IPv4 ranges that are not public: this network,
// private, shared (CGNAT), loopback, link-local, IETF protocol
// assignments, documentation, 6to4 relay, benchmarking, reserved.
func nonPublicPrefixes() [14]netip.Prefix {
	return [...]netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/8"),
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("100.64.0.0/10"),
		netip.MustParsePrefix("127.0.0.0/8"),
		netip.MustParsePrefix("169.254.0.0/16"),
		netip.MustParsePrefix("172.16.0.0/12"),
		netip.MustParsePrefix("192.0.0.0/24"),
		netip.MustParsePrefix("192.0.2.0/24"),
		netip.MustParsePrefix("192.88.99.0/24"),
		netip.MustParsePrefix("192.168.0.0/16"),
		netip.MustParsePrefix("198.18.0.0/15"),
		netip.MustParsePrefix("198.51.100.0/24"),
		netip.MustParsePrefix("203.0.113.0/24"),
		netip.MustParsePrefix("240.0.0.0/4"),
	}
}

// isPublic reports whether an IPv4 address is outside every non-public
// range.
func isPublic(a netip.Addr) bool {
	for _, p := range nonPublicPrefixes() {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// validID reports whether s is 1-MaxIDLen bytes of A-Z a-z 0-9 . _ - :.
func validID(s string) bool {
	if s == "" || len(s) > MaxIDLen {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == ':') {
			return false
		}
	}
	return true
}

// validName reports whether s is 1-MaxNameLen bytes of printable ASCII
// other than space.
func validName(s string) bool {
	if s == "" || len(s) > MaxNameLen {
		return false
	}
	for i := range len(s) {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// validAssetName reports whether the broker accepts s as a stream or
// durable name (isValidAssetName: non-empty, no space, tab, CR, LF, FF,
// '.', '*', '>', '\', '/'; at most 255 bytes), narrowed to valid UTF-8
// without control characters so it can travel in a subject.
func validAssetName(s string) bool {
	if s == "" || len(s) > MaxAssetNameLen || !utf8.ValidString(s) {
		return false
	}
	if strings.ContainsAny(s, " .*>\\/") {
		return false
	}
	return !hasControl(s)
}

// subjectRule returns the rule a filter subject breaks, or 0: it must be
// 1-MaxSubjectLen bytes of valid UTF-8 without space or control
// characters, with non-empty dot-separated tokens, and no '*' or '>'
// anywhere.
func subjectRule(s string) Rule {
	if s == "" || len(s) > MaxSubjectLen || !utf8.ValidString(s) || hasControl(s) || strings.Contains(s, " ") {
		return RuleSubject
	}
	for tok := range strings.SplitSeq(s, ".") {
		if tok == "" {
			return RuleSubject
		}
	}
	if strings.ContainsAny(s, "*>") {
		return RuleWildcard
	}
	return 0
}

// hasControl reports whether s holds a C0 or C1 control character or DEL.
func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r >= 0x7f && r < 0xa0 {
			return true
		}
	}
	return false
}

// validServerName reports whether s is a lower-case DNS name of at most
// MaxServerNameLen bytes: dot-separated labels of 1-63 bytes of a-z 0-9 and
// '-', not starting or ending with '-', and not an IP literal.
func validServerName(s string) bool {
	if s == "" || len(s) > MaxServerNameLen {
		return false
	}
	if _, err := netip.ParseAddr(s); err == nil {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := range len(label) {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// validPin reports whether s is 64 lower-case hex digits.
func validPin(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}
