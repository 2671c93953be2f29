package trigger

import (
	"bytes"
	"encoding/json"

	"github.com/latent-systems/latent-nats/internal/jsontree"
)

// The canonical encoding of a Config is exactly what encoding/json's
// Marshal writes for it: one compact JSON object without white space or a
// trailing newline, keys in the order of the struct fields, the optional
// keys (route, allow_non_public, spki_sha256) omitted when empty, strings
// escaped as Marshal escapes them (including <, > and & as \u003c, \u003e,
// \u0026), integers in plain decimal. MarshalJSON writes it, ParseConfig
// accepts only it, so a configuration that parses re-encodes to the same
// bytes, and CanonicalConfig turns any other spelling of a valid
// configuration into it.

// configJSON has Config's fields and tags without its methods.
type configJSON Config

// encode returns the canonical encoding without validating.
func (c Config) encode() []byte {
	// An absent list is written as [], never null.
	if c.Tenants == nil {
		c.Tenants = []Tenant{}
	}
	if c.Bindings == nil {
		c.Bindings = []Binding{}
	}
	// Marshal cannot fail: every field is a string, an int, a bool, a
	// netip.AddrPort or a slice of structs of those.
	b, err := json.Marshal(configJSON(c))
	if err != nil {
		return nil
	}
	return b
}

// MarshalJSON returns the canonical encoding of a valid configuration and
// the *ConfigError of Validate for an invalid one, so that only validated
// bytes are ever persisted.
func (c Config) MarshalJSON() ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c.encode(), nil
}

// ParseConfig decodes and validates a configuration in canonical encoding.
// Input over MaxConfigBytes is refused before it is read. The JSON is
// strict: unknown keys, duplicate keys, missing required keys, values of
// the wrong type, non-integer numbers, trailing data and a string with
// invalid UTF-8 or an unpaired surrogate escape (RuleUTF8) are violations,
// and so is any byte that differs from the canonical re-encoding
// (RuleNotCanonical, at the path where the first difference lies). Every
// violation found is reported in one *ConfigError.
func ParseConfig(b []byte) (Config, error) {
	c, root, vs := decodeConfig(b)
	if len(vs.list) == 0 && !vs.truncated {
		if canon := c.encode(); !bytes.Equal(b, canon) {
			vs.add(root.Locate(firstDifference(b, canon)), RuleNotCanonical)
		}
	}
	if err := vs.err(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// CanonicalConfig decodes and validates a configuration written in any
// JSON spelling (white space, key order, string escapes, optional keys with
// empty values) and returns its canonical encoding, which ParseConfig
// accepts. Everything else is as strict as ParseConfig.
func CanonicalConfig(b []byte) ([]byte, error) {
	c, _, vs := decodeConfig(b)
	vs.drop(RuleNotCanonical)
	if err := vs.err(); err != nil {
		return nil, err
	}
	return c.encode(), nil
}

// decodeConfig decodes and validates b, recording every violation except
// the final byte comparison. Validation runs even when decoding found
// violations; a validation violation at or under a path where decoding
// already failed (a missing key, a value of the wrong type) is dropped as
// a consequence of it. An array longer than its bound is one RuleCount
// violation, and only its first elements (as many as the bound) are
// decoded and validated.
func decodeConfig(b []byte) (Config, *jsontree.Node, violationList) {
	var vs violationList
	if len(b) > MaxConfigBytes {
		vs.addDetail("", RuleTooLarge, tooLargeDetail(len(b)))
		return Config{}, nil, vs
	}
	root, ok := parseTree(b, &vs)
	if !ok {
		return Config{}, nil, vs
	}
	d := &configDecoder{vs: &vs}
	d.w = jsontree.Walker{Report: d.report}
	c := d.config(root)
	if vs.full() {
		return c, root, vs
	}
	var sem violationList
	c.validate(&sem)
	vs.merge(&sem, d.covered)
	return c, root, vs
}

// firstDifference returns the offset of the first byte where a and b
// differ, or the length of the shorter.
func firstDifference(a, b []byte) int64 {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return int64(i)
		}
	}
	return int64(n)
}
