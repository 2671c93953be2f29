package trigger

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/netip"
	"strconv"
	"strings"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jsontree"
	"github.com/latent-systems/latent-nats/internal/jspull"
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

// violationList collects violations up to maxViolations; details[i] says
// what list[i] found (the zero Detail: the rule's description).
type violationList struct {
	list      []Violation
	details   []Detail
	truncated bool
}

// add records one violation described by its rule alone.
func (vs *violationList) add(path string, r Rule) { vs.addDetail(path, r, Detail{}) }

// addDetail records one violation and what it found.
func (vs *violationList) addDetail(path string, r Rule, d Detail) {
	if len(vs.list) == maxViolations {
		vs.truncated = true
		return
	}
	vs.list = append(vs.list, Violation{Path: path, Rule: r})
	vs.details = append(vs.details, d)
}

// merge records the violations of from that skip does not refuse, with
// their details, and from's truncation.
func (vs *violationList) merge(from *violationList, skip func(Violation) bool) {
	for i, v := range from.list {
		if !skip(v) {
			vs.addDetail(v.Path, v.Rule, from.details[i])
		}
	}
	vs.truncated = vs.truncated || from.truncated
}

// drop removes the violations of rule r.
func (vs *violationList) drop(r Rule) {
	list, details := vs.list[:0], vs.details[:0]
	for i, v := range vs.list {
		if v.Rule != r {
			list, details = append(list, v), append(details, vs.details[i])
		}
	}
	vs.list, vs.details = list, details
}

// full reports whether no further violation can be recorded.
func (vs *violationList) full() bool { return len(vs.list) == maxViolations }

// err returns the *ConfigError, or nil when nothing was recorded.
func (vs *violationList) err() error {
	if len(vs.list) == 0 && !vs.truncated {
		return nil
	}
	return &ConfigError{Violations: vs.list, Details: vs.details, Truncated: vs.truncated}
}

// validate records every violation of c.
func (c Config) validate(vs *violationList) {
	if c.Profile != ProfileName {
		vs.addDetail("profile", RuleProfile, Detail{Got: quoted(c.Profile), Want: RuleProfile.Detail().Want})
	}
	checkRange(vs, "poll_interval_ms", c.PollIntervalMS, MinPollIntervalMS, maxPollIntervalMS, unitMS)
	checkRange(vs, "max_control_line_bytes", c.MaxControlLineBytes, minControlLineBytes, maxControlLineBytes, unitBytes)
	checkRange(vs, "max_header_bytes", c.MaxHeaderBytes, minHeaderBytes, maxHeaderBytes, unitBytes)

	if n := len(c.Tenants); n < minTenants || n > MaxTenants {
		vs.addDetail("tenants", RuleCount, rangeDetail(n, minTenants, MaxTenants, unitEntries))
	}
	tenants := make(map[string]int, len(c.Tenants)) // ID -> first index
	for i, t := range c.Tenants {
		p := jsontree.Index("tenants", i)
		if !validID(t.ID) {
			vs.addDetail(jsontree.Field(p, "id"), RuleID, idDetail(t.ID))
		} else if first, dup := tenants[t.ID]; dup {
			vs.addDetail(jsontree.Field(p, "id"), RuleDuplicateID, Detail{
				Got: quoted(t.ID), Want: "is already the id of " + jsontree.Index("tenants", first), Fix: "give each tenant its own id"})
		} else {
			tenants[t.ID] = i
		}
		if !validID(t.ProviderID) {
			vs.addDetail(jsontree.Field(p, "provider_id"), RuleID, idDetail(t.ProviderID))
		}
		t.Destination.validate(vs, jsontree.Field(p, "destination"))
	}

	if n := len(c.Bindings); n < minBindings || n > MaxBindings {
		vs.addDetail("bindings", RuleCount, rangeDetail(n, minBindings, MaxBindings, unitEntries))
	}
	used := make([]bool, len(c.Tenants))
	ids := make(map[string]int, len(c.Bindings))             // ID -> first index
	pairs := make(map[[2]string]int, len(c.Bindings))        // stream/consumer -> first index
	filters := make(map[string]filterOwner, len(c.Bindings)) // filter subject -> first binding
	for i, b := range c.Bindings {
		p := jsontree.Index("bindings", i)
		if !validID(b.ID) {
			vs.addDetail(jsontree.Field(p, "id"), RuleID, idDetail(b.ID))
		} else if first, dup := ids[b.ID]; dup {
			vs.addDetail(jsontree.Field(p, "id"), RuleDuplicateID, Detail{
				Got: quoted(b.ID), Want: "is already the id of " + jsontree.Index("bindings", first), Fix: "give each binding its own id"})
		} else {
			ids[b.ID] = i
		}
		if !validID(b.Tenant) {
			vs.addDetail(jsontree.Field(p, "tenant"), RuleID, idDetail(b.Tenant))
		} else if ti, ok := tenants[b.Tenant]; !ok {
			vs.addDetail(jsontree.Field(p, "tenant"), RuleUnknownTenant, Detail{
				Got: quoted(b.Tenant), Want: "is not the id of a tenant; allowed: " + tenantIDs(c.Tenants, tenants)})
		} else {
			used[ti] = true
		}
		for _, n := range [...]struct{ key, val string }{
			{"principal", b.Principal}, {"service", b.Service},
			{"contract", b.Contract}, {"function", b.Function},
		} {
			if !validName(n.val) {
				vs.addDetail(jsontree.Field(p, n.key), RuleName, lengthDetail(n.val, MaxTargetNameLen, nameWant()))
			}
		}
		if b.Route != "" && !validName(b.Route) {
			vs.addDetail(jsontree.Field(p, "route"), RuleName, lengthDetail(b.Route, MaxTargetNameLen, nameWant()))
		}
		streamOK, consumerOK := validAssetName(b.Stream), validAssetName(b.Consumer)
		if !streamOK {
			vs.addDetail(jsontree.Field(p, "stream"), RuleAssetName, assetNameDetail(b.Stream))
		}
		if !consumerOK {
			vs.addDetail(jsontree.Field(p, "consumer"), RuleAssetName, assetNameDetail(b.Consumer))
		}
		if pair := [2]string{b.Stream, b.Consumer}; streamOK && consumerOK {
			if first, dup := pairs[pair]; dup {
				vs.addDetail(jsontree.Field(p, "consumer"), RuleDuplicateConsumer, Detail{
					Got:  quoted(b.Consumer),
					Want: "on stream " + quoted(b.Stream) + " is already the consumer of " + jsontree.Index("bindings", first),
					Fix:  "give each binding its own durable consumer"})
			} else {
				pairs[pair] = i
			}
		}
		if r := subjectRule(b.FilterSubject); r != 0 {
			vs.addDetail(jsontree.Field(p, "filter_subject"), r, subjectDetail(r, b.FilterSubject))
		} else if owner, seen := filters[b.FilterSubject]; seen && owner.tenant != b.Tenant {
			vs.addDetail(jsontree.Field(p, "filter_subject"), RuleSharedFilter, Detail{
				Got:  quoted(b.FilterSubject),
				Want: "is already the filter subject of " + jsontree.Index("bindings", owner.binding) + " of tenant " + quoted(owner.tenant),
				Fix:  "give each tenant its own subjects"})
		} else if !seen {
			filters[b.FilterSubject] = filterOwner{tenant: b.Tenant, binding: i}
		}
		checkRange(vs, jsontree.Field(p, "max_payload_bytes"), b.MaxPayloadBytes, minPayloadBytes, MaxPayloadBytes, unitBytes)
		timeoutOK := checkRange(vs, jsontree.Field(p, "operation_timeout_ms"), b.OperationTimeoutMS, minOperationTimeoutMS, maxOperationTimeoutMS, unitMS)
		if checkRange(vs, jsontree.Field(p, "root_budget_ms"), b.RootBudgetMS, minRootBudgetMS, maxOperationTimeoutMS, unitMS) &&
			timeoutOK && b.RootBudgetMS > b.OperationTimeoutMS {
			vs.addDetail(jsontree.Field(p, "root_budget_ms"), RuleBudgetOverTimeout, Detail{
				Got:  strconv.Itoa(b.RootBudgetMS),
				Want: "is above the binding's operation_timeout_ms " + strconv.Itoa(b.OperationTimeoutMS) + " (ms)",
				Fix:  "lower root_budget_ms to at most " + strconv.Itoa(b.OperationTimeoutMS) + " or raise operation_timeout_ms"})
		}
		checkRange(vs, jsontree.Field(p, "max_deliver"), b.MaxDeliver, minMaxDeliver, MaxMaxDeliver, "")
		if checkRange(vs, jsontree.Field(p, "ack_wait_ms"), b.AckWaitMS, minOperationTimeoutMS+AckWaitMarginMS, maxAckWaitMS, unitMS) &&
			timeoutOK && b.AckWaitMS < b.OperationTimeoutMS+AckWaitMarginMS {
			least := strconv.Itoa(b.OperationTimeoutMS + AckWaitMarginMS)
			vs.addDetail(jsontree.Field(p, "ack_wait_ms"), RuleAckWaitTooShort, Detail{
				Got: strconv.Itoa(b.AckWaitMS),
				Want: "is below the minimum " + least + " (ms): the binding's operation_timeout_ms " +
					strconv.Itoa(b.OperationTimeoutMS) + " plus " + strconv.Itoa(AckWaitMarginMS),
				Fix: "raise ack_wait_ms to at least " + least + " or lower operation_timeout_ms"})
		}
		checkRange(vs, jsontree.Field(p, "nak_delay_ms"), b.NakDelayMS, MinNakDelayMS, maxNakDelayMS, unitMS)
	}
	for i, u := range used {
		if !u && validID(c.Tenants[i].ID) && tenants[c.Tenants[i].ID] == i {
			vs.addDetail(jsontree.Index("tenants", i), RuleUnusedTenant, Detail{
				Got: quoted(c.Tenants[i].ID), Want: "is named by no binding", Fix: "remove the tenant or bind it"})
		}
	}
	if vs.full() {
		vs.truncated = true
		return
	}
	if n := len(c.encode()); n > MaxConfigBytes {
		vs.addDetail("", RuleTooLarge, tooLargeDetail(n))
	}
}

// tooLargeDetail describes an encoding of n bytes over MaxConfigBytes.
func tooLargeDetail(n int) Detail {
	d := rangeDetail(n, 0, MaxConfigBytes, unitBytes)
	d.Fix = RuleTooLarge.Detail().Fix
	return d
}

// filterOwner is the first binding of a filter subject and its tenant.
type filterOwner struct {
	tenant  string
	binding int
}

// Units of the numbers a range Detail names.
const (
	unitMS      = "ms"
	unitBytes   = "bytes"
	unitEntries = "entries"
)

// checkRange records RuleRange unless lo <= v <= hi, and reports whether v
// was in range.
func checkRange(vs *violationList, path string, v, lo, hi int, unit string) bool {
	if v < lo || v > hi {
		vs.addDetail(path, RuleRange, rangeDetail(v, lo, hi, unit))
		return false
	}
	return true
}

// rangeDetail says which bound v breaks: "5 is below the minimum 10 (ms)".
func rangeDetail(v, lo, hi int, unit string) Detail {
	want := "is above the maximum " + strconv.Itoa(hi)
	if v < lo {
		want = "is below the minimum " + strconv.Itoa(lo)
	}
	if unit != "" {
		want += " (" + unit + ")"
	}
	return Detail{Got: strconv.Itoa(v), Want: want}
}

// lengthDetail describes a string that breaks a length or character rule:
// against maxLen when it is too long (quoted then names its length), else
// want.
func lengthDetail(s string, maxLen int, want string) Detail {
	if len(s) > maxLen {
		return Detail{Got: quoted(s), Want: "is above the maximum " + strconv.Itoa(maxLen) + " (bytes)"}
	}
	return Detail{Got: quoted(s), Want: want}
}

// idDetail describes an invalid ID.
func idDetail(s string) Detail { return lengthDetail(s, maxIDLen, idWant()) }

// assetNameDetail describes an invalid stream or consumer name, with what
// to do for a name with a dot.
func assetNameDetail(s string) Detail {
	d := lengthDetail(s, maxAssetNameLen, assetNameWant())
	if strings.Contains(s, ".") && len(s) <= maxAssetNameLen {
		d.Fix = "a dot separates subject tokens: use '_' or '-' instead"
	}
	return d
}

// subjectDetail describes a filter subject that breaks r.
func subjectDetail(r Rule, s string) Detail {
	if r == RuleWildcard {
		return Detail{Got: quoted(s), Want: wildcardWant, Fix: wildcardFix}
	}
	return lengthDetail(s, maxFilterSubjectLen, subjectWant())
}

// tenantIDs lists the valid tenant IDs, quoted, in document order.
func tenantIDs(ts []Tenant, first map[string]int) string {
	var b strings.Builder
	for i, t := range ts {
		if j, ok := first[t.ID]; !ok || j != i {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoted(t.ID))
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// validate records the violations of one destination.
func (d Destination) validate(vs *violationList, path string) {
	got := `""`
	if d.Address.IsValid() {
		got = quoted(d.Address.String())
	}
	// The address policy is conn's (CheckAddress): with the address
	// itself allowed, as the runtime dials it under the opt-in, only an
	// address never dialled fails; with nothing allowed, every non-public
	// one does, naming its range. The configuration adds that the opt-in
	// is refused on a public address.
	var ae *conn.AddressError
	nonPublic := conn.CheckAddress(d.Address, netip.Addr{})
	switch {
	case conn.CheckAddress(d.Address, d.Address.Addr()) != nil:
		vs.addDetail(jsontree.Field(path, "address"), RuleAddress, Detail{Got: got, Want: addressWant, Fix: addressFix})
	case errors.As(nonPublic, &ae) && !d.AllowNonPublic:
		vs.addDetail(jsontree.Field(path, "address"), RuleNonPublic, Detail{
			Got: got, Want: "is in the non-public range " + ae.Range.String(), Fix: nonPublicFix})
	case nonPublic == nil && d.AllowNonPublic:
		vs.addDetail(jsontree.Field(path, "allow_non_public"), RuleNeedlessOptIn, Detail{
			Got: "true", Want: "is set for the public address " + got, Fix: "remove allow_non_public"})
	}
	if !canonicalServerName(d.ServerName) {
		sd := lengthDetail(d.ServerName, maxServerNameLen, serverNameWant())
		if strings.ToLower(d.ServerName) != d.ServerName {
			sd.Fix = "write it in lower case"
		}
		vs.addDetail(jsontree.Field(path, "server_name"), RuleServerName, sd)
	}
	if _, err := parseRoots(d.RootCAsPEM); err != nil {
		vs.addDetail(jsontree.Field(path, "root_cas_pem"), RuleRootCAs, Detail{
			Got: "(" + strconv.Itoa(len(d.RootCAsPEM)) + " bytes)", Want: rootCAsWant})
	}
	if d.SPKISHA256 != "" && !validPin(d.SPKISHA256) {
		vs.addDetail(jsontree.Field(path, "spki_sha256"), RuleSPKIPin, Detail{Got: quoted(d.SPKISHA256), Want: pinWant()})
	}
}

// validID reports whether s is 1-maxIDLen bytes of A-Z a-z 0-9 . _ - :.
func validID(s string) bool {
	if s == "" || len(s) > maxIDLen {
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

// validName reports whether s is 1-MaxTargetNameLen bytes of printable ASCII
// other than space.
func validName(s string) bool {
	if s == "" || len(s) > MaxTargetNameLen {
		return false
	}
	for i := range len(s) {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// validAssetName reports whether s is a stream or durable name a binding
// may carry: jspull.ValidName, the broker's asset-name rule narrowed to
// valid UTF-8 without control characters so it can travel in a subject.
func validAssetName(s string) bool { return jspull.ValidName(s) == nil }

// subjectRule returns the rule a filter subject breaks, or 0: the rule is
// jspull.ValidFilterSubject (wire's subject rules, literal, 1 to
// maxFilterSubjectLen bytes of valid UTF-8 without space or control
// characters); a subject whose fault is '*' or '>' breaks RuleWildcard.
func subjectRule(s string) Rule {
	switch err := jspull.ValidFilterSubject(s); {
	case err == nil:
		return 0
	case errors.Is(err, jspull.ErrWildcardSubject):
		return RuleWildcard
	default:
		return RuleSubject
	}
}

// canonicalServerName reports whether s is a server name conn accepts
// (conn.ValidServerName: a DNS name of at most maxServerNameLen bytes, not
// an IP literal) written in lower case, its one canonical spelling.
func canonicalServerName(s string) bool {
	return conn.ValidServerName(s) == nil && strings.ToLower(s) == s
}

// validPin reports whether s is a SHA-256 in lower-case hex (64 digits).
func validPin(s string) bool {
	if len(s) != hex.EncodedLen(sha256.Size) {
		return false
	}
	for i := range len(s) {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}
