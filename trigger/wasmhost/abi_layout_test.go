package wasmhost

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tetratelabs/wazero/api"

	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// enumOf returns an enum of n cases c0, c1, ...
func enumOf(n int) refhost.Type {
	names := make([]string, n)
	for i := range names {
		names[i] = "c" + strconv.Itoa(i)
	}
	return refhost.Enum(names...)
}

// TestLayout checks size, alignment and flattening against the spec's
// elem_size, alignment and flatten_type, worked by hand.
func TestLayout(t *testing.T) {
	const (
		i32 = api.ValueTypeI32
		i64 = api.ValueTypeI64
		f32 = api.ValueTypeF32
		f64 = api.ValueTypeF64
	)
	type want struct {
		Size, Align uint32
		Flat        []api.ValueType
	}
	cases := []struct {
		name string
		typ  refhost.Type
		want want
	}{
		{"bool", refhost.Bool(), want{1, 1, []api.ValueType{i32}}},
		{"s8", refhost.S8(), want{1, 1, []api.ValueType{i32}}},
		{"u8", refhost.U8(), want{1, 1, []api.ValueType{i32}}},
		{"s16", refhost.S16(), want{2, 2, []api.ValueType{i32}}},
		{"u16", refhost.U16(), want{2, 2, []api.ValueType{i32}}},
		{"s32", refhost.S32(), want{4, 4, []api.ValueType{i32}}},
		{"u32", refhost.U32(), want{4, 4, []api.ValueType{i32}}},
		{"s64", refhost.S64(), want{8, 8, []api.ValueType{i64}}},
		{"u64", refhost.U64(), want{8, 8, []api.ValueType{i64}}},
		{"f32", refhost.F32(), want{4, 4, []api.ValueType{f32}}},
		{"f64", refhost.F64(), want{8, 8, []api.ValueType{f64}}},
		{"char", refhost.Char(), want{4, 4, []api.ValueType{i32}}},
		{"string", refhost.String(), want{8, 4, []api.ValueType{i32, i32}}},
		{"list of u8", mustType(t, "list<u8>"), want{8, 4, []api.ValueType{i32, i32}}},
		{"list of u64", mustType(t, "list<u64>"), want{8, 4, []api.ValueType{i32, i32}}},
		// u8 at 0, u32 at 4.
		{"tuple with padding", mustType(t, "tuple<u8, u32>"), want{8, 4, []api.ValueType{i32, i32}}},
		// u8 at 0, u64 at 8, u8 at 16, padded to 24.
		{"tuple with trailing padding", mustType(t, "tuple<u8, u64, u8>"), want{24, 8, []api.ValueType{i32, i64, i32}}},
		// a at 0, b at 2, c at 4, padded to 6.
		{"record with padding", mustType(t, "record{a: u8, b: u16, c: u8}"), want{6, 2, []api.ValueType{i32, i32, i32}}},
		{"record of one byte", mustType(t, "record{a: bool}"), want{1, 1, []api.ValueType{i32}}},
		// u8 discriminant at 0, payload at 1.
		{"option of u8", mustType(t, "option<u8>"), want{2, 1, []api.ValueType{i32, i32}}},
		// payload at 8.
		{"option of u64", mustType(t, "option<u64>"), want{16, 8, []api.ValueType{i32, i64}}},
		// payload at 4.
		{"option of string", mustType(t, "option<string>"), want{12, 4, []api.ValueType{i32, i32, i32}}},
		// outer discriminant at 0, inner at 1, payload at 2.
		{"option of option", mustType(t, "option<option<u8>>"), want{3, 1, []api.ValueType{i32, i32, i32}}},
		{"enum of 2", mustType(t, "enum{a, b}"), want{1, 1, []api.ValueType{i32}}},
		{"enum of 256", enumOf(256), want{1, 1, []api.ValueType{i32}}},
		{"enum of 257", enumOf(257), want{2, 2, []api.ValueType{i32}}},
		{"variant of 257 with u8", func() refhost.Type {
			e := enumOf(257)
			e.Kind = refhost.KindVariant
			p := refhost.U8()
			e.Cases[0].Payload = &p
			return e
		}(), want{4, 2, []api.ValueType{i32, i32}}}, // u16 discriminant, payload at 2, padded to 4
		// join(f32, i32) = i32; payload at 4.
		{"variant of f32 and u32", mustType(t, "variant{a(f32), b(u32)}"), want{8, 4, []api.ValueType{i32, i32}}},
		// join(f32, f64) = i64; payload at 8.
		{"variant of f32 and f64", mustType(t, "variant{a(f32), b(f64)}"), want{16, 8, []api.ValueType{i32, i64}}},
		{"variant of f32 and no payload", mustType(t, "variant{a(f32), b}"), want{8, 4, []api.ValueType{i32, f32}}},
		{"variant without payloads", mustType(t, "variant{a, b, c}"), want{1, 1, []api.ValueType{i32}}},
		// [f32, i32] joined with [i64, f32]; payloads of 8 and 16 bytes at 8.
		{"variant of tuples", mustType(t, "variant{a(tuple<f32, u8>), b(tuple<u64, f32>)}"),
			want{24, 8, []api.ValueType{i32, i64, i32}}},
		{"result of err string", mustType(t, "result<_, string>"), want{12, 4, []api.ValueType{i32, i32, i32}}},
		{"result of ok u8", mustType(t, "result<u8>"), want{2, 1, []api.ValueType{i32, i32}}},
		{"result of neither", mustType(t, "result"), want{1, 1, []api.ValueType{i32}}},
		{"result of u8 and u64", mustType(t, "result<u8, u64>"), want{16, 8, []api.ValueType{i32, i64}}},
		{"result of f32 and f32", mustType(t, "result<f32, f32>"), want{8, 4, []api.ValueType{i32, f32}}},
		// a: option<u8> at 0 (2 bytes); b: tuple<f32, string> at 4 (12 bytes).
		{"nested record", mustType(t, "record{a: option<u8>, b: tuple<f32, string>}"),
			want{16, 4, []api.ValueType{i32, i32, f32, i32, i32}}},
		{"list of nested", mustType(t, "list<record{a: option<u8>, b: tuple<f32, string>}>"), want{8, 4, []api.ValueType{i32, i32}}},
		// inner [i32, i64] after the outer discriminant; payload at 8.
		{"option of joined variant", mustType(t, "option<variant{a(f32), b(u64)}>"),
			want{24, 8, []api.ValueType{i32, i32, i64}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.typ.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			got := want{sizeOf(&tc.typ), alignOf(&tc.typ), flatten(&tc.typ, nil)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("layout (-want +got):\n%s", diff)
			}
			if n := flatCount(&tc.typ); n != len(tc.want.Flat) {
				t.Errorf("flatCount = %d, want %d", n, len(tc.want.Flat))
			}
		})
	}
}

// TestFlattenAppends: flatten appends after what dst holds, and a
// variant's joins do not reach into it.
func TestFlattenAppends(t *testing.T) {
	typ := mustType(t, "variant{a(f32), b(tuple<u64, string>)}")
	dst := []api.ValueType{api.ValueTypeF64}
	got := flatten(&typ, dst)
	want := []api.ValueType{api.ValueTypeF64, api.ValueTypeI32, api.ValueTypeI64, api.ValueTypeI32, api.ValueTypeI32}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flatten (-want +got):\n%s", diff)
	}
}

// TestCoreSignature checks flatten_functype in the 'lift' context at
// MAX_FLAT_PARAMS and MAX_FLAT_RESULTS and one past each.
func TestCoreSignature(t *testing.T) {
	const i32, i64, f64 = api.ValueTypeI32, api.ValueTypeI64, api.ValueTypeF64
	repeatType := func(s string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	type sig struct {
		Params, Results []api.ValueType
	}
	cases := []struct {
		name   string
		params []string
		result string // empty: no result
		want   sig
	}{
		{"nothing", nil, "", sig{nil, nil}},
		{"16 flat params", repeatType("u64", 16), "", sig{[]api.ValueType{i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64}, nil}},
		{"17 flat params", append(repeatType("u64", 16), "bool"), "", sig{[]api.ValueType{i32}, nil}},
		{"8 strings are 16", repeatType("string", 8), "", sig{repeatVT(i32, 16), nil}},
		{"a record of 17", []string{"record{a: string, b: tuple<u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8>}"}, "", sig{[]api.ValueType{i32}, nil}},
		{"1 flat result", nil, "f64", sig{nil, []api.ValueType{f64}}},
		{"1 flat result of an enum", []string{"u8"}, "enum{a, b}", sig{[]api.ValueType{i32}, []api.ValueType{i32}}},
		{"2 flat results", []string{"u8"}, "option<u8>", sig{[]api.ValueType{i32}, []api.ValueType{i32}}},
		{"string result", []string{"f64"}, "string", sig{[]api.ValueType{f64}, []api.ValueType{i32}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var result *refhost.Type
			if tc.result != "" {
				r := mustType(t, tc.result)
				result = &r
			}
			p, r := coreSignature(mustTypes(t, tc.params...), result)
			if diff := cmp.Diff(tc.want, sig{p, r}); diff != "" {
				t.Errorf("coreSignature (-want +got):\n%s", diff)
			}
		})
	}
}

// repeatVT is n copies of v.
func repeatVT(v api.ValueType, n int) []api.ValueType {
	out := make([]api.ValueType, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// sizeOf is the spec's elem_size: the bytes a value of t takes in linear
// memory, trailing padding included (layoutOf's size, as the tests name
// it after the spec).
func sizeOf(t *refhost.Type) uint32 { return layoutOf(t).size }

// alignOf is the spec's alignment: 1, 2, 4 or 8.
func alignOf(t *refhost.Type) uint32 { return layoutOf(t).align }
