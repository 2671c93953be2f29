package wasmhost

import (
	"math"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/tetratelabs/wazero/api"
	"pgregory.net/rapid"

	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// typeGen draws valid types; a type holds at most one enum or variant of
// 257 cases (a u16 discriminant), so it stays within refhost.MaxTypeNodes.
type typeGen struct {
	big bool
}

// names draws 1-3 distinct member names.
func (g *typeGen) names(t *rapid.T, label string) []string {
	return rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"a", "b", "id", "max-len", "HTTP", "x2", "some", "ok"}), 1, 3, rapid.ID).Draw(t, label)
}

// draw draws a valid type of at most depth levels: every kind, options of
// options, variants with and without payloads, results with each side
// present or absent.
func (g *typeGen) draw(t *rapid.T, depth int) refhost.Type {
	kinds := []refhost.Kind{
		refhost.KindBool, refhost.KindS8, refhost.KindS16, refhost.KindS32, refhost.KindS64,
		refhost.KindU8, refhost.KindU16, refhost.KindU32, refhost.KindU64,
		refhost.KindF32, refhost.KindF64, refhost.KindChar, refhost.KindString, refhost.KindEnum,
	}
	if depth > 1 {
		kinds = append(kinds, refhost.KindList, refhost.KindTuple, refhost.KindRecord,
			refhost.KindOption, refhost.KindOption, refhost.KindVariant, refhost.KindVariant, refhost.KindResult)
	}
	k := rapid.SampledFrom(kinds).Draw(t, "kind")
	sub := func() refhost.Type { return g.draw(t, depth-1) }
	opt := func() *refhost.Type {
		if !rapid.Bool().Draw(t, "payload") {
			return nil
		}
		p := sub()
		return &p
	}
	switch k {
	case refhost.KindList:
		return refhost.List(sub())
	case refhost.KindOption:
		return refhost.Option(sub())
	case refhost.KindTuple:
		elems := make([]refhost.Type, rapid.IntRange(1, 3).Draw(t, "tuple"))
		for i := range elems {
			elems[i] = sub()
		}
		return refhost.Tuple(elems...)
	case refhost.KindRecord:
		names := g.names(t, "fields")
		fs := make([]refhost.Field, len(names))
		for i, n := range names {
			fs[i] = refhost.Field{Name: n, Type: sub()}
		}
		return refhost.Record(fs...)
	case refhost.KindEnum:
		if g.bigOnce(t) {
			return enumOf(257)
		}
		return refhost.Enum(g.names(t, "enum")...)
	case refhost.KindVariant:
		var cs []refhost.Case
		if g.bigOnce(t) {
			cs = enumOf(257).Cases
			for _, i := range []int{0, rapid.IntRange(1, 256).Draw(t, "big-case")} {
				cs[i].Payload = opt()
			}
		} else {
			for _, n := range g.names(t, "cases") {
				cs = append(cs, refhost.Case{Name: n, Payload: opt()})
			}
		}
		return refhost.Variant(cs...)
	case refhost.KindResult:
		return refhost.Result(opt(), opt())
	}
	return refhost.Type{Kind: k}
}

// bigOnce draws whether this enum or variant has 257 cases, at most once
// per type.
func (g *typeGen) bigOnce(t *rapid.T) bool {
	if g.big || rapid.IntRange(0, 15).Draw(t, "big") != 0 {
		return false
	}
	g.big = true
	return true
}

// drawType draws one valid type of at most depth levels.
func drawType(t *rapid.T, depth int) refhost.Type {
	var g typeGen
	return g.draw(t, depth)
}

// drawValue draws a Go value of typ. NaNs are drawn as the canonical NaN
// only, the one lifting produces.
func drawValue(t *rapid.T, typ *refhost.Type) any {
	switch typ.Kind {
	case refhost.KindBool:
		return rapid.Bool().Draw(t, "bool")
	case refhost.KindS8:
		return rapid.Int8().Draw(t, "s8")
	case refhost.KindS16:
		return rapid.Int16().Draw(t, "s16")
	case refhost.KindS32:
		return rapid.Int32().Draw(t, "s32")
	case refhost.KindS64:
		return rapid.Int64().Draw(t, "s64")
	case refhost.KindU8:
		return rapid.Uint8().Draw(t, "u8")
	case refhost.KindU16:
		return rapid.Uint16().Draw(t, "u16")
	case refhost.KindU32:
		return rapid.Uint32().Draw(t, "u32")
	case refhost.KindU64:
		return rapid.Uint64().Draw(t, "u64")
	case refhost.KindF32:
		f := rapid.Float32().Draw(t, "f32")
		if f != f || rapid.IntRange(0, 15).Draw(t, "nan") == 0 {
			f = math.Float32frombits(canonicalNaN32)
		}
		return f
	case refhost.KindF64:
		f := rapid.Float64().Draw(t, "f64")
		if f != f || rapid.IntRange(0, 15).Draw(t, "nan") == 0 {
			f = math.Float64frombits(canonicalNaN64)
		}
		return f
	case refhost.KindChar:
		return rapid.Rune().Filter(utf8.ValidRune).Draw(t, "char")
	case refhost.KindString:
		return rapid.StringN(0, 6, -1).Filter(utf8.ValidString).Draw(t, "string")
	case refhost.KindList:
		l := make([]any, rapid.IntRange(0, 3).Draw(t, "len"))
		for i := range l {
			l[i] = drawValue(t, typ.Elem)
		}
		return l
	case refhost.KindTuple:
		l := make([]any, len(typ.Elems))
		for i := range l {
			l[i] = drawValue(t, &typ.Elems[i])
		}
		return l
	case refhost.KindRecord:
		m := make(map[string]any, len(typ.Fields))
		for _, f := range typ.Fields {
			m[f.Name] = drawValue(t, &f.Type)
		}
		return m
	case refhost.KindOption:
		if !rapid.Bool().Draw(t, "some") {
			return refhost.OptionValue{}
		}
		return refhost.Some(drawValue(t, typ.Elem))
	case refhost.KindEnum:
		return typ.Cases[rapid.IntRange(0, len(typ.Cases)-1).Draw(t, "case")].Name
	case refhost.KindVariant:
		c := typ.Cases[rapid.IntRange(0, len(typ.Cases)-1).Draw(t, "case")]
		if c.Payload == nil {
			return refhost.VariantValue{Case: c.Name}
		}
		return refhost.VariantValue{Case: c.Name, Value: drawValue(t, c.Payload)}
	case refhost.KindResult:
		isErr := rapid.Bool().Draw(t, "err")
		side := typ.Ok
		if isErr {
			side = typ.Err
		}
		if side == nil {
			return refhost.ResultValue{Err: isErr}
		}
		return refhost.ResultValue{Err: isErr, Value: drawValue(t, side)}
	}
	t.Fatalf("kind %v", typ.Kind)
	return nil
}

// drawGuest draws a fake guest whose memory is small (so it moves on
// every realloc) and whose next block starts at a drawn offset.
func drawGuest(t *rapid.T) *fakeGuest {
	g := newFakeGuest(rapid.IntRange(0, 64).Draw(t, "memory"))
	g.next = uint32(rapid.IntRange(0, 13).Draw(t, "start"))
	return g
}

// checkWellTyped requires v to be a value of typ by refhost's encoder.
func checkWellTyped(t *rapid.T, typ refhost.Type, v any) {
	sig, err := refhost.NewSignature(typ)
	if err != nil {
		t.Fatalf("NewSignature(%v): %v", typ, err)
	}
	if _, err := sig.Append(nil, []any{v}); err != nil {
		t.Fatalf("Append: %v", err)
	}
}

// TestPropertyRoundTrip: for random valid types and values, every way in
// and out of the guest gives the value back, floats compared by bits.
func TestPropertyRoundTrip(t *testing.T) {
	t.Run("drawn values are well-typed", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			typ := drawType(t, 4)
			checkWellTyped(t, typ, drawValue(t, &typ))
		})
	})
	t.Run("store then load", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			typ := drawType(t, 4)
			v := drawValue(t, &typ)
			g := drawGuest(t)
			l := lowerer{g: g, mem: g.memory()}
			lay := layoutOf(&typ)
			ptr, err := l.alloc(lay.align, lay.size)
			if err != nil {
				t.Fatalf("alloc: %v", err)
			}
			if err := l.store(uint64(ptr), &typ, v); err != nil {
				t.Fatalf("store: %v", err)
			}
			lf := lifter{mem: g.memory()}
			got, err := lf.load(uint64(ptr), &typ)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if diff := cmp.Diff(v, got, bitsOpts()); diff != "" {
				t.Fatalf("load(store(v)) (-want +got):\n%s", diff)
			}
		})
	})
	t.Run("lower_flat then lift_flat", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			typ := drawType(t, 4)
			v := drawValue(t, &typ)
			g := drawGuest(t)
			l := lowerer{g: g, mem: g.memory()}
			flat, err := l.lowerFlat(nil, &typ, v)
			if err != nil {
				t.Fatalf("lowerFlat: %v", err)
			}
			types := flatten(&typ, nil)
			if len(flat) != len(types) || len(flat) != flatCount(&typ) {
				t.Fatalf("%d flat values, %d flat types, flatCount %d", len(flat), len(types), flatCount(&typ))
			}
			for i, ft := range types {
				if (ft == api.ValueTypeI32 || ft == api.ValueTypeF32) && flat[i] > math.MaxUint32 {
					t.Fatalf("flat value %d (%#x) does not fit its %s", i, flat[i], api.ValueTypeName(ft))
				}
			}
			lf := lifter{mem: g.memory()}
			it := flatIter{vals: flat, types: types}
			got, err := lf.liftFlat(&it, &typ)
			if err != nil {
				t.Fatalf("liftFlat: %v", err)
			}
			if it.pos != len(flat) {
				t.Fatalf("liftFlat read %d of %d values", it.pos, len(flat))
			}
			if diff := cmp.Diff(v, got, bitsOpts()); diff != "" {
				t.Fatalf("liftFlat(lowerFlat(v)) (-want +got):\n%s", diff)
			}
		})
	})
	t.Run("lowerArgs then lift", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			params := make([]refhost.Type, rapid.IntRange(0, 20).Draw(t, "params"))
			args := make([]any, len(params))
			for i := range params {
				params[i] = drawType(t, 3)
				args[i] = drawValue(t, &params[i])
			}
			g := drawGuest(t)
			flat, err := lowerArgs(g, params, args)
			if err != nil {
				t.Fatalf("lowerArgs: %v", err)
			}
			cparams, _ := coreSignature(params, nil)
			if len(flat) != len(cparams) {
				t.Fatalf("%d flat values for a core signature of %d", len(flat), len(cparams))
			}
			// Read back as the guest would: the argument tuple, flat or
			// behind the pointer.
			tuple := refhost.Type{Kind: refhost.KindTuple, Elems: params}
			var got any
			if flatCount(&tuple) > maxFlatParams {
				got, err = liftResult(g.memory(), &tuple, flat)
			} else {
				lf := lifter{mem: g.memory()}
				got, err = lf.liftFlat(&flatIter{vals: flat, types: cparams}, &tuple)
			}
			if err != nil {
				t.Fatalf("lift: %v", err)
			}
			if diff := cmp.Diff(args, got, bitsOpts()); diff != "" {
				t.Fatalf("lift(lowerArgs(args)) (-want +got):\n%s", diff)
			}
		})
	})
	t.Run("liftResult", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			typ := drawType(t, 4)
			v := drawValue(t, &typ)
			g := drawGuest(t)
			l := lowerer{g: g, mem: g.memory()}
			var flat []uint64
			if flatCount(&typ) > maxFlatResults {
				lay := layoutOf(&typ)
				ptr, err := l.alloc(lay.align, lay.size)
				if err != nil {
					t.Fatalf("alloc: %v", err)
				}
				if err := l.store(uint64(ptr), &typ, v); err != nil {
					t.Fatalf("store: %v", err)
				}
				flat = []uint64{uint64(ptr)}
			} else {
				var err error
				if flat, err = l.lowerFlat(nil, &typ, v); err != nil {
					t.Fatalf("lowerFlat: %v", err)
				}
			}
			got, err := liftResult(g.memory(), &typ, flat)
			if err != nil {
				t.Fatalf("liftResult: %v", err)
			}
			if diff := cmp.Diff(v, got, bitsOpts()); diff != "" {
				t.Fatalf("liftResult (-want +got):\n%s", diff)
			}
		})
	})
}
