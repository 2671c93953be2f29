package wasmhost

import (
	"encoding/binary"
	"math"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/api"

	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// Bounds of the canonical ABI on what a guest may hand out
// (MAX_STRING_BYTE_LENGTH and MAX_LIST_BYTE_LENGTH): a string or list
// longer in bytes is refused (RuleTooLarge) before anything else is
// checked.
const (
	maxStringBytes = 1<<28 - 1
	maxListBytes   = 1<<28 - 1
)

// The one NaN of each float type: lifting canonicalizes every NaN to it
// (the spec's canonicalize_nan32/64), and lowering writes it for every NaN,
// as the spec's deterministic profile does.
const (
	canonicalNaN32 = 0x7fc00000
	canonicalNaN64 = 0x7ff8000000000000
)

// liftResult lifts the export's returned core values (flat) into a
// refhost Go value of type result, reading mem as given (the memory at the
// call's return); result nil means the export returns nothing. When the
// result flattens to more than maxFlatResults, flat[0] is the i32 pointer
// to the result in memory. result must be a valid type.
//
// It is the spec's lift_flat_values for one result, as strict as a
// parser: every pointer and length is checked against mem, the total is
// bounded by 65,536 units, and a fault is a *LiftError, never a panic.
// The value holds no reference to mem.
func liftResult(mem []byte, result *refhost.Type, flat []uint64) (any, error) {
	l := lifter{mem: mem}
	if result == nil {
		if len(flat) != 0 {
			return nil, l.fail(RuleCoreValue)
		}
		return nil, nil
	}
	if flatCount(result) > maxFlatResults {
		if len(flat) != 1 {
			return nil, l.fail(RuleCoreValue)
		}
		it := flatIter{vals: flat, types: []api.ValueType{api.ValueTypeI32}}
		ptr, err := l.next(&it, api.ValueTypeI32)
		if err != nil {
			return nil, err
		}
		lay := l.layoutOf(result)
		if ptr%uint64(lay.align) != 0 {
			return nil, l.fail(RuleAlignment)
		}
		if ptr+uint64(lay.size) > uint64(len(mem)) {
			return nil, l.fail(RuleBounds)
		}
		return l.load(ptr, result)
	}
	var buf [maxFlatResults]api.ValueType
	it := flatIter{vals: flat, types: flatten(result, buf[:0])}
	if len(flat) != len(it.types) {
		return nil, l.fail(RuleCoreValue)
	}
	return l.liftFlat(&it, result)
}

// lifter is the state of one lifting: the memory, the units spent and the
// path to the value being lifted.
type lifter struct {
	mem   []byte
	units uint64
	path  path
	// layouts memoizes the layout of record, tuple and variant-like types,
	// so that the work per element of a list does not grow with the size
	// of the types the element does not use. Its size is bounded by the
	// type's, never by the guest.
	layouts map[*refhost.Type]layout
}

// fail returns the error for r at the current path.
func (l *lifter) fail(r Rule) error { return &LiftError{Path: l.path.String(), Rule: r} }

// push enters a step, refusing a type nested deeper than the path holds.
func (l *lifter) push(s step) error {
	if !l.path.push(s) {
		return l.fail(RuleTooLarge)
	}
	return nil
}

// count spends n units, refusing to go past 65,536 units.
func (l *lifter) count(n uint64) error {
	if n > maxResultUnits-l.units {
		return l.fail(RuleTooLarge)
	}
	l.units += n
	return nil
}

// layoutOf is layoutOf, memoized for composite types.
func (l *lifter) layoutOf(t *refhost.Type) layout {
	switch t.Kind {
	case refhost.KindTuple, refhost.KindRecord, refhost.KindOption, refhost.KindEnum,
		refhost.KindVariant, refhost.KindResult:
	default:
		return layoutOf(t)
	}
	if lay, ok := l.layouts[t]; ok {
		return lay
	}
	if l.layouts == nil {
		l.layouts = make(map[*refhost.Type]layout)
	}
	lay := layoutOf(t)
	l.layouts[t] = lay
	return lay
}

// flatIter reads flat core values; types are the core types of the slots
// (the flattening of the type being lifted, variants' joins included).
type flatIter struct {
	vals  []uint64
	types []api.ValueType
	pos   int
}

// next reads the next flat value as a want, in wazero's encoding: an i32
// or f32 is the low 32 bits of its uint64, whatever the upper bits hold
// (wazero leaves them undefined: a result it stores with a 4-byte write
// keeps the upper half of the stack slot an i64 parameter used, and
// api.DecodeU32 truncates). The spec's CoreValueIter.next only asserts
// how a 32-bit value is represented, so nothing is refused for it; only a
// wrong number of values is (RuleCoreValue). Reading an i32 or f32
// from an i64 slot keeps the low 32 bits: the spec's
// CoerceValueIter wraps (wrap_i64_to_i32) for a variant payload carried
// in a joined slot. Reading f32 from an i32 slot, or f64 from i64, keeps
// the bits (the spec's reinterpretation).
func (l *lifter) next(it *flatIter, want api.ValueType) (uint64, error) {
	if it.pos >= len(it.vals) || it.pos >= len(it.types) {
		return 0, l.fail(RuleCoreValue)
	}
	v, have := it.vals[it.pos], it.types[it.pos]
	it.pos++
	if have == api.ValueTypeI32 || have == api.ValueTypeF32 || want == api.ValueTypeI32 || want == api.ValueTypeF32 {
		v &= math.MaxUint32
	}
	return v, nil
}

// liftFlat is the spec's lift_flat: the value of t from it.
func (l *lifter) liftFlat(it *flatIter, t *refhost.Type) (any, error) {
	if err := l.count(1); err != nil {
		return nil, err
	}
	switch t.Kind {
	case refhost.KindS64, refhost.KindU64, refhost.KindF64:
		want := api.ValueTypeI64
		if t.Kind == refhost.KindF64 {
			want = api.ValueTypeF64
		}
		v, err := l.next(it, want)
		if err != nil {
			return nil, err
		}
		return l.scalar(t.Kind, v)
	case refhost.KindString, refhost.KindList:
		ptr, err := l.next(it, api.ValueTypeI32)
		if err != nil {
			return nil, err
		}
		n, err := l.next(it, api.ValueTypeI32)
		if err != nil {
			return nil, err
		}
		if t.Kind == refhost.KindString {
			return l.loadString(ptr, n)
		}
		return l.loadList(ptr, n, t.Elem)
	case refhost.KindTuple:
		out := make([]any, len(t.Elems))
		for i := range t.Elems {
			if err := l.push(step{index: uint64(i)}); err != nil {
				return nil, err
			}
			v, err := l.liftFlat(it, &t.Elems[i])
			if err != nil {
				return nil, err
			}
			l.path.pop()
			out[i] = v
		}
		return out, nil
	case refhost.KindRecord:
		out := make(map[string]any, len(t.Fields))
		for i := range t.Fields {
			f := &t.Fields[i]
			if err := l.push(step{name: f.Name}); err != nil {
				return nil, err
			}
			v, err := l.liftFlat(it, &f.Type)
			if err != nil {
				return nil, err
			}
			l.path.pop()
			out[f.Name] = v
		}
		return out, nil
	case refhost.KindOption, refhost.KindEnum, refhost.KindVariant, refhost.KindResult:
		return l.liftFlatVariant(it, t)
	}
	want := api.ValueTypeI32
	if t.Kind == refhost.KindF32 {
		want = api.ValueTypeF32
	}
	v, err := l.next(it, want)
	if err != nil {
		return nil, err
	}
	return l.scalar(t.Kind, v)
}

// liftFlatVariant is the spec's lift_flat_variant: the discriminant, the
// payload from the joined slots, then the slots the case does not use
// read and dropped.
func (l *lifter) liftFlatVariant(it *flatIter, t *refhost.Type) (any, error) {
	end := it.pos + flatCount(t)
	disc, err := l.next(it, api.ValueTypeI32)
	if err != nil {
		return nil, err
	}
	// trap_if(case_index >= len(cases)), on the whole i32.
	if disc >= uint64(caseCount(t)) {
		return nil, l.fail(RuleDiscriminant)
	}
	i := int(disc)
	var v any
	if p := casePayload(t, i); p != nil {
		if err := l.push(step{name: caseName(t, i)}); err != nil {
			return nil, err
		}
		if v, err = l.liftFlat(it, p); err != nil {
			return nil, err
		}
		l.path.pop()
	}
	for it.pos < end { // read as i64: dropped, and checked against its slot's type by next
		if _, err := l.next(it, api.ValueTypeI64); err != nil {
			return nil, err
		}
	}
	return caseValue(t, i, v), nil
}

// scalar converts the core value v, read as the kind's core type, to the
// Go value of kind k (a scalar other than string). As the spec's
// lift_flat_unsigned/lift_flat_signed and load_int, a type narrower than
// its i32 keeps only its own low bits; bool is true for any nonzero
// value (convert_int_to_bool).
func (l *lifter) scalar(k refhost.Kind, v uint64) (any, error) {
	switch k {
	case refhost.KindBool:
		return v != 0, nil
	case refhost.KindS8:
		return int8(v), nil
	case refhost.KindU8:
		return uint8(v), nil
	case refhost.KindS16:
		return int16(v), nil
	case refhost.KindU16:
		return uint16(v), nil
	case refhost.KindS32:
		return int32(v), nil
	case refhost.KindU32:
		return uint32(v), nil
	case refhost.KindS64:
		return int64(v), nil
	case refhost.KindU64:
		return v, nil
	case refhost.KindF32:
		f := math.Float32frombits(uint32(v))
		if f != f {
			f = math.Float32frombits(canonicalNaN32)
		}
		return f, nil
	case refhost.KindF64:
		f := math.Float64frombits(v)
		if f != f {
			f = math.Float64frombits(canonicalNaN64)
		}
		return f, nil
	}
	// KindChar: convert_i32_to_char traps on i >= 0x110000 and on
	// 0xD800 <= i <= 0xDFFF.
	if v >= 0x110000 || (v >= 0xD800 && v <= 0xDFFF) {
		return nil, l.fail(RuleInvalidChar)
	}
	return rune(v), nil
}

// read returns the n bytes at ptr, refusing a range past the memory.
func (l *lifter) read(ptr, n uint64) ([]byte, error) {
	if ptr+n > uint64(len(l.mem)) || ptr+n < ptr {
		return nil, l.fail(RuleBounds)
	}
	return l.mem[ptr : ptr+n], nil
}

// readUint reads the n-byte (1, 2, 4 or 8) little-endian integer at ptr.
func (l *lifter) readUint(ptr, n uint64) (uint64, error) {
	b, err := l.read(ptr, n)
	if err != nil {
		return 0, err
	}
	switch n {
	case 1:
		return uint64(b[0]), nil
	case 2:
		return uint64(binary.LittleEndian.Uint16(b)), nil
	case 4:
		return uint64(binary.LittleEndian.Uint32(b)), nil
	}
	return binary.LittleEndian.Uint64(b), nil
}

// load is the spec's load: the value of t at ptr, which the caller has
// checked to be aligned and in bounds (every read checks its bytes
// again).
func (l *lifter) load(ptr uint64, t *refhost.Type) (any, error) {
	if err := l.count(1); err != nil {
		return nil, err
	}
	switch t.Kind {
	case refhost.KindString, refhost.KindList:
		begin, err := l.readUint(ptr, ptrSize)
		if err != nil {
			return nil, err
		}
		n, err := l.readUint(ptr+ptrSize, ptrSize)
		if err != nil {
			return nil, err
		}
		if t.Kind == refhost.KindString {
			return l.loadString(begin, n)
		}
		return l.loadList(begin, n, t.Elem)
	case refhost.KindTuple:
		out := make([]any, len(t.Elems))
		var off uint32
		for i := range t.Elems {
			e := &t.Elems[i]
			lay := l.layoutOf(e)
			off = alignTo(off, lay.align)
			if err := l.push(step{index: uint64(i)}); err != nil {
				return nil, err
			}
			v, err := l.load(ptr+uint64(off), e)
			if err != nil {
				return nil, err
			}
			l.path.pop()
			out[i] = v
			off += lay.size
		}
		return out, nil
	case refhost.KindRecord:
		out := make(map[string]any, len(t.Fields))
		var off uint32
		for i := range t.Fields {
			f := &t.Fields[i]
			lay := l.layoutOf(&f.Type)
			off = alignTo(off, lay.align)
			if err := l.push(step{name: f.Name}); err != nil {
				return nil, err
			}
			v, err := l.load(ptr+uint64(off), &f.Type)
			if err != nil {
				return nil, err
			}
			l.path.pop()
			out[f.Name] = v
			off += lay.size
		}
		return out, nil
	case refhost.KindOption, refhost.KindEnum, refhost.KindVariant, refhost.KindResult:
		return l.loadVariant(ptr, t)
	}
	lay := layoutOf(t)
	v, err := l.readUint(ptr, uint64(lay.size))
	if err != nil {
		return nil, err
	}
	return l.scalar(t.Kind, v)
}

// loadVariant is the spec's load_variant.
func (l *lifter) loadVariant(ptr uint64, t *refhost.Type) (any, error) {
	n := caseCount(t)
	disc, err := l.readUint(ptr, uint64(discSize(n)))
	if err != nil {
		return nil, err
	}
	if disc >= uint64(n) {
		return nil, l.fail(RuleDiscriminant)
	}
	i := int(disc)
	var v any
	if p := casePayload(t, i); p != nil {
		if err := l.push(step{name: caseName(t, i)}); err != nil {
			return nil, err
		}
		if v, err = l.load(ptr+uint64(l.layoutOf(t).payload), p); err != nil {
			return nil, err
		}
		l.path.pop()
	}
	return caseValue(t, i, v), nil
}

// loadString is the spec's load_string_from_range for utf8 (alignment
// 1): n bytes at ptr. The string's own unit is already counted; each byte
// counts one more.
func (l *lifter) loadString(ptr, n uint64) (any, error) {
	if n > maxStringBytes {
		return nil, l.fail(RuleTooLarge)
	}
	if err := l.count(n); err != nil {
		return nil, err
	}
	b, err := l.read(ptr, n)
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(b) {
		return nil, l.fail(RuleInvalidUTF8)
	}
	return string(b), nil
}

// loadList is the spec's load_list_from_range: n elements of elem at ptr.
// The checks follow the spec's order (byte length, alignment, bounds),
// with 65,536 units checked after the byte length: each element will
// count at least one unit, so n must fit in the units left before the
// element slice is allocated. As in the spec, an empty list's pointer is
// checked too.
func (l *lifter) loadList(ptr, n uint64, elem *refhost.Type) (any, error) {
	lay := l.layoutOf(elem)
	size := uint64(lay.size)
	if n*size > maxListBytes { // n < 2^32 and size < 2^28: no overflow
		return nil, l.fail(RuleTooLarge)
	}
	if n > maxResultUnits-l.units {
		return nil, l.fail(RuleTooLarge)
	}
	if ptr%uint64(lay.align) != 0 {
		return nil, l.fail(RuleAlignment)
	}
	if ptr+n*size > uint64(len(l.mem)) {
		return nil, l.fail(RuleBounds)
	}
	out := make([]any, n)
	for i := range n {
		if err := l.push(step{index: i}); err != nil {
			return nil, err
		}
		v, err := l.load(ptr+i*size, elem)
		if err != nil {
			return nil, err
		}
		l.path.pop()
		out[i] = v
	}
	return out, nil
}

// caseValue is the Go value of case i of a variant-like t with payload v.
func caseValue(t *refhost.Type, i int, v any) any {
	switch t.Kind {
	case refhost.KindOption:
		if i == 0 {
			return refhost.OptionValue{}
		}
		return refhost.OptionValue{Some: true, Value: v}
	case refhost.KindEnum:
		return t.Cases[i].Name
	case refhost.KindResult:
		return refhost.ResultValue{Err: i == 1, Value: v}
	}
	return refhost.VariantValue{Case: t.Cases[i].Name, Value: v}
}
