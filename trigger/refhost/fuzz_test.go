package refhost_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// FuzzDecode decodes a payload against the parameter types given as one
// type text per line. Invariants: a refusal is an *ArgumentError inside
// the payload's bounds; an accepted payload re-encodes to a canonical
// payload no longer than itself, which decodes to the same values and
// re-encodes to itself.
func FuzzDecode(f *testing.F) {
	f.Add("u8\nstring", []byte(`[1,"a"]`))
	f.Add("option<option<u8>>", []byte(`[{"some":null}]`))
	f.Add("f64", []byte(`[1e5]`))
	f.Fuzz(func(t *testing.T, types string, payload []byte) {
		var params []refhost.Type
		lines := strings.Split(types, "\n")
		if types == "" {
			lines = nil // no parameters
		}
		for _, line := range lines {
			typ, err := refhost.ParseType(line)
			if err != nil {
				return
			}
			params = append(params, typ)
		}
		sig, err := refhost.NewSignature(params...)
		if err != nil {
			return
		}
		args, err := sig.Decode(payload)
		if err != nil {
			var ae *refhost.ArgumentError
			if !errors.As(err, &ae) || !errors.Is(err, refhost.ErrInvalidArguments) {
				t.Fatalf("Decode error %v is not an *ArgumentError", err)
			}
			if ae.Arg < -1 || ae.Arg >= len(params) || ae.Offset < 0 || ae.Offset > len(payload) ||
				strings.HasPrefix(ae.Rule.String(), "Rule(") {
				t.Fatalf("Decode error out of bounds: %#v", ae)
			}
			return
		}
		if len(args) != len(params) {
			t.Fatalf("Decode returned %d values for %d parameters", len(args), len(params))
		}
		canon, err := sig.Append(nil, args)
		if err != nil {
			t.Fatalf("Append(Decode(%q)): %v", payload, err)
		}
		if len(canon) > len(payload) {
			t.Fatalf("canonical %q is longer than accepted %q", canon, payload)
		}
		again, err := sig.Decode(canon)
		if err != nil {
			t.Fatalf("Decode(%q): %v", canon, err)
		}
		if diff := cmp.Diff(args, again, valueOpts()); diff != "" {
			t.Fatalf("Decode(canonical) (-first +again):\n%s", diff)
		}
		if enc, err := sig.Append(nil, again); err != nil || string(enc) != string(canon) {
			t.Fatalf("Append is not a fixed point: %q then %q (%v)", canon, enc, err)
		}
	})
}

// FuzzParseType parses a type text. Invariants: an accepted text prints
// as a text that parses to the same type and prints the same; a refusal
// is a *TypeError.
func FuzzParseType(f *testing.F) {
	f.Add("record{a: list<u8>, b: option<string>}")
	f.Add("variant{a, b(result<_, u8>)}")
	f.Fuzz(func(t *testing.T, s string) {
		typ, err := refhost.ParseType(s)
		if err != nil {
			var te *refhost.TypeError
			if !errors.As(err, &te) || !errors.Is(err, refhost.ErrInvalidType) {
				t.Fatalf("ParseType error %v is not a *TypeError", err)
			}
			return
		}
		text := typ.String()
		again, err := refhost.ParseType(text)
		if err != nil {
			t.Fatalf("ParseType(%q): %v", text, err)
		}
		if diff := cmp.Diff(typ, again); diff != "" {
			t.Fatalf("ParseType(String()) (-first +again):\n%s", diff)
		}
		if again.String() != text {
			t.Fatalf("String is not a fixed point: %q then %q", text, again.String())
		}
	})
}
