package refhost

import (
	"strconv"
	"strings"
)

// Kind is the kind of a Type.
type Kind uint8

// Kinds. The zero Kind is not a kind.
const (
	KindBool Kind = iota + 1
	KindS8
	KindS16
	KindS32
	KindS64
	KindU8
	KindU16
	KindU32
	KindU64
	KindF32
	KindF64
	KindChar
	KindString
	KindList
	KindTuple
	KindRecord
	KindOption
	KindEnum
	KindVariant
	KindResult
	kindEnd
)

// String returns the kind's WIT spelling ("bool", "u32", "list", ...), or
// "Kind(n)" outside the enumeration.
func (k Kind) String() string {
	switch k {
	case KindBool:
		return "bool"
	case KindS8:
		return "s8"
	case KindS16:
		return "s16"
	case KindS32:
		return "s32"
	case KindS64:
		return "s64"
	case KindU8:
		return "u8"
	case KindU16:
		return "u16"
	case KindU32:
		return "u32"
	case KindU64:
		return "u64"
	case KindF32:
		return "f32"
	case KindF64:
		return "f64"
	case KindChar:
		return "char"
	case KindString:
		return "string"
	case KindList:
		return "list"
	case KindTuple:
		return "tuple"
	case KindRecord:
		return "record"
	case KindOption:
		return "option"
	case KindEnum:
		return "enum"
	case KindVariant:
		return "variant"
	case KindResult:
		return "result"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Type describes one parameter type. Which parts are set depends on Kind;
// the others must be zero (Validate checks):
//
//	KindList, KindOption   Elem
//	KindTuple              Elems (at least one)
//	KindRecord             Fields (at least one)
//	KindEnum               Cases (at least one), each without Payload
//	KindVariant            Cases (at least one)
//	KindResult             Ok and Err, each nil for no payload
//
// A Type given to NewSignature is copied; later changes to it do not
// reach the signature.
type Type struct {
	Kind   Kind
	Elem   *Type
	Elems  []Type
	Fields []Field
	Cases  []Case
	Ok     *Type
	Err    *Type
}

// Field is one field of a record.
type Field struct {
	Name string
	Type Type
}

// Case is one case of an enum or variant; Payload is nil for a case
// without payload (and always nil in an enum).
type Case struct {
	Name    string
	Payload *Type
}

// Scalar type constructors.

// Bool returns the type bool.
func Bool() Type { return Type{Kind: KindBool} }

// S8 returns the type s8.
func S8() Type { return Type{Kind: KindS8} }

// S16 returns the type s16.
func S16() Type { return Type{Kind: KindS16} }

// S32 returns the type s32.
func S32() Type { return Type{Kind: KindS32} }

// S64 returns the type s64.
func S64() Type { return Type{Kind: KindS64} }

// U8 returns the type u8.
func U8() Type { return Type{Kind: KindU8} }

// U16 returns the type u16.
func U16() Type { return Type{Kind: KindU16} }

// U32 returns the type u32.
func U32() Type { return Type{Kind: KindU32} }

// U64 returns the type u64.
func U64() Type { return Type{Kind: KindU64} }

// F32 returns the type f32.
func F32() Type { return Type{Kind: KindF32} }

// F64 returns the type f64.
func F64() Type { return Type{Kind: KindF64} }

// Char returns the type char.
func Char() Type { return Type{Kind: KindChar} }

// String returns the type string.
func String() Type { return Type{Kind: KindString} }

// List returns list<elem>.
func List(elem Type) Type { return Type{Kind: KindList, Elem: &elem} }

// Option returns option<elem>.
func Option(elem Type) Type { return Type{Kind: KindOption, Elem: &elem} }

// Tuple returns tuple<elems...>.
func Tuple(elems ...Type) Type { return Type{Kind: KindTuple, Elems: elems} }

// Record returns record{fields...}.
func Record(fields ...Field) Type { return Type{Kind: KindRecord, Fields: fields} }

// Enum returns enum{names...}.
func Enum(names ...string) Type {
	cs := make([]Case, len(names))
	for i, n := range names {
		cs[i] = Case{Name: n}
	}
	return Type{Kind: KindEnum, Cases: cs}
}

// Variant returns variant{cases...}.
func Variant(cases ...Case) Type { return Type{Kind: KindVariant, Cases: cases} }

// Result returns result<ok, err>; nil means no payload on that side.
func Result(ok, err *Type) Type { return Type{Kind: KindResult, Ok: ok, Err: err} }

// String returns the type in the syntax ParseType reads, for instance
// "record{id: u64, tags: list<string>, kind: enum{a, b}}". A Type that
// does not validate still prints, with its faults visible.
func (t Type) String() string {
	var b strings.Builder
	t.write(&b, 0)
	return b.String()
}

// write prints t; depth stops a cyclic Type.
func (t *Type) write(b *strings.Builder, depth int) {
	if depth > MaxTypeDepth {
		b.WriteString("...")
		return
	}
	switch t.Kind {
	case KindList, KindOption:
		b.WriteString(t.Kind.String())
		b.WriteByte('<')
		writePart(b, t.Elem, depth)
		b.WriteByte('>')
	case KindTuple:
		b.WriteString("tuple<")
		for i := range t.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			t.Elems[i].write(b, depth+1)
		}
		b.WriteByte('>')
	case KindRecord:
		b.WriteString("record{")
		for i := range t.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(t.Fields[i].Name)
			b.WriteString(": ")
			t.Fields[i].Type.write(b, depth+1)
		}
		b.WriteByte('}')
	case KindEnum, KindVariant:
		b.WriteString(t.Kind.String())
		b.WriteByte('{')
		for i, c := range t.Cases {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.Name)
			if c.Payload != nil {
				b.WriteByte('(')
				c.Payload.write(b, depth+1)
				b.WriteByte(')')
			}
		}
		b.WriteByte('}')
	case KindResult:
		b.WriteString("result")
		switch {
		case t.Ok != nil && t.Err != nil:
			b.WriteByte('<')
			t.Ok.write(b, depth+1)
			b.WriteString(", ")
			t.Err.write(b, depth+1)
			b.WriteByte('>')
		case t.Ok != nil:
			b.WriteByte('<')
			t.Ok.write(b, depth+1)
			b.WriteByte('>')
		case t.Err != nil:
			b.WriteString("<_, ")
			t.Err.write(b, depth+1)
			b.WriteByte('>')
		}
	default:
		b.WriteString(t.Kind.String())
	}
}

// writePart prints a required part, "?" when it is missing.
func writePart(b *strings.Builder, t *Type, depth int) {
	if t == nil {
		b.WriteByte('?')
		return
	}
	t.write(b, depth+1)
}

// clone returns a deep copy of a validated t.
func (t *Type) clone() Type {
	c := Type{Kind: t.Kind}
	if t.Elem != nil {
		e := t.Elem.clone()
		c.Elem = &e
	}
	if t.Ok != nil {
		e := t.Ok.clone()
		c.Ok = &e
	}
	if t.Err != nil {
		e := t.Err.clone()
		c.Err = &e
	}
	if t.Elems != nil {
		c.Elems = make([]Type, len(t.Elems))
		for i := range t.Elems {
			c.Elems[i] = t.Elems[i].clone()
		}
	}
	if t.Fields != nil {
		c.Fields = make([]Field, len(t.Fields))
		for i, f := range t.Fields {
			c.Fields[i] = Field{Name: f.Name, Type: f.Type.clone()}
		}
	}
	if t.Cases != nil {
		c.Cases = make([]Case, len(t.Cases))
		for i, cs := range t.Cases {
			c.Cases[i] = Case{Name: cs.Name}
			if cs.Payload != nil {
				p := cs.Payload.clone()
				c.Cases[i].Payload = &p
			}
		}
	}
	return c
}
