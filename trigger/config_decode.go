package trigger

import (
	"errors"
	"math"
	"net/netip"
	"strconv"
	"strings"

	"github.com/latent-systems/latent-nats/internal/jsonlex"
	"github.com/latent-systems/latent-nats/internal/jsontree"
)

// ParseConfig decodes in two passes. jsontree.Parse reads the JSON into a
// tree that keeps every key, duplicates and order included, with the byte
// span of each value; configDecoder maps that tree onto Config, reporting
// unknown, duplicate and missing keys and wrong types with their paths
// instead of stopping at the first.

// parseTree reads exactly one JSON value from b. A syntax error, nesting
// past maxDepth or data after the value is one RuleSyntax violation, at
// the path of the value being read, and ends the parse. A string (a key
// or a value) holding invalid UTF-8 or an escaped half of a surrogate pair
// is one RuleUTF8 violation at the path of the value that holds it, and
// ends the parse too: encoding/json, under jsontree, would decode each
// such fault to U+FFFD, and a configuration is refused, never rewritten.
func parseTree(b []byte, vs *violationList) (*jsontree.Node, bool) {
	root, err := jsontree.Parse(b, maxDepth)
	if err != nil {
		path := ""
		if pe, ok := errors.AsType[*jsontree.ParseError](err); ok {
			path = pe.Path
		}
		vs.add(path, RuleSyntax)
		return nil, false
	}
	// jsonlex holds the project's one UTF-8 policy for JSON strings; it
	// admits everything jsontree admitted but such faults.
	if end, err := jsonlex.Skip(b, 0, 0, maxDepth); err != nil {
		r := RuleSyntax
		if errors.Is(err, jsonlex.ErrUTF8) {
			r = RuleUTF8
		}
		vs.add(root.Locate(int64(end)), r)
		return nil, false
	}
	return root, true
}

// configDecoder maps a tree onto a Config.
type configDecoder struct {
	vs *violationList
	// failed holds the paths where decoding failed; validation
	// violations at or under them are consequences and are dropped.
	failed map[string]bool
	// cut records which arrays were cut to their bound: tenant references
	// into a cut tenant list, or from a cut binding list, prove nothing.
	cut map[string]bool
}

// bad records a violation; fails marks the path as failed.
func (d *configDecoder) bad(path string, r Rule, fails bool) { d.badDetail(path, r, Detail{}, fails) }

// badDetail records a violation and what it found; fails marks the path
// as failed.
func (d *configDecoder) badDetail(path string, r Rule, detail Detail, fails bool) {
	if d.vs.full() {
		d.vs.truncated = true // nothing more can be reported or covered
		return
	}
	d.vs.addDetail(path, r, detail)
	if fails {
		if d.failed == nil {
			d.failed = make(map[string]bool)
		}
		d.failed[path] = true
	}
}

// covered reports whether a validation violation is a consequence of a
// decoding failure: at or under a failed path, or a tenant reference
// judged against a list that was cut.
func (d *configDecoder) covered(v Violation) bool {
	if v.Rule == RuleUnknownTenant && d.cut["tenants"] || v.Rule == RuleUnusedTenant && d.cut["bindings"] {
		return true
	}
	return d.coveredPath(v.Path)
}

// coveredPath reports whether p is at or under a failed path.
func (d *configDecoder) coveredPath(p string) bool {
	if d.failed[p] || d.failed[""] {
		return true
	}
	for i := 1; i < len(p); i++ {
		if (p[i] == '.' || p[i] == '[') && d.failed[p[:i]] {
			return true
		}
	}
	return false
}

// objectKey describes one key of an object: whether it may be absent, and
// how its value is stored.
type objectKey struct {
	name     string
	optional bool
	set      func(path string, n *jsontree.Node)
}

// object applies keys to an object node.
func (d *configDecoder) object(path string, n *jsontree.Node, keys []objectKey) {
	if n.Kind != jsontree.KindObject {
		d.bad(path, RuleWrongType, true)
		return
	}
	seen := make([]bool, len(keys))
	for _, m := range n.Members {
		j := -1
		for i, k := range keys {
			if k.name == m.Key {
				j = i
				break
			}
		}
		switch {
		case j < 0:
			d.bad(jsontree.Key(path, m.Key), RuleUnknownField, false)
		case seen[j]:
			d.bad(jsontree.Field(path, m.Key), RuleDuplicateKey, false)
		default:
			seen[j] = true
			keys[j].set(jsontree.Field(path, m.Key), m.Value)
		}
	}
	for i, k := range keys {
		if !seen[i] && !k.optional {
			d.bad(jsontree.Field(path, k.name), RuleMissingField, true)
		}
	}
}

// array returns the elements of an array node.
func (d *configDecoder) array(path string, n *jsontree.Node) []*jsontree.Node {
	if n.Kind != jsontree.KindArray {
		d.bad(path, RuleWrongType, true)
		return nil
	}
	return n.Elems
}

// bounded returns the first max elements of an array node; a longer
// array is a RuleCount violation and its further elements are not decoded.
func (d *configDecoder) bounded(path string, n *jsontree.Node, max int) []*jsontree.Node {
	elems := d.array(path, n)
	if len(elems) > max {
		d.badDetail(path, RuleCount, rangeDetail(len(elems), 0, max, unitEntries), false)
		elems = elems[:max]
		if d.cut == nil {
			d.cut = make(map[string]bool)
		}
		d.cut[path] = true
	}
	return elems
}

// str stores a string.
func (d *configDecoder) str(dst *string) func(string, *jsontree.Node) {
	return func(path string, n *jsontree.Node) {
		if n.Kind != jsontree.KindString {
			d.bad(path, RuleWrongType, true)
			return
		}
		*dst = n.Text
	}
}

// optStr stores an optional string; present and empty is not canonical.
func (d *configDecoder) optStr(dst *string) func(string, *jsontree.Node) {
	return func(path string, n *jsontree.Node) {
		d.str(dst)(path, n)
		if n.Kind == jsontree.KindString && n.Text == "" {
			d.bad(path, RuleNotCanonical, false)
		}
	}
}

// optBool stores an optional bool; present and false is not canonical.
func (d *configDecoder) optBool(dst *bool) func(string, *jsontree.Node) {
	return func(path string, n *jsontree.Node) {
		if n.Kind != jsontree.KindBool {
			d.bad(path, RuleWrongType, true)
			return
		}
		*dst = n.Bool
		if !n.Bool {
			d.bad(path, RuleNotCanonical, false)
		}
	}
}

// integer stores an integer; a fraction or exponent is the wrong type, a
// value beyond int is out of range.
func (d *configDecoder) integer(dst *int) func(string, *jsontree.Node) {
	return func(path string, n *jsontree.Node) {
		if n.Kind != jsontree.KindNumber || strings.ContainsAny(n.Text, ".eE") {
			d.bad(path, RuleWrongType, true)
			return
		}
		v, err := strconv.ParseInt(n.Text, 10, strconv.IntSize)
		if err != nil {
			// Digits and a sign only (jsontree's number grammar without
			// fraction or exponent): shown as given, cut like a string.
			got := n.Text
			if len(got) > maxQuotedBytes {
				got = got[:maxQuotedBytes] + "... (" + strconv.Itoa(len(n.Text)) + " digits)"
			}
			d.badDetail(path, RuleRange, Detail{
				Got:  got,
				Want: "is beyond the integers a field takes (" + strconv.Itoa(math.MinInt) + " to " + strconv.Itoa(math.MaxInt) + "); see the configuration reference for its bounds",
			}, true)
			return
		}
		*dst = int(v)
	}
}

// address stores an address and port; a spelling netip would not write
// back is not canonical.
func (d *configDecoder) address(dst *netip.AddrPort) func(string, *jsontree.Node) {
	return func(path string, n *jsontree.Node) {
		if n.Kind != jsontree.KindString {
			d.bad(path, RuleWrongType, true)
			return
		}
		ap, err := netip.ParseAddrPort(n.Text)
		if err != nil {
			d.bad(path, RuleAddress, true)
			return
		}
		*dst = ap
		if ap.String() != n.Text {
			d.bad(path, RuleNotCanonical, false)
		}
	}
}

// config decodes the document.
func (d *configDecoder) config(n *jsontree.Node) Config {
	var c Config
	d.object("", n, []objectKey{
		{name: "profile", set: d.str(&c.Profile)},
		{name: "poll_interval_ms", set: d.integer(&c.PollIntervalMS)},
		{name: "max_control_line_bytes", set: d.integer(&c.MaxControlLineBytes)},
		{name: "max_header_bytes", set: d.integer(&c.MaxHeaderBytes)},
		{name: "tenants", set: func(path string, n *jsontree.Node) {
			for i, e := range d.bounded(path, n, MaxTenants) {
				c.Tenants = append(c.Tenants, d.tenant(jsontree.Index(path, i), e))
			}
		}},
		{name: "bindings", set: func(path string, n *jsontree.Node) {
			for i, e := range d.bounded(path, n, MaxBindings) {
				c.Bindings = append(c.Bindings, d.binding(jsontree.Index(path, i), e))
			}
		}},
	})
	return c
}

// tenant decodes one tenant.
func (d *configDecoder) tenant(path string, n *jsontree.Node) Tenant {
	var t Tenant
	d.object(path, n, []objectKey{
		{name: "id", set: d.str(&t.ID)},
		{name: "provider_id", set: d.str(&t.ProviderID)},
		{name: "destination", set: func(path string, n *jsontree.Node) {
			dst := &t.Destination
			d.object(path, n, []objectKey{
				{name: "address", set: d.address(&dst.Address)},
				{name: "server_name", set: d.str(&dst.ServerName)},
				{name: "root_cas_pem", set: d.str(&dst.RootCAsPEM)},
				{name: "allow_non_public", optional: true, set: d.optBool(&dst.AllowNonPublic)},
				{name: "spki_sha256", optional: true, set: d.optStr(&dst.SPKISHA256)},
			})
		}},
	})
	return t
}

// binding decodes one binding.
func (d *configDecoder) binding(path string, n *jsontree.Node) Binding {
	var b Binding
	d.object(path, n, []objectKey{
		{name: "id", set: d.str(&b.ID)},
		{name: "tenant", set: d.str(&b.Tenant)},
		{name: "principal", set: d.str(&b.Principal)},
		{name: "service", set: d.str(&b.Service)},
		{name: "contract", set: d.str(&b.Contract)},
		{name: "function", set: d.str(&b.Function)},
		{name: "route", optional: true, set: d.optStr(&b.Route)},
		{name: "stream", set: d.str(&b.Stream)},
		{name: "consumer", set: d.str(&b.Consumer)},
		{name: "filter_subject", set: d.str(&b.FilterSubject)},
		{name: "max_payload_bytes", set: d.integer(&b.MaxPayloadBytes)},
		{name: "operation_timeout_ms", set: d.integer(&b.OperationTimeoutMS)},
		{name: "root_budget_ms", set: d.integer(&b.RootBudgetMS)},
		{name: "max_deliver", set: d.integer(&b.MaxDeliver)},
		{name: "ack_wait_ms", set: d.integer(&b.AckWaitMS)},
		{name: "nak_delay_ms", set: d.integer(&b.NakDelayMS)},
	})
	return b
}
