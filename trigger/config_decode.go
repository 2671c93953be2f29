package trigger

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/netip"
	"strconv"
	"strings"
)

// ParseConfig decodes in two passes. parseJSONTree reads the JSON into a
// tree that keeps every key, duplicates and order included, with the byte
// span of each value; configDecoder maps that tree onto Config, reporting
// unknown, duplicate and missing keys and wrong types with their paths
// instead of stopping at the first.

// jsonKind is the JSON type of a node.
type jsonKind uint8

const (
	jsonNull jsonKind = iota + 1
	jsonBool
	jsonNumber
	jsonString
	jsonArray
	jsonObject
)

// jsonNode is one JSON value and the byte span [start, end) it was read
// from; start includes the separator before the value.
type jsonNode struct {
	kind       jsonKind
	text       string // jsonString, jsonNumber
	bool       bool   // jsonBool
	elems      []*jsonNode
	members    []jsonMember
	start, end int64
}

// jsonMember is one key of an object and its value.
type jsonMember struct {
	key string
	val *jsonNode
}

// parseJSONTree reads exactly one JSON value from b. A syntax error, nesting
// past maxDepth or data after the value is one RuleSyntax violation and
// ends the parse.
func parseJSONTree(b []byte, vs *violationList) (*jsonNode, bool) {
	t := jsonTreeParser{dec: json.NewDecoder(bytes.NewReader(b)), vs: vs}
	t.dec.UseNumber()
	root, ok := t.value(0)
	if !ok {
		return nil, false
	}
	if _, err := t.dec.Token(); !errors.Is(err, io.EOF) {
		vs.add("", RuleSyntax)
		return nil, false
	}
	return root, true
}

// jsonTreeParser reads tokens into nodes. It keeps the path to the value
// being read as a stack and renders it only for a violation.
type jsonTreeParser struct {
	dec   *json.Decoder
	vs    *violationList
	stack []pathStep
}

// pathStep is one step of a path: a key, or an index when key is nil.
type pathStep struct {
	key   *string
	index int
}

// fail records a syntax violation at the current path.
func (t *jsonTreeParser) fail() (*jsonNode, bool) {
	path := ""
	for _, s := range t.stack {
		if s.key != nil {
			path = keyPath(path, *s.key)
		} else {
			path = pathIndex(path, s.index)
		}
	}
	t.vs.add(path, RuleSyntax)
	return nil, false
}

// value reads one value at depth.
func (t *jsonTreeParser) value(depth int) (*jsonNode, bool) {
	n := &jsonNode{start: t.dec.InputOffset()}
	tok, err := t.dec.Token()
	if err != nil {
		return t.fail()
	}
	switch v := tok.(type) {
	case nil:
		n.kind = jsonNull
	case bool:
		n.kind, n.bool = jsonBool, v
	case json.Number:
		n.kind, n.text = jsonNumber, string(v)
	case string:
		n.kind, n.text = jsonString, v
	case json.Delim:
		if depth == maxDepth {
			return t.fail()
		}
		switch v {
		case '[':
			n.kind = jsonArray
			for i := 0; t.dec.More(); i++ {
				t.stack = append(t.stack, pathStep{index: i})
				e, ok := t.value(depth + 1)
				if !ok {
					return nil, false
				}
				t.stack = t.stack[:len(t.stack)-1]
				n.elems = append(n.elems, e)
			}
		case '{':
			n.kind = jsonObject
			for t.dec.More() {
				k, err := t.dec.Token()
				key, isKey := k.(string)
				if err != nil || !isKey {
					return t.fail()
				}
				t.stack = append(t.stack, pathStep{key: &key})
				e, ok := t.value(depth + 1)
				if !ok {
					return nil, false
				}
				t.stack = t.stack[:len(t.stack)-1]
				n.members = append(n.members, jsonMember{key: key, val: e})
			}
		default:
			return t.fail()
		}
		if _, err := t.dec.Token(); err != nil { // the closing delimiter
			return t.fail()
		}
	}
	n.end = t.dec.InputOffset()
	return n, true
}

// keyPath joins a key read from input to a path: plain keys as ".key",
// others quoted and cut to 64 bytes as `["key"]`, so a path never carries
// control characters or unbounded input.
func keyPath(path, key string) string {
	plain := key != "" && len(key) <= 64
	for i := 0; plain && i < len(key); i++ {
		c := key[i]
		plain = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
	}
	if plain {
		return pathField(path, key)
	}
	if len(key) > 64 {
		key = key[:64]
	}
	return path + "[" + strconv.QuoteToASCII(key) + "]"
}

// locate returns the path of the deepest value whose span holds off.
func (n *jsonNode) locate(off int64, path string) string {
	if n == nil {
		return path
	}
	for _, m := range n.members {
		if off >= m.val.start && off < m.val.end {
			return m.val.locate(off, keyPath(path, m.key))
		}
	}
	for i, e := range n.elems {
		if off >= e.start && off < e.end {
			return e.locate(off, pathIndex(path, i))
		}
	}
	return path
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
func (d *configDecoder) bad(path string, r Rule, fails bool) {
	if d.vs.full() {
		d.vs.truncated = true // nothing more can be reported or covered
		return
	}
	d.vs.add(path, r)
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
	set      func(path string, n *jsonNode)
}

// object applies keys to an object node.
func (d *configDecoder) object(path string, n *jsonNode, keys []objectKey) {
	if n.kind != jsonObject {
		d.bad(path, RuleWrongType, true)
		return
	}
	seen := make([]bool, len(keys))
	for _, m := range n.members {
		j := -1
		for i, k := range keys {
			if k.name == m.key {
				j = i
				break
			}
		}
		switch {
		case j < 0:
			d.bad(keyPath(path, m.key), RuleUnknownField, false)
		case seen[j]:
			d.bad(pathField(path, m.key), RuleDuplicateKey, false)
		default:
			seen[j] = true
			keys[j].set(pathField(path, m.key), m.val)
		}
	}
	for i, k := range keys {
		if !seen[i] && !k.optional {
			d.bad(pathField(path, k.name), RuleMissingField, true)
		}
	}
}

// array returns the elements of an array node.
func (d *configDecoder) array(path string, n *jsonNode) []*jsonNode {
	if n.kind != jsonArray {
		d.bad(path, RuleWrongType, true)
		return nil
	}
	return n.elems
}

// bounded returns the first max elements of an array node; a longer
// array is a RuleCount violation and its further elements are not decoded.
func (d *configDecoder) bounded(path string, n *jsonNode, max int) []*jsonNode {
	elems := d.array(path, n)
	if len(elems) > max {
		d.bad(path, RuleCount, false)
		elems = elems[:max]
		if d.cut == nil {
			d.cut = make(map[string]bool)
		}
		d.cut[path] = true
	}
	return elems
}

// str stores a string.
func (d *configDecoder) str(dst *string) func(string, *jsonNode) {
	return func(path string, n *jsonNode) {
		if n.kind != jsonString {
			d.bad(path, RuleWrongType, true)
			return
		}
		*dst = n.text
	}
}

// optStr stores an optional string; present and empty is not canonical.
func (d *configDecoder) optStr(dst *string) func(string, *jsonNode) {
	return func(path string, n *jsonNode) {
		d.str(dst)(path, n)
		if n.kind == jsonString && n.text == "" {
			d.bad(path, RuleNotCanonical, false)
		}
	}
}

// optBool stores an optional bool; present and false is not canonical.
func (d *configDecoder) optBool(dst *bool) func(string, *jsonNode) {
	return func(path string, n *jsonNode) {
		if n.kind != jsonBool {
			d.bad(path, RuleWrongType, true)
			return
		}
		*dst = n.bool
		if !n.bool {
			d.bad(path, RuleNotCanonical, false)
		}
	}
}

// integer stores an integer; a fraction or exponent is the wrong type, a
// value beyond int is out of range.
func (d *configDecoder) integer(dst *int) func(string, *jsonNode) {
	return func(path string, n *jsonNode) {
		if n.kind != jsonNumber || strings.ContainsAny(n.text, ".eE") {
			d.bad(path, RuleWrongType, true)
			return
		}
		v, err := strconv.ParseInt(n.text, 10, strconv.IntSize)
		if err != nil {
			d.bad(path, RuleRange, true)
			return
		}
		*dst = int(v)
	}
}

// address stores an address and port; a spelling netip would not write
// back is not canonical.
func (d *configDecoder) address(dst *netip.AddrPort) func(string, *jsonNode) {
	return func(path string, n *jsonNode) {
		if n.kind != jsonString {
			d.bad(path, RuleWrongType, true)
			return
		}
		ap, err := netip.ParseAddrPort(n.text)
		if err != nil {
			d.bad(path, RuleAddress, true)
			return
		}
		*dst = ap
		if ap.String() != n.text {
			d.bad(path, RuleNotCanonical, false)
		}
	}
}

// config decodes the document.
func (d *configDecoder) config(n *jsonNode) Config {
	var c Config
	d.object("", n, []objectKey{
		{name: "profile", set: d.str(&c.Profile)},
		{name: "poll_interval_ms", set: d.integer(&c.PollIntervalMS)},
		{name: "max_control_line_bytes", set: d.integer(&c.MaxControlLineBytes)},
		{name: "max_header_bytes", set: d.integer(&c.MaxHeaderBytes)},
		{name: "tenants", set: func(path string, n *jsonNode) {
			for i, e := range d.bounded(path, n, MaxTenants) {
				c.Tenants = append(c.Tenants, d.tenant(pathIndex(path, i), e))
			}
		}},
		{name: "bindings", set: func(path string, n *jsonNode) {
			for i, e := range d.bounded(path, n, MaxBindings) {
				c.Bindings = append(c.Bindings, d.binding(pathIndex(path, i), e))
			}
		}},
	})
	return c
}

// tenant decodes one tenant.
func (d *configDecoder) tenant(path string, n *jsonNode) Tenant {
	var t Tenant
	d.object(path, n, []objectKey{
		{name: "id", set: d.str(&t.ID)},
		{name: "provider_id", set: d.str(&t.ProviderID)},
		{name: "destination", set: func(path string, n *jsonNode) {
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
func (d *configDecoder) binding(path string, n *jsonNode) Binding {
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
