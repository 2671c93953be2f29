package trigger

import (
	"errors"
	"math"
	"net/netip"
	"strconv"

	"github.com/latent-systems/latent-nats/internal/jsontree"
)

// ParseConfig decodes in two passes. jsontree.Parse reads the JSON into a
// tree that keeps every key, duplicates and order included, with the byte
// span of each value; configDecoder walks the configuration's schema over
// that tree with a jsontree.Walker, reporting unknown, duplicate and
// missing keys and wrong types with their paths instead of stopping at the
// first. The credentials file is read the same way (credentials_file.go).

// parseJSON reads exactly one JSON value from b, nested at most maxDepth
// deep (the document is at depth 0). A fault ends the parse and is one
// violation at the path of the value being read: RuleUTF8 for a string (a
// key or a value) holding invalid UTF-8 or an escaped half of a surrogate
// pair, which is refused, never rewritten; RuleSyntax for anything else
// (a syntax error, nesting past maxDepth, data after the value).
func parseJSON(b []byte, maxDepth int) (root *jsontree.Node, path string, r Rule) {
	root, err := jsontree.Parse(b, maxDepth)
	if err == nil {
		return root, "", 0
	}
	if pe, ok := errors.AsType[*jsontree.ParseError](err); ok {
		path = pe.Path
	}
	return nil, path, jsonRule(err)
}

// jsonRule maps a fault of internal/jsontree, the one vocabulary of strict
// JSON faults, onto its Rule.
func jsonRule(err error) Rule {
	switch {
	case errors.Is(err, jsontree.ErrUTF8):
		return RuleUTF8
	case errors.Is(err, jsontree.ErrUnknownKey):
		return RuleUnknownField
	case errors.Is(err, jsontree.ErrDuplicateKey):
		return RuleDuplicateKey
	case errors.Is(err, jsontree.ErrMissingKey):
		return RuleMissingField
	case errors.Is(err, jsontree.ErrWrongType):
		return RuleWrongType
	default:
		return RuleSyntax
	}
}

// parseTree reads the configuration's JSON, recording its fault.
func parseTree(b []byte, vs *violationList) (*jsontree.Node, bool) {
	root, path, r := parseJSON(b, maxDepth)
	if root == nil {
		vs.add(path, r)
		return nil, false
	}
	return root, true
}

// configDecoder maps a tree onto a Config.
type configDecoder struct {
	vs *violationList
	// w walks the schema, reporting to report.
	w jsontree.Walker
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

// report is the Walker's report: a missing key and a value of the wrong
// type fail their path.
func (d *configDecoder) report(path string, err error) {
	r := jsonRule(err)
	d.bad(path, r, r == RuleMissingField || r == RuleWrongType)
}

// bounded returns the first max elements of an array node; a longer
// array is a RuleCount violation and its further elements are not decoded.
func (d *configDecoder) bounded(path string, n *jsontree.Node, max int) []*jsontree.Node {
	elems := d.w.Array(path, n)
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

// str is a required string key.
func (d *configDecoder) str(name string, dst *string) jsontree.Want {
	return jsontree.Want{Name: name, Kind: jsontree.KindString, Set: func(_ string, n *jsontree.Node) { *dst = n.Text }}
}

// optStr is an optional string key; present and empty is not canonical.
func (d *configDecoder) optStr(name string, dst *string) jsontree.Want {
	return jsontree.Want{Name: name, Kind: jsontree.KindString, Optional: true, Set: func(path string, n *jsontree.Node) {
		*dst = n.Text
		if n.Text == "" {
			d.bad(path, RuleNotCanonical, false)
		}
	}}
}

// optBool is an optional bool key; present and false is not canonical.
func (d *configDecoder) optBool(name string, dst *bool) jsontree.Want {
	return jsontree.Want{Name: name, Kind: jsontree.KindBool, Optional: true, Set: func(path string, n *jsontree.Node) {
		*dst = n.Bool
		if !n.Bool {
			d.bad(path, RuleNotCanonical, false)
		}
	}}
}

// integer is a required integer key; a fraction or exponent is the wrong
// type, a value beyond int is out of range.
func (d *configDecoder) integer(name string, dst *int) jsontree.Want {
	return jsontree.Want{Name: name, Kind: jsontree.KindNumber, Set: func(path string, n *jsontree.Node) {
		v, err := n.Int(strconv.IntSize)
		if errors.Is(err, jsontree.ErrWrongType) {
			d.bad(path, RuleWrongType, true)
			return
		}
		if err != nil {
			// Digits and a sign only (jsonlex's number grammar without
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
	}}
}

// address is a required address and port key; a spelling netip would not
// write back is not canonical.
func (d *configDecoder) address(name string, dst *netip.AddrPort) jsontree.Want {
	return jsontree.Want{Name: name, Kind: jsontree.KindString, Set: func(path string, n *jsontree.Node) {
		ap, err := netip.ParseAddrPort(n.Text)
		if err != nil {
			d.bad(path, RuleAddress, true)
			return
		}
		*dst = ap
		if ap.String() != n.Text {
			d.bad(path, RuleNotCanonical, false)
		}
	}}
}

// config decodes the document.
func (d *configDecoder) config(n *jsontree.Node) Config {
	var c Config
	d.w.Object("", n, []jsontree.Want{
		d.str("profile", &c.Profile),
		d.integer("poll_interval_ms", &c.PollIntervalMS),
		d.integer("max_control_line_bytes", &c.MaxControlLineBytes),
		d.integer("max_header_bytes", &c.MaxHeaderBytes),
		{Name: "tenants", Set: func(path string, n *jsontree.Node) {
			for i, e := range d.bounded(path, n, MaxTenants) {
				c.Tenants = append(c.Tenants, d.tenant(jsontree.Index(path, i), e))
			}
		}},
		{Name: "bindings", Set: func(path string, n *jsontree.Node) {
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
	dst := &t.Destination
	d.w.Object(path, n, []jsontree.Want{
		d.str("id", &t.ID),
		d.str("provider_id", &t.ProviderID),
		{Name: "destination", Set: func(path string, n *jsontree.Node) {
			d.w.Object(path, n, []jsontree.Want{
				d.address("address", &dst.Address),
				d.str("server_name", &dst.ServerName),
				d.str("root_cas_pem", &dst.RootCAsPEM),
				d.optBool("allow_non_public", &dst.AllowNonPublic),
				d.optStr("spki_sha256", &dst.SPKISHA256),
			})
		}},
	})
	return t
}

// binding decodes one binding.
func (d *configDecoder) binding(path string, n *jsontree.Node) Binding {
	var b Binding
	d.w.Object(path, n, []jsontree.Want{
		d.str("id", &b.ID),
		d.str("tenant", &b.Tenant),
		d.str("principal", &b.Principal),
		d.str("service", &b.Service),
		d.str("contract", &b.Contract),
		d.str("function", &b.Function),
		d.optStr("route", &b.Route),
		d.str("stream", &b.Stream),
		d.str("consumer", &b.Consumer),
		d.str("filter_subject", &b.FilterSubject),
		d.integer("max_payload_bytes", &b.MaxPayloadBytes),
		d.integer("operation_timeout_ms", &b.OperationTimeoutMS),
		d.integer("root_budget_ms", &b.RootBudgetMS),
		d.integer("max_deliver", &b.MaxDeliver),
		d.integer("ack_wait_ms", &b.AckWaitMS),
		d.integer("nak_delay_ms", &b.NakDelayMS),
	})
	return b
}
