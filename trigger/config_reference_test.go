package trigger

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// referencePath is the operators' configuration reference.
const referencePath = "../docs/CONFIGURATION.md"

// qty is one side of a documented bound or a default: a number (bytes,
// milliseconds, a count, or nanoseconds for a duration), optionally added
// to another field's value (Ref).
type qty struct {
	Ref string
	N   int64
}

// bound is a parsed "bound" cell: "lo–hi", "at most hi", a quoted string
// (Text), or empty.
type bound struct {
	Lo, Hi *qty
	Text   string
}

// refRow is one row of a table of docs/CONFIGURATION.md, by section and
// key.
type refRow struct {
	cells map[string]string // by column header
	line  int
}

// refLimit is what one documented key must say, and the constants of
// trigger/limits.go and trigger/pools.go it states.
type refLimit struct {
	section, key string
	bound        bound
	def          *qty // the DefaultPoolLimits() column
	consts       []string
}

func n(v int64) *qty                   { return &qty{N: v} }
func dur(d time.Duration) *qty         { return &qty{N: int64(d)} }
func refTo(field string, v int64) *qty { return &qty{Ref: field, N: v} }
func rng(lo, hi *qty) bound            { return bound{Lo: lo, Hi: hi} }

// configReference is every row of the configuration reference, with the
// value of each bound taken from the constants.
func configReference() []refLimit {
	def := DefaultPoolLimits()
	var ls []refLimit
	add := func(section string, b bound, d *qty, consts []string, keys ...string) {
		for _, k := range keys {
			ls = append(ls, refLimit{section: section, key: k, bound: b, def: d, consts: consts})
		}
	}
	const top, ten, bin, pool = "Top level", "Tenants", "Bindings", "Shared pools"
	add(top, bound{Text: strconv.Quote(ProfileName)}, nil, []string{"ProfileName"}, "profile")
	add(top, rng(n(MinPollIntervalMS), n(maxPollIntervalMS)), nil,
		[]string{"MinPollIntervalMS", "maxPollIntervalMS"}, "poll_interval_ms")
	add(top, rng(n(minControlLineBytes), n(maxControlLineBytes)), nil,
		[]string{"minControlLineBytes", "maxControlLineBytes"}, "max_control_line_bytes")
	add(top, rng(n(minHeaderBytes), n(maxHeaderBytes)), nil,
		[]string{"minHeaderBytes", "maxHeaderBytes"}, "max_header_bytes")
	add(top, rng(n(minTenants), n(MaxTenants)), nil, []string{"minTenants", "MaxTenants"}, "tenants")
	add(top, rng(n(minBindings), n(MaxBindings)), nil, []string{"minBindings", "MaxBindings"}, "bindings")
	add(top, bound{Hi: n(MaxConfigBytes)}, nil, []string{"MaxConfigBytes"}, "(whole encoding)")

	add(ten, rng(n(1), n(maxIDLen)), nil, []string{"maxIDLen"}, "id", "provider_id")
	add(ten, rng(n(1), n(maxServerNameLen)), nil, []string{"maxServerNameLen"}, "destination.server_name")
	add(ten, bound{}, nil, nil, "destination.address", "destination.root_cas_pem",
		"destination.allow_non_public", "destination.spki_sha256")

	add(bin, rng(n(1), n(maxIDLen)), nil, []string{"maxIDLen"}, "id")
	add(bin, bound{}, nil, nil, "tenant")
	add(bin, rng(n(1), n(MaxTargetNameLen)), nil, []string{"MaxTargetNameLen"},
		"principal", "service", "contract", "function", "route")
	add(bin, rng(n(1), n(maxAssetNameLen)), nil, []string{"maxAssetNameLen"}, "stream", "consumer")
	add(bin, rng(n(1), n(maxFilterSubjectLen)), nil, []string{"maxFilterSubjectLen"}, "filter_subject")
	add(bin, rng(n(minPayloadBytes), n(MaxPayloadBytes)), nil,
		[]string{"minPayloadBytes", "MaxPayloadBytes"}, "max_payload_bytes")
	add(bin, rng(n(int64(minOperationTimeoutMS)), n(int64(maxOperationTimeoutMS))), nil,
		[]string{"minOperationTimeoutMS", "maxOperationTimeoutMS"}, "operation_timeout_ms")
	add(bin, rng(n(minRootBudgetMS), refTo("operation_timeout_ms", 0)), nil,
		[]string{"minRootBudgetMS"}, "root_budget_ms")
	add(bin, rng(n(minMaxDeliver), n(MaxMaxDeliver)), nil,
		[]string{"minMaxDeliver", "MaxMaxDeliver"}, "max_deliver")
	add(bin, rng(refTo("operation_timeout_ms", int64(AckWaitMarginMS)), n(int64(maxAckWaitMS))), nil,
		[]string{"AckWaitMarginMS", "maxAckWaitMS"}, "ack_wait_ms")
	add(bin, rng(n(int64(MinNakDelayMS)), n(int64(maxNakDelayMS))), nil,
		[]string{"MinNakDelayMS", "maxNakDelayMS"}, "nak_delay_ms")

	poolBytes := rng(n(1), n(maxPoolBytes))
	add(pool, poolBytes, n(def.MaxBytes), []string{"maxPoolBytes"}, "MaxBytes")
	add(pool, poolBytes, n(def.MaxMetadataBytes), []string{"maxPoolBytes"}, "MaxMetadataBytes")
	count := rng(n(1), n(maxPoolCount))
	for _, c := range []struct {
		key string
		def int
	}{
		{"MaxInstallations", def.MaxInstallations},
		{"MaxRequests", def.MaxRequests},
		{"MaxClients", def.MaxClients},
		{"MaxConnections", def.MaxConnections},
		{"MaxTenantRequests", def.MaxTenantRequests},
		{"MaxTenantConnections", def.MaxTenantConnections},
		{"MaxProviderRequests", def.MaxProviderRequests},
		{"MaxProviderConnections", def.MaxProviderConnections},
	} {
		add(pool, count, n(int64(c.def)), []string{"maxPoolCount"}, c.key)
	}
	add(pool, rng(dur(minIdleAge), dur(maxIdleAge)), dur(def.MaxIdleAge),
		[]string{"minIdleAge", "maxIdleAge"}, "MaxIdleAge")
	add(pool, rng(dur(MinDialBackoff), dur(maxDialBackoffLimit)), dur(def.DialBackoff),
		[]string{"MinDialBackoff", "maxDialBackoffLimit"}, "DialBackoff")
	add(pool, rng(refTo("DialBackoff", 0), dur(maxDialBackoffLimit)), dur(def.MaxDialBackoff),
		[]string{"maxDialBackoffLimit"}, "MaxDialBackoff")
	return ls
}

// chargeReference is the numbers of each row of the accounting charges,
// in the order the row writes them.
var chargeReference = []struct {
	key    string
	want   []int64
	consts []string
}{
	{"installation", []int64{installBaseBytes, installBindingBytes, installRootFactor},
		[]string{"installBaseBytes", "installBindingBytes", "installRootFactor"}},
	{"ingress request", []int64{requestBaseBytes, requestPayloadFactor},
		[]string{"requestBaseBytes", "requestPayloadFactor"}},
	{"physical TLS connection", []int64{connectionBytes}, []string{"connectionBytes"}},
}

// notConfigBounds are the constants of limits.go and pools.go that bound
// no configuration or pool field, and why.
var notConfigBounds = map[string]string{
	"maxViolations": "bounds the violations one ConfigError carries",
	"maxDepth":      "bounds the nesting ParseConfig decodes; a valid configuration nests four deep",
}

// TestConfigurationReference checks docs/CONFIGURATION.md against the
// constants: every row of its tables of the configuration, the pools and
// the charges states exactly the bound, default and charge the code has;
// every row is one the code knows; every JSON key of the configuration and
// every PoolLimits field has its row; an optional key says so; and every
// exported constant of trigger/limits.go and trigger/pools.go is stated
// (or listed in notConfigBounds).
func TestConfigurationReference(t *testing.T) {
	rows := readReference(t, referencePath)
	want := configReference()

	stated := map[string]bool{}
	for _, l := range want {
		t.Run(l.section+"/"+l.key, func(t *testing.T) {
			r, ok := rows[l.section][l.key]
			if !ok {
				t.Fatalf("%s: no row for %q in section %q", referencePath, l.key, l.section)
			}
			got, err := parseBound(r.cells["bound"])
			if err != nil {
				t.Fatalf("%s:%d: bound of %q: %v", referencePath, r.line, l.key, err)
			}
			if diff := cmp.Diff(l.bound, got); diff != "" {
				t.Errorf("%s:%d: bound of %q (-code +doc):\n%s", referencePath, r.line, l.key, diff)
			}
			if l.def != nil {
				d, err := parseQty(r.cells["`DefaultPoolLimits()`"])
				if err != nil {
					t.Fatalf("%s:%d: default of %q: %v", referencePath, r.line, l.key, err)
				}
				if diff := cmp.Diff(l.def, d); diff != "" {
					t.Errorf("%s:%d: default of %q (-code +doc):\n%s", referencePath, r.line, l.key, diff)
				}
			}
		})
		for _, c := range l.consts {
			stated[c] = true
		}
	}

	t.Run("charges", func(t *testing.T) {
		for _, c := range chargeReference {
			r, ok := rows["Accounting charges"][c.key]
			if !ok {
				t.Errorf("%s: no accounting charge %q", referencePath, c.key)
				continue
			}
			if diff := cmp.Diff(c.want, numbersIn(r.cells["bytes"])); diff != "" {
				t.Errorf("%s:%d: charge %q (-code +doc):\n%s", referencePath, r.line, c.key, diff)
			}
			for _, k := range c.consts {
				stated[k] = true
			}
		}
	})

	t.Run("no unknown rows", func(t *testing.T) {
		known := map[string]bool{}
		for _, l := range want {
			known[l.section+"/"+l.key] = true
		}
		for _, c := range chargeReference {
			known["Accounting charges/"+c.key] = true
		}
		for section, keys := range rows {
			if section == "The deadline of one delivery" {
				continue // phases, not keys
			}
			for key, r := range keys {
				if !known[section+"/"+key] {
					t.Errorf("%s:%d: row %q in section %q matches nothing in the code", referencePath, r.line, key, section)
				}
			}
		}
	})

	t.Run("every key and field has a row", func(t *testing.T) {
		for section, typ := range map[string]reflect.Type{
			"Top level": reflect.TypeFor[Config](),
			"Tenants":   reflect.TypeFor[Tenant](),
			"Bindings":  reflect.TypeFor[Binding](),
		} {
			for key, optional := range jsonKeys(typ, "") {
				if key == "destination" {
					continue // its keys have rows of their own
				}
				r, ok := rows[section][key]
				if !ok {
					t.Errorf("%s: JSON key %q of %v has no row in section %q", referencePath, key, typ, section)
					continue
				}
				if optional && !strings.Contains(r.cells["rule and notes"], "optional") {
					t.Errorf("%s:%d: optional key %q is not marked optional", referencePath, r.line, key)
				}
			}
		}
		for f := range reflect.TypeFor[PoolLimits]().Fields() {
			if _, ok := rows["Shared pools"][f.Name]; !ok {
				t.Errorf("%s: PoolLimits.%s has no row", referencePath, f.Name)
			}
		}
	})

	t.Run("every constant is stated", func(t *testing.T) {
		for _, file := range []string{"limits.go", "pools.go"} {
			for _, c := range fileConsts(t, file) {
				if _, ok := notConfigBounds[c]; ok {
					continue
				}
				if !stated[c] {
					t.Errorf("%s: constant %s is not stated in %s (add its row, or list it in notConfigBounds)", file, c, referencePath)
				}
			}
		}
	})
}

// readReference returns the rows of every table of the file, by the "## "
// section they are in and by the keys of their first cell: each name in
// backquotes, or the whole cell when it has none.
func readReference(t *testing.T, path string) map[string]map[string]refRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string]map[string]refRow{}
	var section string
	var header []string
	line := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line++
		text := sc.Text()
		switch {
		case strings.HasPrefix(text, "## "):
			section = strings.TrimPrefix(text, "## ")
			header = nil
		case !strings.HasPrefix(text, "|"):
			header = nil
		case header == nil:
			header = splitRow(text)
		case strings.HasPrefix(text, "|---"):
		default:
			cells := splitRow(text)
			if len(cells) != len(header) {
				t.Fatalf("%s:%d: %d cells under a header of %d", path, line, len(cells), len(header))
			}
			r := refRow{cells: map[string]string{}, line: line}
			for i, h := range header {
				r.cells[h] = cells[i]
			}
			if rows[section] == nil {
				rows[section] = map[string]refRow{}
			}
			for _, k := range rowKeys(cells[0]) {
				if _, dup := rows[section][k]; dup {
					t.Fatalf("%s:%d: %q twice in section %q", path, line, k, section)
				}
				rows[section][k] = r
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// splitRow splits a table row into its trimmed cells. No cell of the
// reference holds an escaped '|'.
func splitRow(s string) []string {
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "|"), "|")
	cells := strings.Split(s, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

var backquoted = regexp.MustCompile("`([^`]+)`")

func rowKeys(cell string) []string {
	m := backquoted.FindAllStringSubmatch(cell, -1)
	if m == nil {
		return []string{cell}
	}
	keys := make([]string, len(m))
	for i, s := range m {
		keys[i] = s[1]
	}
	return keys
}

// parseBound reads "lo–hi", "at most hi", a quoted string or nothing.
func parseBound(cell string) (bound, error) {
	cell = strings.TrimSpace(cell)
	switch {
	case cell == "":
		return bound{}, nil
	case strings.HasPrefix(cell, "`\""):
		return bound{Text: strings.Trim(cell, "`")}, nil
	case strings.HasPrefix(cell, "at most "):
		hi, err := parseQty(strings.TrimPrefix(cell, "at most "))
		return bound{Hi: hi}, err
	}
	lo, hi, ok := strings.Cut(cell, "–")
	if !ok || strings.Contains(hi, "–") {
		return bound{}, errUnreadable(cell)
	}
	l, err := parseQty(lo)
	if err != nil {
		return bound{}, err
	}
	h, err := parseQty(hi)
	return bound{Lo: l, Hi: h}, err
}

var (
	refExpr  = regexp.MustCompile(`^([A-Za-z_]+)(?: \+ ([0-9][0-9,]*))?$`)
	powExpr  = regexp.MustCompile(`^2\^([0-9]+)$`)
	unitExpr = regexp.MustCompile(`^([0-9][0-9,]*)(?: (ms|s|min|h|KiB|MiB))?$`)
)

var units = map[string]int64{
	"":    1,
	"ms":  int64(time.Millisecond),
	"s":   int64(time.Second),
	"min": int64(time.Minute),
	"h":   int64(time.Hour),
	"KiB": 1 << 10,
	"MiB": 1 << 20,
}

// parseQty reads a number with commas and an optional unit ("1,024",
// "10 ms", "256 MiB"), a power of two ("2^40"), or a field name with an
// optional addend ("`operation_timeout_ms` + 1,000").
func parseQty(s string) (*qty, error) {
	s = strings.TrimSpace(strings.ReplaceAll(s, "`", ""))
	if m := powExpr.FindStringSubmatch(s); m != nil {
		e, err := strconv.Atoi(m[1])
		if err != nil || e > 62 {
			return nil, errUnreadable(s)
		}
		return &qty{N: 1 << e}, nil
	}
	if m := unitExpr.FindStringSubmatch(s); m != nil {
		v, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
		if err != nil {
			return nil, errUnreadable(s)
		}
		return &qty{N: v * units[m[2]]}, nil
	}
	if m := refExpr.FindStringSubmatch(s); m != nil {
		q := &qty{Ref: m[1]}
		if m[2] != "" {
			v, err := strconv.ParseInt(strings.ReplaceAll(m[2], ",", ""), 10, 64)
			if err != nil {
				return nil, errUnreadable(s)
			}
			q.N = v
		}
		return q, nil
	}
	return nil, errUnreadable(s)
}

type errUnreadable string

func (e errUnreadable) Error() string { return "unreadable quantity " + strconv.Quote(string(e)) }

var numberExpr = regexp.MustCompile(`[0-9][0-9,]*`)

// numbersIn returns the numbers a cell writes, in order.
func numbersIn(cell string) []int64 {
	var ns []int64
	for _, s := range numberExpr.FindAllString(cell, -1) {
		v, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimRight(s, ","), ",", ""), 10, 64)
		if err != nil {
			return nil
		}
		ns = append(ns, v)
	}
	return ns
}

// jsonKeys returns the JSON keys of a struct type, nested structs as
// "outer.inner", each with whether it is omitted when empty.
func jsonKeys(typ reflect.Type, prefix string) map[string]bool {
	keys := map[string]bool{}
	for f := range typ.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		keys[prefix+name] = slices.Contains(strings.Split(opts, ","), "omitempty")
		if f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == typ.PkgPath() {
			for k, o := range jsonKeys(f.Type, prefix+name+".") {
				keys[k] = o
			}
		}
	}
	return keys
}

// fileConsts returns the constants declared in one file of the package.
func fileConsts(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			for _, id := range s.(*ast.ValueSpec).Names {
				names = append(names, id.Name)
			}
		}
	}
	if len(names) == 0 {
		t.Fatalf("%s: no constant", file)
	}
	return names
}
