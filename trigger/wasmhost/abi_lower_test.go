package wasmhost

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// fakeGuest is a guestABI over a Go slice: a bump allocator that honours
// the alignment asked for. Unless fixed is set, every realloc moves the
// memory to a new array and poisons the old one, so a lowering that keeps
// a stale slice loses its writes. ret, when set, replaces the pointer
// realloc returns; err makes realloc fail.
type fakeGuest struct {
	mem   []byte
	next  uint32
	calls int
	fixed bool
	ret   func(align, size uint32) uint32
	err   error
}

// newFakeGuest returns a guest with size bytes of memory whose first
// allocation is at 8 or after.
func newFakeGuest(size int) *fakeGuest { return &fakeGuest{mem: make([]byte, size), next: 8} }

func (g *fakeGuest) memory() []byte { return g.mem }

func (g *fakeGuest) realloc(align, size uint32) (uint32, error) {
	g.calls++
	if g.err != nil {
		return 0, g.err
	}
	if g.ret != nil {
		return g.ret(align, size), nil
	}
	ptr := alignTo(g.next, align)
	end := int(ptr) + int(size)
	if !g.fixed || end > len(g.mem) {
		moved := make([]byte, max(end, len(g.mem))+16)
		copy(moved, g.mem)
		for i := range g.mem {
			g.mem[i] = 0xEE
		}
		g.mem = moved
	}
	g.next = uint32(end)
	return ptr, nil
}

// mustType parses a type text.
func mustType(t testing.TB, s string) refhost.Type {
	t.Helper()
	typ, err := refhost.ParseType(s)
	if err != nil {
		t.Fatalf("ParseType(%q): %v", s, err)
	}
	return typ
}

// mustTypes parses type texts.
func mustTypes(t testing.TB, ss ...string) []refhost.Type {
	t.Helper()
	ts := make([]refhost.Type, len(ss))
	for i, s := range ss {
		ts[i] = mustType(t, s)
	}
	return ts
}

// bitsOpts compares lifted values: floats by their bits, so that a NaN
// is equal to the same NaN only and -0 differs from 0.
func bitsOpts() cmp.Option {
	return cmp.Options{
		cmp.Comparer(func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }),
		cmp.Comparer(func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }),
	}
}

// le32 is v in little-endian.
func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// cat joins byte slices.
func cat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

// errorAt is the comparable part of a LowerError or LiftError.
type errorAt struct {
	Path string
	Rule Rule
}

// checkLowerErr checks that err is a *LowerError at want, matching
// ErrLowerRefused and want's rule.
func checkLowerErr(t *testing.T, want errorAt, err error) {
	t.Helper()
	var le *LowerError
	if !errors.As(err, &le) {
		t.Fatalf("error %v is not a *LowerError", err)
	}
	if diff := cmp.Diff(want, errorAt{le.Path, le.Rule}); diff != "" {
		t.Errorf("LowerError (-want +got):\n%s", diff)
	}
	if !errors.Is(err, ErrLowerRefused) || !errors.Is(err, want.Rule) {
		t.Errorf("errors.Is(%v, ErrLowerRefused / %v) = false", err, want.Rule)
	}
}

// TestLowerArgs lowers arguments into a fresh fake guest (which moves its
// memory on every realloc) and checks the flat values and the bytes
// written.
func TestLowerArgs(t *testing.T) {
	nan32 := math.Float32frombits(0x7fa00001) // a signalling NaN with a payload
	type region struct {
		at    uint32
		bytes []byte
	}
	cases := []struct {
		name   string
		params []string
		args   []any
		want   []uint64
		mem    []region
	}{
		{"none", nil, []any{}, []uint64{}, nil},
		{"integers", []string{"bool", "u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"},
			[]any{true, uint8(200), int8(-128), uint16(65535), int16(-2), uint32(1 << 31), int32(-1), uint64(math.MaxUint64), int64(-1)},
			[]uint64{1, 200, 0xFFFFFF80, 65535, 0xFFFFFFFE, 1 << 31, 0xFFFFFFFF, math.MaxUint64, math.MaxUint64}, nil},
		{"floats and char", []string{"f32", "f64", "char", "f64"},
			[]any{float32(1.5), math.Copysign(0, -1), '😀', math.Inf(-1)},
			[]uint64{uint64(math.Float32bits(1.5)), 1 << 63, 0x1F600, 0xFFF0000000000000}, nil},
		{"nan is canonical", []string{"f32", "f64"}, []any{nan32, math.NaN()},
			[]uint64{canonicalNaN32, canonicalNaN64}, nil},
		{"multi-byte string", []string{"string"}, []any{"héllo, 世界 🎉"},
			[]uint64{8, uint64(len("héllo, 世界 🎉"))}, []region{{8, []byte("héllo, 世界 🎉")}}},
		{"empty string still allocates", []string{"string", "u8"}, []any{"", uint8(7)},
			[]uint64{8, 0, 7}, nil},
		{"list of u16", []string{"u8", "list<u16>"}, []any{uint8(1), []any{uint16(0x0102), uint16(0xA0B0)}},
			[]uint64{1, 8, 2}, []region{{8, []byte{0x02, 0x01, 0xB0, 0xA0}}}},
		{"list of strings", []string{"list<string>"}, []any{[]any{"ab", "ü"}},
			[]uint64{8, 2}, []region{{8, cat(le32(24), le32(2), le32(26), le32(2))}, {24, []byte("abü")}}},
		{"list of records with padding", []string{"list<record{a: u8, b: u32}>"},
			[]any{[]any{map[string]any{"a": uint8(1), "b": uint32(2)}, map[string]any{"a": uint8(3), "b": uint32(4)}}},
			[]uint64{8, 2}, []region{{8, []byte{1}}, {12, le32(2)}, {16, []byte{3}}, {20, le32(4)}}},
		{"option some and none", []string{"option<u64>", "option<u64>"},
			[]any{refhost.Some(uint64(9)), refhost.OptionValue{}}, []uint64{1, 9, 0, 0}, nil},
		{"option of option", []string{"option<option<u8>>"}, []any{refhost.Some(refhost.OptionValue{})},
			[]uint64{1, 0, 0}, nil},
		{"variant f32 in joined i32", []string{"variant{a(f32), b(u32)}"},
			[]any{refhost.VariantValue{Case: "a", Value: float32(-2)}}, []uint64{0, uint64(math.Float32bits(-2))}, nil},
		{"variant f32 in joined i64", []string{"variant{a(f32), b(u64)}"},
			[]any{refhost.VariantValue{Case: "a", Value: float32(-2)}}, []uint64{0, uint64(math.Float32bits(-2))}, nil},
		{"variant case without payload pads", []string{"variant{a, b(tuple<u64, f32>)}"},
			[]any{refhost.VariantValue{Case: "a"}}, []uint64{0, 0, 0}, nil},
		{"result err string", []string{"result<_, string>"}, []any{refhost.ResultValue{Err: true, Value: "no"}},
			[]uint64{1, 8, 2}, []region{{8, []byte("no")}}},
		{"result neither", []string{"result"}, []any{refhost.ResultValue{Err: true}}, []uint64{1}, nil},
		{"enum", []string{"enum{a, b, c}"}, []any{"c"}, []uint64{2}, nil},
		{"sixteen flat values stay flat", []string{"string", "string", "string", "string", "string", "string", "string", "string"},
			[]any{"", "", "", "", "", "", "", "a"},
			[]uint64{8, 0, 8, 0, 8, 0, 8, 0, 8, 0, 8, 0, 8, 0, 8, 1}, []region{{8, []byte("a")}}},
		{"seventeen flat values go through memory",
			[]string{"u8", "u8", "u8", "u8", "u8", "u8", "u8", "u8", "u8", "u8", "u8", "u8", "u8", "u8", "u8", "u64", "u8"},
			[]any{uint8(1), uint8(2), uint8(3), uint8(4), uint8(5), uint8(6), uint8(7), uint8(8), uint8(9), uint8(10),
				uint8(11), uint8(12), uint8(13), uint8(14), uint8(15), uint64(0x1122334455667788), uint8(17)},
			[]uint64{8}, []region{
				{8, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
				{24, []byte{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 17}},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newFakeGuest(16)
			got, err := lowerArgs(g, mustTypes(t, tc.params...), tc.args)
			if err != nil {
				t.Fatalf("lowerArgs: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("flat (-want +got):\n%s", diff)
			}
			for _, r := range tc.mem {
				if diff := cmp.Diff(r.bytes, g.mem[r.at:int(r.at)+len(r.bytes)]); diff != "" {
					t.Errorf("memory at %d (-want +got):\n%s", r.at, diff)
				}
			}
		})
	}
}

// TestLowerBadRealloc: every pointer realloc returns is checked before a
// byte is written; a failing realloc is wrapped.
func TestLowerBadRealloc(t *testing.T) {
	boom := errors.New("trap")
	seventeen := make([]string, 17)
	seventeenArgs := make([]any, 17)
	for i := range seventeen {
		seventeen[i], seventeenArgs[i] = "u8", uint8(i)
	}
	seventeen[16], seventeenArgs[16] = "u32", uint32(16) // the tuple's alignment is 4
	cases := []struct {
		name   string
		params []string
		args   []any
		ret    func(align, size uint32) uint32
		err    error
		want   errorAt
	}{
		{"misaligned list", []string{"list<u32>"}, []any{[]any{uint32(1)}},
			func(uint32, uint32) uint32 { return 6 }, nil, errorAt{"[0]", RuleAlignment}},
		{"misaligned empty list", []string{"u8", "list<u64>"}, []any{uint8(0), []any{}},
			func(uint32, uint32) uint32 { return 4 }, nil, errorAt{"[1]", RuleAlignment}},
		{"misaligned argument tuple", seventeen, seventeenArgs,
			func(uint32, uint32) uint32 { return 1 }, nil, errorAt{"", RuleAlignment}},
		{"string past memory", []string{"string"}, []any{"abcd"},
			func(uint32, uint32) uint32 { return 62 }, nil, errorAt{"[0]", RuleBounds}},
		{"string one byte past memory", []string{"string"}, []any{"abcd"},
			func(uint32, uint32) uint32 { return 61 }, nil, errorAt{"[0]", RuleBounds}},
		{"empty string past memory", []string{"string"}, []any{""},
			func(uint32, uint32) uint32 { return 65 }, nil, errorAt{"[0]", RuleBounds}},
		{"block wrapping past 2^32", []string{"record{a: u8, b: list<u64>}"},
			[]any{map[string]any{"a": uint8(0), "b": []any{uint64(1), uint64(2)}}},
			func(uint32, uint32) uint32 { return math.MaxUint32 - 7 }, nil, errorAt{"[0].b", RuleBounds}},
		{"tuple wrapping past 2^32", seventeen, seventeenArgs,
			func(uint32, uint32) uint32 { return math.MaxUint32 &^ 7 }, nil, errorAt{"", RuleBounds}},
		{"realloc error", []string{"u8", "option<string>"}, []any{uint8(1), refhost.Some("x")},
			nil, boom, errorAt{"[1].some", RuleReallocFailed}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newFakeGuest(64)
			g.ret, g.err = tc.ret, tc.err
			before := append([]byte(nil), g.mem...)
			_, err := lowerArgs(g, mustTypes(t, tc.params...), tc.args)
			checkLowerErr(t, tc.want, err)
			if tc.err != nil && !errors.Is(err, tc.err) {
				t.Errorf("errors.Is(%v, realloc's error) = false", err)
			}
			if diff := cmp.Diff(before, g.mem); diff != "" {
				t.Errorf("memory written after a refused realloc (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLowerReallocAtTheEnd: a block that ends exactly at the end of the
// memory is accepted and written.
func TestLowerReallocAtTheEnd(t *testing.T) {
	g := newFakeGuest(64)
	g.ret = func(uint32, uint32) uint32 { return 60 }
	got, err := lowerArgs(g, mustTypes(t, "string"), []any{"abcd"})
	if err != nil {
		t.Fatalf("lowerArgs: %v", err)
	}
	if diff := cmp.Diff([]uint64{60, 4}, got); diff != "" {
		t.Errorf("flat (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]byte("abcd"), g.mem[60:]); diff != "" {
		t.Errorf("memory (-want +got):\n%s", diff)
	}
}

// TestLowerWrongType: a Go value outside its declared type is refused at
// its path, before realloc is called for it.
func TestLowerWrongType(t *testing.T) {
	cases := []struct {
		name   string
		params []string
		args   []any
		path   string
	}{
		{"argument count", []string{"u8"}, []any{uint8(1), uint8(2)}, ""},
		{"int for u8", []string{"u8"}, []any{1}, "[0]"},
		{"nil", []string{"string"}, []any{nil}, "[0]"},
		{"invalid utf-8", []string{"u8", "string"}, []any{uint8(0), "a\xffb"}, "[1]"},
		{"surrogate char", []string{"char"}, []any{rune(0xD800)}, "[0]"},
		{"char past unicode", []string{"char"}, []any{rune(0x110000)}, "[0]"},
		{"short tuple", []string{"tuple<u8, u8>"}, []any{[]any{uint8(1)}}, "[0]"},
		{"record missing field", []string{"record{a: u8, b: u8}"}, []any{map[string]any{"a": uint8(1), "c": uint8(2)}}, "[0]"},
		{"record extra field", []string{"record{a: u8}"}, []any{map[string]any{"a": uint8(1), "b": uint8(2)}}, "[0]"},
		{"list element", []string{"list<u8>"}, []any{[]any{uint8(1), uint8(2), "x"}}, "[0][2]"},
		{"record field", []string{"record{id: u64, tags: list<string>}"},
			[]any{map[string]any{"id": uint64(1), "tags": []any{"a", 3}}}, "[0].tags[1]"},
		{"unknown enum case", []string{"enum{a, b}"}, []any{"c"}, "[0]"},
		{"unknown variant case", []string{"variant{a, b(u8)}"}, []any{refhost.VariantValue{Case: "c"}}, "[0]"},
		{"payload on a case without", []string{"variant{a, b(u8)}"}, []any{refhost.VariantValue{Case: "a", Value: uint8(1)}}, "[0]"},
		{"no payload on a case with", []string{"variant{a, b(u8)}"}, []any{refhost.VariantValue{Case: "b"}}, "[0].b"},
		{"none with a value", []string{"option<u8>"}, []any{refhost.OptionValue{Value: uint8(1)}}, "[0]"},
		{"ok payload on result<_, E>", []string{"result<_, u8>"}, []any{refhost.ResultValue{Value: uint8(1)}}, "[0]"},
		{"err payload of the wrong type", []string{"result<u8, string>"}, []any{refhost.ResultValue{Err: true, Value: uint8(1)}}, "[0].err"},
		{"option given bare", []string{"option<u8>"}, []any{uint8(1)}, "[0]"},
		{"in memory", []string{"u64", "u64", "u64", "u64", "u64", "u64", "u64", "u64", "u64", "u64", "u64", "u64", "u64", "u64", "u64", "u64", "option<u8>"},
			[]any{uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), refhost.Some(int8(1))},
			"[16].some"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := lowerArgs(newFakeGuest(64), mustTypes(t, tc.params...), tc.args)
			checkLowerErr(t, errorAt{tc.path, RuleWrongType}, err)
		})
	}
}

// TestLowerTooLarge: a list whose bytes exceed 2^32-1 is refused before
// realloc is called; a type nested past refhost.MaxTypeDepth is refused,
// not followed.
func TestLowerTooLarge(t *testing.T) {
	// record{f0: u64, ..., f499: u64}: 4,000 bytes, 1,002 type nodes.
	fields := make([]refhost.Field, 500)
	for i := range fields {
		fields[i] = refhost.Field{Name: "f" + strconv.Itoa(i), Type: refhost.U64()}
	}
	big := refhost.List(refhost.Record(fields...))
	if err := big.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	fits := math.MaxUint32 / 4000

	deep, deepValue := refhost.U8(), any(uint8(1))
	for range refhost.MaxTypeDepth + 2 {
		deep, deepValue = refhost.Option(deep), refhost.Some(deepValue)
	}

	cases := []struct {
		name   string
		params []refhost.Type
		args   []any
		want   errorAt
		calls  int
	}{
		// At the bound the size reaches realloc, whose block the
		// 64-byte memory cannot hold.
		{"list at 2^32-1 bytes", []refhost.Type{big}, []any{make([]any, fits)}, errorAt{"[0]", RuleBounds}, 1},
		{"list past 2^32-1 bytes", []refhost.Type{big}, []any{make([]any, fits+1)}, errorAt{"[0]", RuleTooLarge}, 0},
		{"nested past MaxTypeDepth", []refhost.Type{deep}, []any{deepValue},
			errorAt{"[0]" + repeat(".some", refhost.MaxTypeDepth), RuleTooLarge}, 1}, // 35 flat values: the tuple's block
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newFakeGuest(64)
			g.ret = func(uint32, uint32) uint32 { return 8 }
			_, err := lowerArgs(g, tc.params, tc.args)
			checkLowerErr(t, tc.want, err)
			if g.calls != tc.calls {
				t.Errorf("realloc called %d times, want %d", g.calls, tc.calls)
			}
		})
	}
}

// repeat is s n times.
func repeat(s string, n int) string {
	var out string
	for range n {
		out += s
	}
	return out
}

// TestLowerErrorMessages pins the message of a LowerError with and
// without a path; the cause's text is not repeated.
func TestLowerErrorMessages(t *testing.T) {
	got := []string{
		(&LowerError{Path: "[1].name", Rule: RuleReallocFailed, Err: errors.New("guest text")}).Error(),
		(&LowerError{Rule: RuleWrongType}).Error(),
	}
	want := []string{
		"wasmhost: argument lowering refused at [1].name: realloc failed",
		"wasmhost: argument lowering refused: value not of its declared type",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Error() (-want +got):\n%s", diff)
	}
}

// BenchmarkLowerLift lowers a string argument into a guest, and lifts a
// record result from a guest's memory.
func BenchmarkLowerLift(b *testing.B) {
	b.Run("lower/string", func(b *testing.B) {
		params := mustTypes(b, "string")
		s := strings.Repeat("héllo, wörld ", 20)
		args := []any{s}
		g := newFakeGuest(1 << 10)
		g.fixed = true
		b.SetBytes(int64(len(s)))
		b.ReportAllocs()
		for b.Loop() {
			g.next = 8
			if _, err := lowerArgs(g, params, args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lift/record", func(b *testing.B) {
		typ := mustType(b, "record{id: u64, name: string, tags: list<string>, score: option<f64>}")
		v := map[string]any{
			"id":    uint64(42),
			"name":  "a name of some length",
			"tags":  []any{"one", "two", "three"},
			"score": refhost.Some(0.5),
		}
		g := newFakeGuest(0)
		g.fixed = true
		l := lowerer{g: g, mem: g.memory()}
		lay := layoutOf(&typ)
		ptr, err := l.alloc(lay.align, lay.size)
		if err == nil {
			err = l.store(uint64(ptr), &typ, v)
		}
		if err != nil {
			b.Fatal(err)
		}
		mem, flat := g.memory(), []uint64{uint64(ptr)}
		b.SetBytes(int64(len(mem)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := liftResult(mem, &typ, flat); err != nil {
				b.Fatal(err)
			}
		}
	})
}
