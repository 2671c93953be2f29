package wasmhost

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// fuzzTypes are the result types FuzzLift picks from: every kind, flat
// and behind a pointer, u8 and u16 discriminants, joined variants.
func fuzzTypes(t testing.TB) []refhost.Type {
	big := enumOf(257)
	bigVariant := enumOf(257)
	bigVariant.Kind = refhost.KindVariant
	payload := refhost.U8()
	bigVariant.Cases[256].Payload = &payload
	return append(mustTypes(t,
		"bool", "s8", "u16", "s32", "u64", "f32", "f64", "char",
		"string",
		"list<u8>",
		"list<string>",
		"tuple<u8, u64, char>",
		"record{a: bool, b: list<u32>, c: option<string>}",
		"option<u8>",
		"option<option<u64>>",
		"enum{a, b, c}",
		"variant{a, b(f32), c(u64)}",
		"variant{a(string), b(list<variant{x, y(char)}>)}",
		"result",
		"result<_, string>",
		"result<list<s16>, enum{e1, e2}>",
		"list<list<f64>>",
		"list<record{id: u32, tag: option<char>}>",
		"tuple<f32>",
		"record{x: enum{a, b}}",
	), big, bigVariant)
}

// fuzzInput encodes a FuzzLift input: the type's index, its flat values
// (8 bytes each, little-endian) and the memory.
func fuzzInput(typ byte, flat []uint64, mem []byte) []byte {
	b := []byte{typ}
	for _, v := range flat {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return append(b, mem...)
}

// FuzzLift lifts a result a guest could return. The first byte picks the
// type from fuzzTypes; then come as many flat values as the export's core
// signature returns (one pointer when the type flattens to more than
// maxFlatResults), 8 bytes each; the rest is the memory. Invariants: a
// refusal is a *LiftError matching ErrLiftRefused; an accepted value is
// well-typed by refhost's encoder (which may only find it too large for a
// payload), holds at most maxResultUnits, and lowered into a guest and
// lifted again gives itself back.
func FuzzLift(f *testing.F) {
	types := fuzzTypes(f)
	index := func(s string) byte {
		for i := range types {
			if types[i].String() == s {
				return byte(i)
			}
		}
		f.Fatalf("no fuzz type %q", s)
		return 0
	}
	f.Add(fuzzInput(index("u64"), []uint64{math.MaxUint64}, nil))
	f.Add(fuzzInput(index("char"), []uint64{0xD800}, nil))
	f.Add(fuzzInput(index("f32"), []uint64{0x7fa00001}, nil))
	f.Add(fuzzInput(index("enum{a, b, c}"), []uint64{3}, nil))
	f.Add(fuzzInput(index("string"), []uint64{0}, cat(le32(8), le32(4), []byte("a€"))))
	f.Add(fuzzInput(index("string"), []uint64{0}, cat(le32(8), le32(math.MaxUint32))))
	f.Add(fuzzInput(index("list<u8>"), []uint64{0}, cat(le32(8), le32(1<<20), pad(8))))
	f.Add(fuzzInput(index("list<string>"), []uint64{0}, cat(le32(8), le32(2), le32(24), le32(1), le32(25), le32(1), []byte("xy"))))
	f.Add(fuzzInput(index("tuple<u8, u64, char>"), []uint64{8}, cat(pad(8), []byte{1}, pad(7), le64(2), le32('z'), pad(4))))
	f.Add(fuzzInput(index("record{a: bool, b: list<u32>, c: option<string>}"), []uint64{0},
		cat([]byte{1}, pad(3), le32(24), le32(1), []byte{1}, pad(3), le32(28), le32(1), le32(7), []byte("q"))))
	f.Add(fuzzInput(index("option<option<u64>>"), []uint64{0}, cat([]byte{1}, pad(7), []byte{1}, pad(7), le64(5))))
	f.Add(fuzzInput(index("variant{a, b(f32), c(u64)}"), []uint64{0}, cat([]byte{2}, pad(7), le64(1<<60))))
	f.Add(fuzzInput(index("variant{a(string), b(list<variant{x, y(char)}>)}"), []uint64{0},
		cat([]byte{1}, pad(3), le32(12), le32(2), []byte{0}, pad(3), pad(4), []byte{1}, pad(3), le32('k'))))
	f.Add(fuzzInput(index("result<list<s16>, enum{e1, e2}>"), []uint64{0}, cat([]byte{1}, pad(3), []byte{1}, pad(7))))
	f.Add(fuzzInput(index("list<record{id: u32, tag: option<char>}>"), []uint64{0},
		cat(le32(8), le32(1), le32(9), []byte{1}, pad(3), le32(0x10FFFF))))
	f.Add(fuzzInput(byte(len(types)-1), []uint64{0}, cat(le16(256), []byte{7}, pad(1))))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		typ := &types[int(data[0])%len(types)]
		data = data[1:]
		flat := make([]uint64, min(flatCount(typ), maxFlatResults))
		for i := range flat {
			var b [8]byte
			data = data[copy(b[:], data):]
			flat[i] = binary.LittleEndian.Uint64(b[:])
		}
		mem := data
		v, err := liftResult(mem, typ, flat)
		if err != nil {
			var le *LiftError
			if !errors.As(err, &le) || !errors.Is(err, ErrLiftRefused) || strings.HasPrefix(le.Rule.String(), "Rule(") {
				t.Fatalf("liftResult error %v is not a *LiftError with a rule", err)
			}
			return
		}
		sig, err := refhost.NewSignature(*typ)
		if err != nil {
			t.Fatalf("NewSignature: %v", err)
		}
		if _, err := sig.Append(nil, []any{v}); err != nil && !errors.Is(err, refhost.RuleTooLarge) {
			t.Fatalf("lifted value is not well-typed: %v", err)
		}
		if n := units(typ, v); n > maxResultUnits {
			t.Fatalf("lifted value holds %d units", n)
		}
		// Lowered into a guest and lifted again, the value is itself.
		g := newFakeGuest(0)
		g.fixed = true
		l := lowerer{g: g, mem: g.memory()}
		var again []uint64
		if flatCount(typ) > maxFlatResults {
			lay := layoutOf(typ)
			ptr, err := l.alloc(lay.align, lay.size)
			if err == nil {
				err = l.store(uint64(ptr), typ, v)
			}
			if err != nil {
				t.Fatalf("store: %v", err)
			}
			again = []uint64{uint64(ptr)}
		} else if again, err = l.lowerFlat(nil, typ, v); err != nil {
			t.Fatalf("lowerFlat: %v", err)
		}
		got, err := liftResult(g.memory(), typ, again)
		if err != nil {
			t.Fatalf("lifting the lowered value: %v", err)
		}
		if diff := cmp.Diff(v, got, bitsOpts()); diff != "" {
			t.Fatalf("lift(lower(v)) (-want +got):\n%s", diff)
		}
	})
}

// units counts v, a well-typed value of t, as maxResultUnits does: one
// per value and one per byte of a string.
func units(t *refhost.Type, v any) int {
	switch t.Kind {
	case refhost.KindString:
		return 1 + len(v.(string))
	case refhost.KindList:
		n := 1
		for _, e := range v.([]any) {
			n += units(t.Elem, e)
		}
		return n
	case refhost.KindTuple:
		n := 1
		for i, e := range v.([]any) {
			n += units(&t.Elems[i], e)
		}
		return n
	case refhost.KindRecord:
		n := 1
		m := v.(map[string]any)
		for i := range t.Fields {
			n += units(&t.Fields[i].Type, m[t.Fields[i].Name])
		}
		return n
	case refhost.KindOption, refhost.KindVariant, refhost.KindResult:
		i, pv, _ := matchCase(t, v)
		if p := casePayload(t, i); p != nil {
			return 1 + units(p, pv)
		}
	}
	return 1
}
