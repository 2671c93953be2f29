package wasmhost

import (
	"github.com/tetratelabs/wazero/api"

	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// The layout of refhost types in the WebAssembly Component Model's
// canonical ABI (design/mvp/CanonicalABI.md, sections "Alignment",
// "Element Size" and "Flattening"), for a 32-bit memory and the utf8
// string encoding. Tuples are laid out as records; enums, options and
// results as variants (the spec's despecialize): option is
// variant{none, some(T)}, result is variant{ok(T), error(E)}.
//
// Every function here takes a valid type (refhost.Type.Validate): its
// recursion follows the type and is bounded by refhost.MaxTypeDepth, and
// refhost.MaxTypeNodes keeps every size far below 2^28, the spec's bound
// on elem_size, so uint32 arithmetic cannot overflow.

// Limits of the core signature (the spec's MAX_FLAT_PARAMS and
// MAX_FLAT_RESULTS): beyond them, parameters or results pass through
// linear memory behind one i32 pointer.
const (
	maxFlatParams  = 16
	maxFlatResults = 1
)

// ptrSize is the size of a pointer and of a length in a 32-bit memory.
const ptrSize = 4

// layout is the size and alignment of a type in linear memory and, for a
// variant-like type, the offset of its payload.
type layout struct {
	size, align uint32
	// payload is the offset of the case payload from the start of a
	// variant, enum, option or result; 0 for other kinds.
	payload uint32
}

// layoutOf computes the layout of t.
func layoutOf(t *refhost.Type) layout {
	switch t.Kind {
	case refhost.KindBool, refhost.KindS8, refhost.KindU8:
		return layout{size: 1, align: 1}
	case refhost.KindS16, refhost.KindU16:
		return layout{size: 2, align: 2}
	case refhost.KindS32, refhost.KindU32, refhost.KindF32, refhost.KindChar:
		return layout{size: 4, align: 4}
	case refhost.KindS64, refhost.KindU64, refhost.KindF64:
		return layout{size: 8, align: 8}
	case refhost.KindString, refhost.KindList:
		return layout{size: 2 * ptrSize, align: ptrSize}
	case refhost.KindTuple, refhost.KindRecord:
		// elem_size_record and alignment_record.
		var size uint32
		align := uint32(1)
		for i := range memberCount(t) {
			m := layoutOf(member(t, i))
			size = alignTo(size, m.align) + m.size
			align = max(align, m.align)
		}
		return layout{size: alignTo(size, align), align: align}
	}
	// elem_size_variant and alignment_variant.
	n := caseCount(t)
	disc := discSize(n)
	caseAlign := uint32(1)
	var caseSize uint32
	for i := range n {
		if p := casePayload(t, i); p != nil {
			c := layoutOf(p)
			caseAlign = max(caseAlign, c.align)
			caseSize = max(caseSize, c.size)
		}
	}
	align := max(disc, caseAlign)
	payload := alignTo(disc, caseAlign)
	return layout{size: alignTo(payload+caseSize, align), align: align, payload: payload}
}

// alignTo rounds x up to a multiple of align, a power of two.
func alignTo(x, align uint32) uint32 { return (x + align - 1) &^ (align - 1) }

// discSize is the size (and alignment) of the discriminant of a variant
// of n cases, the spec's discriminant_type: u8 up to 256 cases, u16 up to
// 65,536, u32 beyond.
func discSize(n int) uint32 {
	switch {
	case n <= 1<<8:
		return 1
	case n <= 1<<16:
		return 2
	}
	return 4
}

// flatten appends the flat core types of t to dst (the spec's
// flatten_type; a variant's payload slots are the join of its cases').
func flatten(t *refhost.Type, dst []api.ValueType) []api.ValueType {
	switch t.Kind {
	case refhost.KindBool, refhost.KindS8, refhost.KindU8, refhost.KindS16, refhost.KindU16,
		refhost.KindS32, refhost.KindU32, refhost.KindChar:
		return append(dst, api.ValueTypeI32)
	case refhost.KindS64, refhost.KindU64:
		return append(dst, api.ValueTypeI64)
	case refhost.KindF32:
		return append(dst, api.ValueTypeF32)
	case refhost.KindF64:
		return append(dst, api.ValueTypeF64)
	case refhost.KindString, refhost.KindList:
		return append(dst, api.ValueTypeI32, api.ValueTypeI32)
	case refhost.KindTuple, refhost.KindRecord:
		for i := range memberCount(t) {
			dst = flatten(member(t, i), dst)
		}
		return dst
	}
	// flatten_variant: the discriminant, then the joined payload slots,
	// dst[start:start+width]. Each case is flattened after them and
	// folded in place, so no scratch slice is needed.
	dst = append(dst, api.ValueTypeI32)
	start, width := len(dst), 0
	for i := range caseCount(t) {
		p := casePayload(t, i)
		if p == nil {
			continue
		}
		mark := len(dst) // == start+width
		dst = flatten(p, dst)
		for j, ft := range dst[mark:] {
			if j < width {
				dst[start+j] = join(dst[start+j], ft)
			} else {
				dst[start+j] = ft // moves left over an entry already read
			}
		}
		width = max(width, len(dst)-mark)
		dst = dst[:start+width]
	}
	return dst
}

// join is the spec's join: the core type both a and b can be carried in.
func join(a, b api.ValueType) api.ValueType {
	switch {
	case a == b:
		return a
	case a == api.ValueTypeI32 && b == api.ValueTypeF32, a == api.ValueTypeF32 && b == api.ValueTypeI32:
		return api.ValueTypeI32
	}
	return api.ValueTypeI64
}

// flatCount is len(flatten(t, nil)), without allocating.
func flatCount(t *refhost.Type) int {
	switch t.Kind {
	case refhost.KindString, refhost.KindList:
		return 2
	case refhost.KindTuple, refhost.KindRecord:
		n := 0
		for i := range memberCount(t) {
			n += flatCount(member(t, i))
		}
		return n
	case refhost.KindOption, refhost.KindEnum, refhost.KindVariant, refhost.KindResult:
		w := 0
		for i := range caseCount(t) {
			if p := casePayload(t, i); p != nil {
				w = max(w, flatCount(p))
			}
		}
		return 1 + w
	}
	return 1
}

// coreSignature is the core type of an export lifted as
// func(params...) -> result (result nil: no result), the spec's
// flatten_functype in the 'lift' context: params flattened, or one i32
// pointer to them when more than maxFlatParams; results flattened, or one
// i32 (a pointer the callee returns) when more than maxFlatResults.
func coreSignature(params []refhost.Type, result *refhost.Type) (cparams, cresults []api.ValueType) {
	for i := range params {
		cparams = flatten(&params[i], cparams)
	}
	if len(cparams) > maxFlatParams {
		cparams = []api.ValueType{api.ValueTypeI32}
	}
	if result == nil {
		return cparams, nil
	}
	cresults = flatten(result, nil)
	if len(cresults) > maxFlatResults {
		cresults = []api.ValueType{api.ValueTypeI32}
	}
	return cparams, cresults
}

// memberCount is the number of members of a tuple or record.
func memberCount(t *refhost.Type) int {
	if t.Kind == refhost.KindTuple {
		return len(t.Elems)
	}
	return len(t.Fields)
}

// member is member i of a tuple or record.
func member(t *refhost.Type, i int) *refhost.Type {
	if t.Kind == refhost.KindTuple {
		return &t.Elems[i]
	}
	return &t.Fields[i].Type
}

// caseCount is the number of cases of a variant-like type: 2 for an
// option (none, some) and a result (ok, error).
func caseCount(t *refhost.Type) int {
	switch t.Kind {
	case refhost.KindOption, refhost.KindResult:
		return 2
	}
	return len(t.Cases)
}

// casePayload is the payload type of case i of a variant-like type, nil
// for a case without payload.
func casePayload(t *refhost.Type, i int) *refhost.Type {
	switch t.Kind {
	case refhost.KindOption:
		if i == 1 {
			return t.Elem
		}
		return nil
	case refhost.KindResult:
		if i == 0 {
			return t.Ok
		}
		return t.Err
	case refhost.KindVariant:
		return t.Cases[i].Payload
	}
	return nil
}

// caseName is the path step of case i's payload: "some", "ok", "err" or
// the variant's case name.
func caseName(t *refhost.Type, i int) string {
	switch t.Kind {
	case refhost.KindOption:
		return "some"
	case refhost.KindResult:
		if i == 0 {
			return "ok"
		}
		return "err"
	}
	return t.Cases[i].Name
}
