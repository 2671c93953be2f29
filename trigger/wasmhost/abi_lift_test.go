package wasmhost

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// le16 and le64 are v in little-endian.
func le16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// pad is n zero bytes.
func pad(n int) []byte { return make([]byte, n) }

// checkLiftErr checks that err is a *LiftError at want, matching
// ErrLiftRefused and want's rule.
func checkLiftErr(t *testing.T, want errorAt, err error) {
	t.Helper()
	var le *LiftError
	if !errors.As(err, &le) {
		t.Fatalf("error %v is not a *LiftError", err)
	}
	if diff := cmp.Diff(want, errorAt{le.Path, le.Rule}); diff != "" {
		t.Errorf("LiftError (-want +got):\n%s", diff)
	}
	if !errors.Is(err, ErrLiftRefused) || !errors.Is(err, want.Rule) {
		t.Errorf("errors.Is(%v, ErrLiftRefused / %v) = false", err, want.Rule)
	}
}

// liftCase is one liftResult call: typ "" means no result.
type liftCase struct {
	name string
	typ  refhost.Type
	none bool // no result
	flat []uint64
	mem  []byte
}

// lift runs the case.
func (tc liftCase) lift() (any, error) {
	if tc.none {
		return liftResult(tc.mem, nil, tc.flat)
	}
	return liftResult(tc.mem, &tc.typ, tc.flat)
}

// TestLiftFlat lifts results carried in one flat value, following the
// spec's lift_flat: narrow integers keep their low bits, bool is any
// nonzero value, every NaN is the canonical NaN.
func TestLiftFlat(t *testing.T) {
	cases := []struct {
		name string
		typ  string
		flat uint64
		want any
	}{
		{"bool false", "bool", 0, false},
		{"bool from nonzero", "bool", 0x100, true},
		{"u8 keeps its low bits", "u8", 0x1FF, uint8(0xFF)},
		{"s8 from its low bits", "s8", 0x80, int8(-128)},
		{"s8 ignores the rest", "s8", 0xFFFFFF7F, int8(127)},
		{"u16 keeps its low bits", "u16", 0x12345, uint16(0x2345)},
		{"s16", "s16", 0xFFFF8000, int16(-32768)},
		{"u32", "u32", math.MaxUint32, uint32(math.MaxUint32)},
		{"s32", "s32", 0x80000000, int32(math.MinInt32)},
		{"u64", "u64", math.MaxUint64, uint64(math.MaxUint64)},
		{"s64", "s64", 1 << 63, int64(math.MinInt64)},
		{"f32", "f32", uint64(math.Float32bits(-1.5)), float32(-1.5)},
		{"f32 negative zero", "f32", 0x80000000, float32(math.Copysign(0, -1))},
		{"f32 nan with payload", "f32", 0x7fa00001, math.Float32frombits(canonicalNaN32)},
		{"f32 negative nan", "f32", 0xFFC00000, math.Float32frombits(canonicalNaN32)},
		{"f64 nan with payload", "f64", 0xFFF8000000000001, math.Float64frombits(canonicalNaN64)},
		{"f64 infinity", "f64", 0x7FF0000000000000, math.Inf(1)},
		{"char", "char", 0x1F600, '😀'},
		{"char below surrogates", "char", 0xD7FF, rune(0xD7FF)},
		{"char above surrogates", "char", 0xE000, rune(0xE000)},
		{"char at the top", "char", 0x10FFFF, rune(0x10FFFF)},
		{"enum", "enum{a, b}", 1, "b"},
		{"variant without payloads", "variant{a, b}", 0, refhost.VariantValue{Case: "a"}},
		{"result of neither", "result", 1, refhost.ResultValue{Err: true}},
		{"record of one", "record{id: u32}", 7, map[string]any{"id": uint32(7)}},
		{"tuple of one", "tuple<s16>", 0xFFFF, []any{int16(-1)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			typ := mustType(t, tc.typ)
			got, err := liftResult(nil, &typ, []uint64{tc.flat})
			if err != nil {
				t.Fatalf("liftResult: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, bitsOpts()); diff != "" {
				t.Errorf("liftResult (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("enum of 257", func(t *testing.T) {
		typ := enumOf(257)
		got, err := liftResult(nil, &typ, []uint64{256})
		if err != nil {
			t.Fatalf("liftResult: %v", err)
		}
		if diff := cmp.Diff("c256", got); diff != "" {
			t.Errorf("liftResult (-want +got):\n%s", diff)
		}
	})
	t.Run("no result", func(t *testing.T) {
		got, err := liftResult(nil, nil, nil)
		if err != nil || got != nil {
			t.Errorf("liftResult = %v, %v; want nil, nil", got, err)
		}
	})
}

// TestLiftMemory lifts results the guest returns behind a pointer.
func TestLiftMemory(t *testing.T) {
	cases := []struct {
		name string
		typ  string
		ptr  uint64
		mem  []byte
		want any
	}{
		{"multi-byte string", "string", 8, cat(pad(8), le32(16), le32(15), []byte("héllo, 世界 🎉")[:15]), "héllo, 世界 "},
		{"empty string at the end", "string", 0, cat(le32(8), le32(0)), ""},
		{"list of u16", "list<u16>", 0, cat(le32(8), le32(2), le16(0x0102), le16(0xFFFF)), []any{uint16(0x0102), uint16(0xFFFF)}},
		{"empty list", "list<u64>", 0, cat(le32(8), le32(0)), []any{}},
		{"list of strings", "list<string>", 0, cat(le32(8), le32(2), le32(24), le32(2), le32(26), le32(2), []byte("abü")),
			[]any{"ab", "ü"}},
		// a at 0, b at 8, c at 16; bool 2 is true.
		{"record with padding", "record{a: bool, b: u64, c: u16}", 8,
			cat(pad(8), []byte{2}, pad(7), le64(1<<40), le16(5), pad(6)),
			map[string]any{"a": true, "b": uint64(1 << 40), "c": uint16(5)}},
		{"tuple", "tuple<u8, u32, char>", 0, cat([]byte{9}, pad(3), le32(10), le32('x')), []any{uint8(9), uint32(10), 'x'}},
		{"option some", "option<u64>", 0, cat([]byte{1}, pad(7), le64(3)), refhost.Some(uint64(3))},
		{"option none ignores the payload", "option<u64>", 0, cat([]byte{0}, pad(7), le64(3)), refhost.OptionValue{}},
		{"option of option", "option<option<u8>>", 0, []byte{1, 0, 0xAA}, refhost.Some(refhost.OptionValue{})},
		{"variant f32 payload", "variant{a(f32), b(u64)}", 0, cat([]byte{0}, pad(7), le32(math.Float32bits(2.5)), pad(4)),
			refhost.VariantValue{Case: "a", Value: float32(2.5)}},
		{"result err string", "result<_, string>", 0, cat([]byte{1}, pad(3), le32(12), le32(2), []byte("no")),
			refhost.ResultValue{Err: true, Value: "no"}},
		{"result ok without payload", "result<_, string>", 0, cat([]byte{0}, pad(11)), refhost.ResultValue{}},
		{"enum of 257 in a record", "record{e: enum{" + enumText(257) + "}, x: u8}", 0, cat(le16(256), []byte{4}, pad(1)),
			map[string]any{"e": "c256", "x": uint8(4)}},
		{"nested", "record{items: list<option<string>>}", 0,
			cat(le32(8), le32(2), []byte{1}, pad(3), le32(32), le32(1), []byte{0}, pad(11), []byte("z")),
			map[string]any{"items": []any{refhost.Some("z"), refhost.OptionValue{}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			typ := mustType(t, tc.typ)
			got, err := liftResult(tc.mem, &typ, []uint64{tc.ptr})
			if err != nil {
				t.Fatalf("liftResult: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, bitsOpts()); diff != "" {
				t.Errorf("liftResult (-want +got):\n%s", diff)
			}
		})
	}
}

// enumText is the case list "c0, c1, ..." of enumOf(n).
func enumText(n int) string {
	var b []byte
	for i := range n {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, 'c')
		b = strconv.AppendInt(b, int64(i), 10)
	}
	return string(b)
}

// TestLiftRefused: every rule, each at the path of the value at fault.
func TestLiftRefused(t *testing.T) {
	deep := refhost.U8()
	for range refhost.MaxTypeDepth + 2 {
		deep = refhost.List(deep)
	}
	deepMem := cat(le32(8), le32(1)) // every level: one element at 8
	deepMem = cat(deepMem, le32(8), le32(1))

	cases := []struct {
		liftCase
		want errorAt
	}{
		// Core values.
		{liftCase{name: "too many flat values", typ: refhost.U8(), flat: []uint64{1, 2}}, errorAt{"", RuleCoreValue}},
		{liftCase{name: "too few flat values", typ: refhost.U8()}, errorAt{"", RuleCoreValue}},
		{liftCase{name: "two values for a pointer", typ: refhost.String(), flat: []uint64{0, 0}, mem: pad(16)}, errorAt{"", RuleCoreValue}},
		{liftCase{name: "a value for no result", none: true, flat: []uint64{0}}, errorAt{"", RuleCoreValue}},
		// Chars.
		{liftCase{name: "first surrogate", typ: refhost.Char(), flat: []uint64{0xD800}}, errorAt{"", RuleInvalidChar}},
		{liftCase{name: "last surrogate", typ: refhost.Char(), flat: []uint64{0xDFFF}}, errorAt{"", RuleInvalidChar}},
		{liftCase{name: "past unicode", typ: refhost.Char(), flat: []uint64{0x110000}}, errorAt{"", RuleInvalidChar}},
		{liftCase{name: "all ones", typ: refhost.Char(), flat: []uint64{math.MaxUint32}}, errorAt{"", RuleInvalidChar}},
		{liftCase{name: "char in a list", typ: mustType(t, "list<char>"), flat: []uint64{0},
			mem: cat(le32(8), le32(3), le32('a'), le32('b'), le32(0xDC00))}, errorAt{"[2]", RuleInvalidChar}},
		{liftCase{name: "char in a tuple", typ: mustType(t, "tuple<u8, char>"), flat: []uint64{0},
			mem: cat([]byte{1}, pad(3), le32(0x110000))}, errorAt{"[1]", RuleInvalidChar}},
		// Discriminants.
		{liftCase{name: "enum past its cases", typ: mustType(t, "enum{a, b}"), flat: []uint64{2}}, errorAt{"", RuleDiscriminant}},
		{liftCase{name: "flat discriminant is not narrowed", typ: mustType(t, "enum{a, b}"), flat: []uint64{0x100}}, errorAt{"", RuleDiscriminant}},
		{liftCase{name: "enum of 257 past its cases", typ: enumOf(257), flat: []uint64{257}}, errorAt{"", RuleDiscriminant}},
		{liftCase{name: "option discriminant 2", typ: mustType(t, "option<string>"), flat: []uint64{0}, mem: cat([]byte{2}, pad(11))},
			errorAt{"", RuleDiscriminant}},
		{liftCase{name: "u16 discriminant in a record", typ: mustType(t, "record{e: enum{"+enumText(257)+"}, x: u8}"), flat: []uint64{0},
			mem: cat(le16(257), []byte{4}, pad(1))}, errorAt{".e", RuleDiscriminant}},
		{liftCase{name: "result discriminant", typ: mustType(t, "list<result>"), flat: []uint64{0}, mem: cat(le32(8), le32(2), []byte{1, 2})},
			errorAt{"[1]", RuleDiscriminant}},
		// Bounds.
		{liftCase{name: "result pointer past memory", typ: refhost.String(), flat: []uint64{1000}, mem: pad(16)}, errorAt{"", RuleBounds}},
		{liftCase{name: "result block over the end", typ: refhost.String(), flat: []uint64{12}, mem: pad(16)}, errorAt{"", RuleBounds}},
		{liftCase{name: "result pointer near 2^32", typ: refhost.String(), flat: []uint64{math.MaxUint32 - 3}, mem: pad(16)}, errorAt{"", RuleBounds}},
		{liftCase{name: "string past memory", typ: refhost.String(), flat: []uint64{0}, mem: cat(le32(8), le32(9), pad(8))}, errorAt{"", RuleBounds}},
		{liftCase{name: "string wrapping past 2^32", typ: refhost.String(), flat: []uint64{0}, mem: cat(le32(0xFFFFFFF0), le32(0x20), pad(8))},
			errorAt{"", RuleBounds}},
		{liftCase{name: "empty string past memory", typ: refhost.String(), flat: []uint64{0}, mem: cat(le32(9), le32(0))}, errorAt{"", RuleBounds}},
		{liftCase{name: "list past memory", typ: mustType(t, "list<u32>"), flat: []uint64{0}, mem: cat(le32(8), le32(3), pad(8))},
			errorAt{"", RuleBounds}},
		{liftCase{name: "empty list past memory", typ: mustType(t, "list<u32>"), flat: []uint64{0}, mem: cat(le32(12), le32(0))},
			errorAt{"", RuleBounds}},
		// Alignment.
		{liftCase{name: "misaligned result pointer", typ: refhost.String(), flat: []uint64{2}, mem: pad(16)}, errorAt{"", RuleAlignment}},
		{liftCase{name: "misaligned list", typ: mustType(t, "list<u32>"), flat: []uint64{0}, mem: cat(le32(10), le32(1), pad(8))},
			errorAt{"", RuleAlignment}},
		{liftCase{name: "misaligned empty list", typ: mustType(t, "list<u64>"), flat: []uint64{0}, mem: cat(le32(4), le32(0))},
			errorAt{"", RuleAlignment}},
		{liftCase{name: "misaligned nested list", typ: mustType(t, "option<list<u16>>"), flat: []uint64{0}, mem: cat([]byte{1}, pad(3), le32(13), le32(1), pad(4))},
			errorAt{".some", RuleAlignment}},
		// UTF-8.
		{liftCase{name: "invalid byte", typ: refhost.String(), flat: []uint64{0}, mem: cat(le32(8), le32(3), []byte{'a', 0xFF, 'b'})},
			errorAt{"", RuleInvalidUTF8}},
		{liftCase{name: "truncated sequence", typ: refhost.String(), flat: []uint64{0}, mem: cat(le32(8), le32(2), []byte("é")[:1], pad(1))},
			errorAt{"", RuleInvalidUTF8}},
		{liftCase{name: "encoded surrogate", typ: refhost.String(), flat: []uint64{0}, mem: cat(le32(8), le32(3), []byte{0xED, 0xA0, 0x80})},
			errorAt{"", RuleInvalidUTF8}},
		{liftCase{name: "deep in a record", typ: mustType(t, "record{id: u8, items: list<option<string>>}"), flat: []uint64{0},
			mem: cat([]byte{1}, pad(3), le32(16), le32(4), pad(4), // record; items at 16: 4 × 12 bytes
				[]byte{0}, pad(11), []byte{0}, pad(11), []byte{0}, pad(11), []byte{1}, pad(3), le32(64), le32(1), []byte{0xC0})},
			errorAt{".items[3].some", RuleInvalidUTF8}},
		{liftCase{name: "variant case", typ: mustType(t, "variant{a, b(string)}"), flat: []uint64{0}, mem: cat([]byte{1}, pad(3), le32(12), le32(1), []byte{0x80})},
			errorAt{".b", RuleInvalidUTF8}},
		{liftCase{name: "result err", typ: mustType(t, "result<u8, string>"), flat: []uint64{0}, mem: cat([]byte{1}, pad(3), le32(12), le32(1), []byte{0xFE})},
			errorAt{".err", RuleInvalidUTF8}},
		// Too large.
		{liftCase{name: "4 GiB string", typ: refhost.String(), flat: []uint64{0}, mem: cat(le32(8), le32(math.MaxUint32), pad(8))},
			errorAt{"", RuleTooLarge}},
		{liftCase{name: "list over the spec's bytes", typ: mustType(t, "list<u64>"), flat: []uint64{0}, mem: cat(le32(8), le32(1<<25), pad(8))},
			errorAt{"", RuleTooLarge}},
		{liftCase{name: "list over maxResultUnits in tiny memory", typ: mustType(t, "list<u8>"), flat: []uint64{0}, mem: cat(le32(8), le32(1<<28-2), pad(8))},
			errorAt{"", RuleTooLarge}},
		{liftCase{name: "type nested past MaxTypeDepth", typ: deep, flat: []uint64{0}, mem: deepMem},
			errorAt{repeat("[0]", refhost.MaxTypeDepth+1), RuleTooLarge}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.lift()
			if got != nil {
				t.Errorf("liftResult returned %v with its error", got)
			}
			checkLiftErr(t, tc.want, err)
		})
	}
}

// TestLiftFlatJoined: a variant payload carried in a joined slot follows
// the spec's CoerceValueIter: the high half of an i64 slot read as i32 or
// f32 is dropped; an i32 slot must fit 32 bits, also when it is skipped.
func TestLiftFlatJoined(t *testing.T) {
	cases := []struct {
		name string
		typ  string
		flat []uint64
		want any
		err  *errorAt
	}{
		{"f32 in an i64 slot", "variant{a(f32), b(u64)}", []uint64{0, 0xDEADBEEF_00000000 | uint64(math.Float32bits(1.5))},
			refhost.VariantValue{Case: "a", Value: float32(1.5)}, nil},
		{"u8 in an i64 slot", "variant{a(u8), b(s64)}", []uint64{0, 0xFFFF_FFFF_FFFF_FF05}, refhost.VariantValue{Case: "a", Value: uint8(5)}, nil},
		{"s64 keeps all bits", "variant{a(u8), b(s64)}", []uint64{1, math.MaxUint64}, refhost.VariantValue{Case: "b", Value: int64(-1)}, nil},
		{"f64 in an i64 slot", "variant{a(f64), b(u32)}", []uint64{0, math.Float64bits(-3)}, refhost.VariantValue{Case: "a", Value: float64(-3)}, nil},
		{"f32 from an i32 slot, nan canonical", "variant{a(f32), b(u32)}", []uint64{0, 0x7F800001},
			refhost.VariantValue{Case: "a", Value: math.Float32frombits(canonicalNaN32)}, nil},
		{"i32 slot above 32 bits", "variant{a(f32), b(u32)}", []uint64{1, 1<<32 | 7}, refhost.VariantValue{Case: "b", Value: uint32(7)}, nil},
		{"skipped i32 slot above 32 bits", "variant{a, b(u32)}", []uint64{0, 1 << 32}, refhost.VariantValue{Case: "a"}, nil},
		{"discriminant above 32 bits", "variant{a, b(u32)}", []uint64{1<<32 | 1, 9}, refhost.VariantValue{Case: "b", Value: uint32(9)}, nil},
		{"option of joined variant", "option<variant{a(f32), b(u64)}>", []uint64{1, 1, 1 << 40},
			refhost.Some(refhost.VariantValue{Case: "b", Value: uint64(1 << 40)}), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			typ := mustType(t, tc.typ)
			l := lifter{}
			it := flatIter{vals: tc.flat, types: flatten(&typ, nil)}
			got, err := l.liftFlat(&it, &typ)
			if tc.err != nil {
				checkLiftErr(t, *tc.err, err)
				return
			}
			if err != nil {
				t.Fatalf("liftFlat: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, bitsOpts()); diff != "" {
				t.Errorf("liftFlat (-want +got):\n%s", diff)
			}
			if it.pos != len(tc.flat) {
				t.Errorf("liftFlat read %d of %d values", it.pos, len(tc.flat))
			}
		})
	}
}

// TestLiftResultUnits: maxResultUnits at the bound passes and one past it
// is refused, for a string (one unit and one per byte) and a list (one
// unit and one per element).
func TestLiftResultUnits(t *testing.T) {
	stringOf := func(n int) []byte { return cat(le32(8), le32(uint32(n)), bytes.Repeat([]byte{'a'}, n)) }
	listOf := func(n int) []byte { return cat(le32(8), le32(uint32(n)), pad(n)) }
	// list<string> of two strings: 1 + (1 + a) + (1 + b) units.
	twoStrings := func(a, b int) []byte {
		return cat(le32(8), le32(2), le32(24), le32(uint32(a)), le32(24), le32(uint32(b)), bytes.Repeat([]byte{'a'}, max(a, b)))
	}
	cases := []struct {
		name string
		typ  string
		mem  []byte
		ok   bool
		path string // of the refusal
	}{
		{"string at the bound", "string", stringOf(maxResultUnits - 1), true, ""},
		{"string past the bound", "string", stringOf(maxResultUnits), false, ""},
		{"list at the bound", "list<u8>", listOf(maxResultUnits - 1), true, ""},
		{"list past the bound", "list<u8>", listOf(maxResultUnits), false, ""},
		{"strings at the bound", "list<string>", twoStrings(maxResultUnits-5, 2), true, ""},
		{"strings past the bound", "list<string>", twoStrings(maxResultUnits-5, 3), false, "[1]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			typ := mustType(t, tc.typ)
			_, err := liftResult(tc.mem, &typ, []uint64{0})
			if tc.ok {
				if err != nil {
					t.Fatalf("liftResult: %v", err)
				}
				return
			}
			checkLiftErr(t, errorAt{tc.path, RuleTooLarge}, err)
		})
	}
}

// TestLiftRefusesBeforeAllocating: a list longer than the units left is
// refused with no more allocations than a 3-element list past the memory
// (the error's own): whether its length is 2^28-2 in 16 bytes of memory,
// or 2^20 in a memory that holds it.
func TestLiftRefusesBeforeAllocating(t *testing.T) {
	typ := mustType(t, "list<u8>")
	short := cat(le32(12), le32(8), pad(8))
	var shortErr error
	shortAllocs := testing.AllocsPerRun(20, func() { _, shortErr = liftResult(short, &typ, []uint64{0}) })
	checkLiftErr(t, errorAt{"", RuleBounds}, shortErr)
	cases := []struct {
		name string
		mem  []byte
	}{
		{"huge in tiny memory", cat(le32(8), le32(1<<28-2), pad(8))},
		{"long in memory that holds it", cat(le32(8), le32(1<<20), pad(1<<20))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			allocs := testing.AllocsPerRun(20, func() { _, err = liftResult(tc.mem, &typ, []uint64{0}) })
			checkLiftErr(t, errorAt{"", RuleTooLarge}, err)
			if allocs > shortAllocs {
				t.Errorf("refusing made %v allocations, refusing a short list %v", allocs, shortAllocs)
			}
		})
	}
}

// TestRulesAreErrors checks every Rule: its own name, the package
// prefix, and the fallback just outside the enumeration; and the message
// of a LiftError with and without a path.
func TestRulesAreErrors(t *testing.T) {
	seen := map[string]Rule{}
	for r := Rule(1); r < ruleEnd; r++ {
		if prev, ok := seen[r.String()]; ok {
			t.Errorf("Rule %d and %d share %q", prev, r, r.String())
		}
		seen[r.String()] = r
		if got, want := r.Error(), "wasmhost: "+r.String(); got != want {
			t.Errorf("Rule %d Error() = %q, want %q", r, got, want)
		}
	}
	for _, r := range []Rule{0, ruleEnd} {
		if got, want := r.String(), "Rule("+strconv.Itoa(int(r))+")"; got != want {
			t.Errorf("Rule(%d).String() = %q, want %q", r, got, want)
		}
	}
	got := []string{
		(&LiftError{Path: ".items[3].some", Rule: RuleInvalidUTF8}).Error(),
		(&LiftError{Rule: RuleBounds}).Error(),
	}
	want := []string{
		"wasmhost: result lifting refused at .items[3].some: invalid utf-8",
		"wasmhost: result lifting refused: pointer or length out of bounds",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Error() (-want +got):\n%s", diff)
	}
}

// TestLiftUpperBits: an i32 or f32 result is the low 32 bits of wazero's
// uint64, whatever the upper half holds (wazero stores a 32-bit result
// with a 4-byte write into a slot an i64 parameter may have used).
func TestLiftUpperBits(t *testing.T) {
	cases := []struct {
		name string
		typ  refhost.Type
		flat []uint64
		mem  []byte
		want any
	}{
		{"u8", refhost.U8(), []uint64{0xFFFFFFFF_00000007}, nil, uint8(7)},
		{"bool", refhost.Bool(), []uint64{1 << 32}, nil, false},
		{"s32", refhost.S32(), []uint64{0x12345678_FFFFFFFE}, nil, int32(-2)},
		{"f32", refhost.F32(), []uint64{0xDEADBEEF_00000000 | uint64(math.Float32bits(2.5))}, nil, float32(2.5)},
		{"result pointer", refhost.String(), []uint64{0xFFFFFFFF_00000000}, append(le64(8), 'h', 'i'), nil},
	}
	cases[4].mem = append(append(binary.LittleEndian.AppendUint32(nil, 8), binary.LittleEndian.AppendUint32(nil, 2)...), 'h', 'i')
	cases[4].want = "hi"
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := liftResult(tc.mem, &tc.typ, tc.flat)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("liftResult (-want +got):\n%s", diff)
			}
		})
	}
}
