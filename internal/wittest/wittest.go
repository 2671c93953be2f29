package wittest

import (
	"math"
	"strconv"
	"unicode/utf8"

	"pgregory.net/rapid"

	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// The one NaN of each float type that Gen.CanonicalNaN draws: the quiet NaN
// the canonical ABI lifts every NaN to.
const (
	NaN32 uint32 = 0x7fc00000
	NaN64 uint64 = 0x7ff8000000000000
)

// BigCases is the case count of the large enums and variants Gen.Big
// draws: one past what a u8 discriminant holds.
const BigCases = 257

// Gen draws valid types and well-typed values. The zero Gen draws small
// types only and any float, NaNs included.
type Gen struct {
	// Big lets one enum or variant of a type have BigCases cases (a u16
	// discriminant), at most once per Gen, so that a type stays within
	// refhost.MaxTypeNodes.
	Big bool
	// CanonicalNaN draws NaNs only as NaN32 and NaN64 (and draws them more
	// often than rapid would).
	CanonicalNaN bool

	bigUsed bool
}

// names draws 1-4 distinct member names.
func names(t *rapid.T, label string) []string {
	return rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"a", "b", "id", "max-len", "HTTP", "x2", "some", "ok", "err"}), 1, 4, rapid.ID).Draw(t, label)
}

// Type draws a valid type of at most depth levels: every kind, options of
// options, variants with and without payloads, results with each side
// present or absent.
func (g *Gen) Type(t *rapid.T, depth int) refhost.Type {
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
	sub := func() refhost.Type { return g.Type(t, depth-1) }
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
		ns := names(t, "fields")
		fs := make([]refhost.Field, len(ns))
		for i, n := range ns {
			fs[i] = refhost.Field{Name: n, Type: sub()}
		}
		return refhost.Record(fs...)
	case refhost.KindEnum:
		if g.bigOnce(t) {
			return BigEnum()
		}
		return refhost.Enum(names(t, "enum")...)
	case refhost.KindVariant:
		var cs []refhost.Case
		if g.bigOnce(t) {
			cs = BigEnum().Cases
			for _, i := range []int{0, rapid.IntRange(1, BigCases-1).Draw(t, "big-case")} {
				cs[i].Payload = opt()
			}
		} else {
			for _, n := range names(t, "cases") {
				cs = append(cs, refhost.Case{Name: n, Payload: opt()})
			}
		}
		return refhost.Variant(cs...)
	case refhost.KindResult:
		return refhost.Result(opt(), opt())
	}
	return refhost.Type{Kind: k}
}

// bigOnce draws whether this enum or variant has BigCases cases.
func (g *Gen) bigOnce(t *rapid.T) bool {
	if !g.Big || g.bigUsed || rapid.IntRange(0, 15).Draw(t, "big") != 0 {
		return false
	}
	g.bigUsed = true
	return true
}

// BigEnum is an enum of BigCases cases named c0, c1, ...
func BigEnum() refhost.Type {
	ns := make([]string, BigCases)
	for i := range ns {
		ns[i] = "c" + strconv.Itoa(i)
	}
	return refhost.Enum(ns...)
}

// Value draws a Go value of typ, as refhost's decoder returns it.
func (g *Gen) Value(t *rapid.T, typ *refhost.Type) any {
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
		if g.CanonicalNaN && (f != f || rapid.IntRange(0, 15).Draw(t, "nan") == 0) {
			f = math.Float32frombits(NaN32)
		}
		return f
	case refhost.KindF64:
		f := rapid.Float64().Draw(t, "f64")
		if g.CanonicalNaN && (f != f || rapid.IntRange(0, 15).Draw(t, "nan") == 0) {
			f = math.Float64frombits(NaN64)
		}
		return f
	case refhost.KindChar:
		return rapid.Rune().Filter(utf8.ValidRune).Draw(t, "char")
	case refhost.KindString:
		return rapid.StringN(0, 8, -1).Filter(utf8.ValidString).Draw(t, "string")
	case refhost.KindList:
		l := make([]any, rapid.IntRange(0, 4).Draw(t, "len"))
		for i := range l {
			l[i] = g.Value(t, typ.Elem)
		}
		return l
	case refhost.KindTuple:
		l := make([]any, len(typ.Elems))
		for i := range l {
			l[i] = g.Value(t, &typ.Elems[i])
		}
		return l
	case refhost.KindRecord:
		m := make(map[string]any, len(typ.Fields))
		for i := range typ.Fields {
			m[typ.Fields[i].Name] = g.Value(t, &typ.Fields[i].Type)
		}
		return m
	case refhost.KindOption:
		if !rapid.Bool().Draw(t, "some") {
			return refhost.OptionValue{}
		}
		return refhost.Some(g.Value(t, typ.Elem))
	case refhost.KindEnum:
		return typ.Cases[rapid.IntRange(0, len(typ.Cases)-1).Draw(t, "case")].Name
	case refhost.KindVariant:
		c := typ.Cases[rapid.IntRange(0, len(typ.Cases)-1).Draw(t, "case")]
		if c.Payload == nil {
			return refhost.VariantValue{Case: c.Name}
		}
		return refhost.VariantValue{Case: c.Name, Value: g.Value(t, c.Payload)}
	case refhost.KindResult:
		isErr := rapid.Bool().Draw(t, "err")
		side := typ.Ok
		if isErr {
			side = typ.Err
		}
		if side == nil {
			return refhost.ResultValue{Err: isErr}
		}
		return refhost.ResultValue{Err: isErr, Value: g.Value(t, side)}
	}
	t.Fatalf("wittest: no value for kind %v", typ.Kind)
	return nil
}
