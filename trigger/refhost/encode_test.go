package refhost_test

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/trigger/refhost"
)

func TestAppendValues(t *testing.T) {
	cases := []struct {
		name string
		typ  string
		v    any
		want string
	}{
		{"nil list", "list<u8>", []any(nil), "[]"},
		{"string escapes", "string", "a\"\\\x00\x1f\b\f\n\r\t/<>&\u2028", `"a\"\\\u0000\u001f\b\f\n\r\t/<>&` + "\u2028\""},
		{"char", "char", 'ß', `"ß"`},
		{"char escaped", "char", '\n', `"\n"`},
		{"record order", "record{b: u8, a: u8}", map[string]any{"a": uint8(1), "b": uint8(2)}, `{"b":2,"a":1}`},
		{"option some", "option<string>", refhost.Some("x"), `"x"`},
		{"option none", "option<string>", refhost.OptionValue{}, "null"},
		{"nested option", "option<option<option<u8>>>", refhost.Some(refhost.Some(refhost.OptionValue{})), `{"some":{"some":null}}`},
		{"variant", "variant{a, b(s8)}", refhost.VariantValue{Case: "b", Value: int8(-1)}, `{"b":-1}`},
		{"variant no payload", "variant{a, b(s8)}", refhost.VariantValue{Case: "a"}, `{"a":null}`},
		{"result err", "result<_, string>", refhost.ResultValue{Err: true, Value: "e"}, `{"err":"e"}`},
		{"result ok empty", "result<_, string>", refhost.ResultValue{}, `{"ok":null}`},
		{"enum", "enum{x, y}", "y", `"y"`},
		{"f64 zero", "f64", 0.0, "0"},
		{"f64 negative zero", "f64", math.Copysign(0, -1), "-0"},
		{"f64 third", "f64", 1.0 / 3, "0.3333333333333333"},
		{"f64 1e21", "f64", 1e21, "1e21"},
		{"f64 1e-7", "f64", 1e-7, "1e-7"},
		{"f64 -1.5e-10", "f64", -1.5e-10, "-15e-11"},
		{"f64 123456.78901234567", "f64", 123456.78901234567, "123456.78901234567"},
		{"f32 third", "f32", float32(1.0 / 3), "0.33333334"},
		{"f32 inf", "f32", float32(math.Inf(1)), `"inf"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mustSig(t, tc.typ).Append(nil, []any{tc.v})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("["+tc.want+"]", string(got)); diff != "" {
				t.Errorf("Append (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAppendRefuses(t *testing.T) {
	cases := []struct {
		name string
		typ  string
		v    any
		rule refhost.Rule
		path string
	}{
		{"nil", "u8", nil, refhost.RuleWrongType, ""},
		{"int for u8", "u8", 1, refhost.RuleWrongType, ""},
		{"int32 for s64", "s64", int32(1), refhost.RuleWrongType, ""},
		{"float64 for f32", "f32", 1.0, refhost.RuleWrongType, ""},
		{"bytes for string", "string", []byte("x"), refhost.RuleWrongType, ""},
		{"invalid utf-8", "string", "a\xff", refhost.RuleInvalidUTF8, ""},
		{"surrogate char", "char", rune(0xD800), refhost.RuleInvalidUTF8, ""},
		{"char past max", "char", rune(0x110000), refhost.RuleInvalidUTF8, ""},
		{"negative char", "char", rune(-1), refhost.RuleInvalidUTF8, ""},
		{"list element", "list<u8>", []any{uint8(1), "x"}, refhost.RuleWrongType, "[1]"},
		{"typed slice for list", "list<u8>", []uint8{1}, refhost.RuleWrongType, ""},
		{"tuple short", "tuple<u8, u8>", []any{uint8(1)}, refhost.RuleLength, ""},
		{"tuple element", "tuple<u8, bool>", []any{uint8(1), 1}, refhost.RuleWrongType, "[1]"},
		{"record missing", "record{a: u8, b: u8}", map[string]any{"a": uint8(1)}, refhost.RuleMissingField, ".b"},
		{"record extra", "record{a: u8}", map[string]any{"a": uint8(1), "z": uint8(2)}, refhost.RuleUnknownField, ""},
		{"record field type", "record{a: u8}", map[string]any{"a": "1"}, refhost.RuleWrongType, ".a"},
		{"option none with value", "option<u8>", refhost.OptionValue{Value: uint8(1)}, refhost.RuleWrongType, ""},
		{"option some nil", "option<u8>", refhost.OptionValue{Some: true}, refhost.RuleWrongType, ".some"},
		{"option pointer", "option<u8>", &refhost.OptionValue{}, refhost.RuleWrongType, ""},
		{"nested option bare", "option<option<u8>>", refhost.Some(uint8(1)), refhost.RuleWrongType, ".some"},
		{"enum unknown", "enum{a}", "b", refhost.RuleUnknownCase, ""},
		{"variant unknown", "variant{a}", refhost.VariantValue{Case: "b"}, refhost.RuleUnknownCase, ""},
		{"variant payload on empty case", "variant{a}", refhost.VariantValue{Case: "a", Value: 1}, refhost.RuleWrongType, ".a"},
		{"variant missing payload", "variant{a(u8)}", refhost.VariantValue{Case: "a"}, refhost.RuleWrongType, ".a"},
		{"result payload on empty side", "result<u8>", refhost.ResultValue{Err: true, Value: uint8(1)}, refhost.RuleWrongType, ".err"},
		{"result ok type", "result<u8>", refhost.ResultValue{Value: "x"}, refhost.RuleWrongType, ".ok"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dst := []byte("keep")
			got, err := mustSig(t, tc.typ).Append(dst, []any{tc.v})
			checkArgErr(t, &refhost.ArgumentError{Arg: 0, Path: tc.path, Offset: -1, Rule: tc.rule}, err)
			if string(got) != "keep" {
				t.Errorf("Append returned %q, want dst unchanged", got)
			}
		})
	}
}

func TestAppendArgCount(t *testing.T) {
	_, err := mustSig(t, "u8").Append(nil, []any{uint8(1), uint8(2)})
	checkArgErr(t, &refhost.ArgumentError{Arg: -1, Offset: -1, Rule: refhost.RuleArgCount}, err)
}

// TestAppendPayloadLimit checks MaxPayloadBytes at the limit and one past
// it, for one string and for many small values.
func TestAppendPayloadLimit(t *testing.T) {
	sig := mustSig(t, "string")
	at := strings.Repeat("a", refhost.MaxPayloadBytes-4) // ["…"]
	got, err := sig.Append(nil, []any{at})
	if err != nil || len(got) != refhost.MaxPayloadBytes {
		t.Fatalf("Append at the limit: %d bytes, %v", len(got), err)
	}
	_, err = sig.Append(nil, []any{at + "a"})
	checkArgErr(t, &refhost.ArgumentError{Arg: -1, Offset: -1, Rule: refhost.RuleTooLarge}, err)
	_, err = sig.Append(nil, []any{strings.Repeat("a", refhost.MaxPayloadBytes+1)})
	checkArgErr(t, &refhost.ArgumentError{Arg: 0, Offset: -1, Rule: refhost.RuleTooLarge}, err)

	escaped := strings.Repeat("\x01", refhost.MaxPayloadBytes/6) // each \u0001
	_, err = sig.Append(nil, []any{escaped})
	checkArgErr(t, &refhost.ArgumentError{Arg: 0, Offset: -1, Rule: refhost.RuleTooLarge}, err)

	list := mustSig(t, "list<u8>")
	n := (refhost.MaxPayloadBytes - 3) / 2 // [[0,0,...,0]] holds 2n+3 bytes
	vals := make([]any, n)
	for i := range vals {
		vals[i] = uint8(0)
	}
	if _, err := list.Append(nil, []any{vals}); err != nil {
		t.Errorf("Append of %d elements: %v", n, err)
	}
	vals = append(vals, uint8(0))
	_, err = list.Append(nil, []any{vals})
	checkArgErr(t, &refhost.ArgumentError{Arg: -1, Offset: -1, Rule: refhost.RuleTooLarge}, err)
}

// TestAppendAllocs checks the steady state of the encoder: appending
// scalars into a buffer with room allocates nothing.
func TestAppendAllocs(t *testing.T) {
	sig := mustSig(t, "u64", "s32", "bool", "f64", "string")
	args := []any{uint64(1 << 60), int32(-5), true, 2.5, "hello"}
	buf := make([]byte, 0, 256)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := sig.Append(buf[:0], args); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Append allocates %v times per run, want 0", allocs)
	}
}
