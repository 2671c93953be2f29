package wasmhost

import (
	"encoding/binary"
	"math"
	"unicode/utf8"

	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// guestABI is what lowering needs of an instance.
type guestABI interface {
	// memory returns the instance's linear memory as it is now; the slice
	// is valid only until the next realloc.
	memory() []byte
	// realloc calls the guest's cabi_realloc(0, 0, align, size) and
	// returns what it returned, unchecked.
	realloc(align, size uint32) (uint32, error)
}

// lowerArgs lowers args (one refhost Go value per param, as refhost's
// decoder returns them) into the flat core arguments of the export, in
// wazero's encoding (i32 as uint64(uint32(x)), f32 as api.EncodeF32, f64
// as api.EncodeF64). Strings and lists, and the whole argument tuple when
// the flat count exceeds maxFlatParams, are written into guest memory
// through g.realloc. params must be valid types.
//
// It is the spec's lower_flat_values for a call into the guest. Every
// pointer realloc returns is checked (aligned as asked, its block inside
// the memory) before a byte is written, and the memory is fetched again
// after every realloc. A fault is a *LowerError; bytes already written
// into the guest stay there.
func lowerArgs(g guestABI, params []refhost.Type, args []any) ([]uint64, error) {
	l := lowerer{g: g, mem: g.memory()}
	if len(args) != len(params) {
		return nil, l.fail(RuleWrongType)
	}
	// The arguments are a tuple: argument i is at path "[i]".
	tuple := refhost.Type{Kind: refhost.KindTuple, Elems: params}
	n := flatCount(&tuple)
	if n > maxFlatParams {
		lay := layoutOf(&tuple)
		ptr, err := l.alloc(lay.align, lay.size)
		if err != nil {
			return nil, err
		}
		if err := l.store(uint64(ptr), &tuple, args); err != nil {
			return nil, err
		}
		return []uint64{uint64(ptr)}, nil
	}
	return l.lowerFlat(make([]uint64, 0, n), &tuple, args)
}

// lowerer is the state of one lowering: the guest, its memory as of the
// last realloc and the path to the value being lowered.
type lowerer struct {
	g    guestABI
	mem  []byte
	path path
}

// fail returns the error for r at the current path.
func (l *lowerer) fail(r Rule) error { return &LowerError{Path: l.path.String(), Rule: r} }

// push enters a step, refusing a type nested deeper than the path holds.
func (l *lowerer) push(s step) error {
	if !l.path.push(s) {
		return l.fail(RuleTooLarge)
	}
	return nil
}

// alloc is the spec's allocate followed by its two traps: it calls
// realloc(align, size), fetches the memory again, and refuses a pointer
// that is not a multiple of align, or whose block ends past the memory
// (in uint64, so a pointer near 2^32 cannot wrap around).
func (l *lowerer) alloc(align, size uint32) (uint32, error) {
	ptr, err := l.g.realloc(align, size)
	l.mem = l.g.memory()
	if err != nil {
		return 0, &LowerError{Path: l.path.String(), Rule: RuleReallocFailed, Err: err}
	}
	if ptr%align != 0 {
		return 0, l.fail(RuleAlignment)
	}
	if uint64(ptr)+uint64(size) > uint64(len(l.mem)) {
		return 0, l.fail(RuleBounds)
	}
	return ptr, nil
}

// span returns the n bytes at ptr for writing. They lie in a block alloc
// checked; a memory that has shrunk since (which a WebAssembly memory
// never does) is refused rather than written past.
func (l *lowerer) span(ptr, n uint64) ([]byte, error) {
	if ptr+n > uint64(len(l.mem)) {
		return nil, l.fail(RuleBounds)
	}
	return l.mem[ptr : ptr+n], nil
}

// putUint writes v as an n-byte (1, 2, 4 or 8) little-endian integer.
func (l *lowerer) putUint(ptr, n, v uint64) error {
	b, err := l.span(ptr, n)
	if err != nil {
		return err
	}
	switch n {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
	return nil
}

// scalar returns the core value of v, a scalar of kind k other than
// string, in wazero's encoding: the spec's lower_flat, where signed
// integers are two's complement in their i32 or i64, a char is its code
// point and a NaN is the canonical NaN. ok is false when v is not of k's
// Go type, or a rune that is not a Unicode scalar value.
func scalar(k refhost.Kind, v any) (bits uint64, ok bool) {
	switch k {
	case refhost.KindBool:
		var b bool
		if b, ok = v.(bool); ok && b {
			bits = 1
		}
	case refhost.KindS8:
		var n int8
		n, ok = v.(int8)
		bits = uint64(uint32(int32(n)))
	case refhost.KindU8:
		var n uint8
		n, ok = v.(uint8)
		bits = uint64(n)
	case refhost.KindS16:
		var n int16
		n, ok = v.(int16)
		bits = uint64(uint32(int32(n)))
	case refhost.KindU16:
		var n uint16
		n, ok = v.(uint16)
		bits = uint64(n)
	case refhost.KindS32:
		var n int32
		n, ok = v.(int32)
		bits = uint64(uint32(n))
	case refhost.KindU32:
		var n uint32
		n, ok = v.(uint32)
		bits = uint64(n)
	case refhost.KindS64:
		var n int64
		n, ok = v.(int64)
		bits = uint64(n)
	case refhost.KindU64:
		bits, ok = v.(uint64)
	case refhost.KindF32:
		var f float32
		f, ok = v.(float32)
		bits = uint64(math.Float32bits(f))
		if f != f {
			bits = canonicalNaN32
		}
	case refhost.KindF64:
		var f float64
		f, ok = v.(float64)
		bits = math.Float64bits(f)
		if f != f {
			bits = canonicalNaN64
		}
	case refhost.KindChar:
		var r rune
		r, ok = v.(rune)
		ok = ok && utf8.ValidRune(r)
		bits = uint64(uint32(r))
	}
	return bits, ok
}

// lowerFlat is the spec's lower_flat: it appends the flat core values of
// v, a value of t, to dst.
func (l *lowerer) lowerFlat(dst []uint64, t *refhost.Type, v any) ([]uint64, error) {
	switch t.Kind {
	case refhost.KindString:
		s, ok := v.(string)
		if !ok {
			return nil, l.fail(RuleWrongType)
		}
		ptr, n, err := l.storeString(s)
		if err != nil {
			return nil, err
		}
		return append(dst, uint64(ptr), uint64(n)), nil
	case refhost.KindList:
		vs, ok := v.([]any)
		if !ok {
			return nil, l.fail(RuleWrongType)
		}
		ptr, n, err := l.storeList(t.Elem, vs)
		if err != nil {
			return nil, err
		}
		return append(dst, uint64(ptr), uint64(n)), nil
	case refhost.KindTuple, refhost.KindRecord:
		get, ok := members(t, v)
		if !ok {
			return nil, l.fail(RuleWrongType)
		}
		for i := range memberCount(t) {
			if err := l.push(memberStep(t, i)); err != nil {
				return nil, err
			}
			var err error
			if dst, err = l.lowerFlat(dst, member(t, i), get(i)); err != nil {
				return nil, err
			}
			l.path.pop()
		}
		return dst, nil
	case refhost.KindOption, refhost.KindEnum, refhost.KindVariant, refhost.KindResult:
		// lower_flat_variant: the payload's own flat values are already
		// in the joined slots' encoding (wazero zero-extends i32 and f32
		// into uint64), so the spec's coercions leave their bits as they
		// are; the slots the case does not use are zero.
		i, pv, ok := matchCase(t, v)
		if !ok {
			return nil, l.fail(RuleWrongType)
		}
		end := len(dst) + flatCount(t)
		dst = append(dst, uint64(i))
		if p := casePayload(t, i); p != nil {
			if err := l.push(step{name: caseName(t, i)}); err != nil {
				return nil, err
			}
			var err error
			if dst, err = l.lowerFlat(dst, p, pv); err != nil {
				return nil, err
			}
			l.path.pop()
		}
		for len(dst) < end {
			dst = append(dst, 0)
		}
		return dst, nil
	}
	bits, ok := scalar(t.Kind, v)
	if !ok {
		return nil, l.fail(RuleWrongType)
	}
	return append(dst, bits), nil
}

// store is the spec's store: it writes v, a value of t, at ptr, which
// lies in a block alloc checked for t.
func (l *lowerer) store(ptr uint64, t *refhost.Type, v any) error {
	switch t.Kind {
	case refhost.KindString, refhost.KindList:
		var begin, n uint32
		var err error
		if t.Kind == refhost.KindString {
			s, ok := v.(string)
			if !ok {
				return l.fail(RuleWrongType)
			}
			begin, n, err = l.storeString(s)
		} else {
			vs, ok := v.([]any)
			if !ok {
				return l.fail(RuleWrongType)
			}
			begin, n, err = l.storeList(t.Elem, vs)
		}
		if err != nil {
			return err
		}
		if err := l.putUint(ptr, ptrSize, uint64(begin)); err != nil {
			return err
		}
		return l.putUint(ptr+ptrSize, ptrSize, uint64(n))
	case refhost.KindTuple, refhost.KindRecord:
		get, ok := members(t, v)
		if !ok {
			return l.fail(RuleWrongType)
		}
		var off uint32
		for i := range memberCount(t) {
			m := member(t, i)
			lay := layoutOf(m)
			off = alignTo(off, lay.align)
			if err := l.push(memberStep(t, i)); err != nil {
				return err
			}
			if err := l.store(ptr+uint64(off), m, get(i)); err != nil {
				return err
			}
			l.path.pop()
			off += lay.size
		}
		return nil
	case refhost.KindOption, refhost.KindEnum, refhost.KindVariant, refhost.KindResult:
		i, pv, ok := matchCase(t, v)
		if !ok {
			return l.fail(RuleWrongType)
		}
		if err := l.putUint(ptr, uint64(discSize(caseCount(t))), uint64(i)); err != nil {
			return err
		}
		p := casePayload(t, i)
		if p == nil {
			return nil
		}
		if err := l.push(step{name: caseName(t, i)}); err != nil {
			return err
		}
		if err := l.store(ptr+uint64(layoutOf(t).payload), p, pv); err != nil {
			return err
		}
		l.path.pop()
		return nil
	}
	bits, ok := scalar(t.Kind, v)
	if !ok {
		return l.fail(RuleWrongType)
	}
	return l.putUint(ptr, uint64(layoutOf(t).size), bits)
}

// storeString is the spec's store_string_copy from utf8 to utf8: it
// allocates len(s) bytes at alignment 1 (even for an empty string, as the
// spec does) and copies s there.
func (l *lowerer) storeString(s string) (ptr, n uint32, err error) {
	if !utf8.ValidString(s) {
		return 0, 0, l.fail(RuleWrongType)
	}
	if uint64(len(s)) > math.MaxUint32 { // the spec's REALLOC_I32_MAX
		return 0, 0, l.fail(RuleTooLarge)
	}
	if ptr, err = l.alloc(1, uint32(len(s))); err != nil {
		return 0, 0, err
	}
	b, err := l.span(uint64(ptr), uint64(len(s)))
	if err != nil {
		return 0, 0, err
	}
	copy(b, s)
	return ptr, uint32(len(s)), nil
}

// storeList is the spec's store_list_into_range: it allocates the
// elements' bytes at the element's alignment (even for an empty list) and
// stores each element.
func (l *lowerer) storeList(elem *refhost.Type, vs []any) (ptr, n uint32, err error) {
	lay := layoutOf(elem)
	size := uint64(len(vs)) * uint64(lay.size)
	if size > math.MaxUint32 { // the spec's REALLOC_I32_MAX
		return 0, 0, l.fail(RuleTooLarge)
	}
	if ptr, err = l.alloc(lay.align, uint32(size)); err != nil {
		return 0, 0, err
	}
	for i, v := range vs {
		if err := l.push(step{index: uint64(i)}); err != nil {
			return 0, 0, err
		}
		if err := l.store(uint64(ptr)+uint64(i)*uint64(lay.size), elem, v); err != nil {
			return 0, 0, err
		}
		l.path.pop()
	}
	return ptr, uint32(len(vs)), nil
}

// members returns the member values of v, a tuple ([]any of one value
// per member) or a record (map[string]any of exactly its fields), by
// member index; ok is false when v is not of that shape.
func members(t *refhost.Type, v any) (get func(int) any, ok bool) {
	if t.Kind == refhost.KindTuple {
		vs, ok := v.([]any)
		if !ok || len(vs) != len(t.Elems) {
			return nil, false
		}
		return func(i int) any { return vs[i] }, true
	}
	m, ok := v.(map[string]any)
	if !ok || len(m) != len(t.Fields) {
		return nil, false
	}
	for _, f := range t.Fields {
		if _, ok := m[f.Name]; !ok {
			return nil, false
		}
	}
	return func(i int) any { return m[t.Fields[i].Name] }, true
}

// memberStep is the path step of member i of a tuple or record.
func memberStep(t *refhost.Type, i int) step {
	if t.Kind == refhost.KindTuple {
		return step{index: uint64(i)}
	}
	return step{name: t.Fields[i].Name}
}

// matchCase is the spec's match_case: the index of v's case in t, a
// variant-like type, and its payload value; ok is false when v is not of
// t's Go type, names no case of t, or has a payload its case lacks.
func matchCase(t *refhost.Type, v any) (i int, payload any, ok bool) {
	switch t.Kind {
	case refhost.KindOption:
		o, ok := v.(refhost.OptionValue)
		if !ok || (!o.Some && o.Value != nil) {
			return 0, nil, false
		}
		if !o.Some {
			return 0, nil, true
		}
		return 1, o.Value, true
	case refhost.KindResult:
		r, ok := v.(refhost.ResultValue)
		if !ok {
			return 0, nil, false
		}
		if r.Err {
			i = 1
		}
		if casePayload(t, i) == nil && r.Value != nil {
			return 0, nil, false
		}
		return i, r.Value, true
	case refhost.KindEnum:
		s, ok := v.(string)
		if !ok {
			return 0, nil, false
		}
		for i, c := range t.Cases {
			if c.Name == s {
				return i, nil, true
			}
		}
		return 0, nil, false
	}
	c, ok := v.(refhost.VariantValue)
	if !ok {
		return 0, nil, false
	}
	for i, tc := range t.Cases {
		if tc.Name == c.Case {
			if tc.Payload == nil && c.Value != nil {
				return 0, nil, false
			}
			return i, c.Value, true
		}
	}
	return 0, nil, false
}
