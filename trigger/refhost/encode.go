package refhost

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Append appends the canonical encoding of args (one Go value per
// parameter, of the Go type the package documentation gives for its
// declared type) to dst. On error it returns dst unchanged and an
// *ArgumentError with Offset -1; an encoding longer than trigger.MaxPayloadBytes
// is refused (RuleTooLarge).
func (s *Signature) Append(dst []byte, args []any) ([]byte, error) {
	e := encoder{buf: dst, start: len(dst), arg: -1}
	if len(args) != len(s.params) {
		return dst, e.fail(RuleArgCount)
	}
	e.buf = append(e.buf, '[')
	for i := range s.params {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.arg = i
		if err := e.value(&s.params[i], args[i]); err != nil {
			return dst, err
		}
	}
	e.arg = -1
	e.buf = append(e.buf, ']')
	if err := e.size(); err != nil {
		return dst, err
	}
	return e.buf, nil
}

// encoder writes one argument array.
type encoder struct {
	buf   []byte
	start int
	arg   int
	path  []step
}

func (e *encoder) fail(r Rule) error {
	err := &ArgumentError{Arg: e.arg, Offset: -1, Rule: r}
	if e.arg >= 0 {
		err.Path = renderPath(e.path)
	}
	return err
}

// size refuses an encoding that has grown past trigger.MaxPayloadBytes.
func (e *encoder) size() error {
	if len(e.buf)-e.start > maxPayloadBytes {
		return e.fail(RuleTooLarge)
	}
	return nil
}

// value writes v as a value of t.
func (e *encoder) value(t *Type, v any) error {
	var ok bool
	switch t.Kind {
	case KindBool:
		var b bool
		if b, ok = v.(bool); ok {
			e.buf = strconv.AppendBool(e.buf, b)
		}
	case KindS8:
		var n int8
		if n, ok = v.(int8); ok {
			e.buf = strconv.AppendInt(e.buf, int64(n), 10)
		}
	case KindS16:
		var n int16
		if n, ok = v.(int16); ok {
			e.buf = strconv.AppendInt(e.buf, int64(n), 10)
		}
	case KindS32:
		var n int32
		if n, ok = v.(int32); ok {
			e.buf = strconv.AppendInt(e.buf, int64(n), 10)
		}
	case KindS64:
		var n int64
		if n, ok = v.(int64); ok {
			e.buf = strconv.AppendInt(e.buf, n, 10)
		}
	case KindU8:
		var n uint8
		if n, ok = v.(uint8); ok {
			e.buf = strconv.AppendUint(e.buf, uint64(n), 10)
		}
	case KindU16:
		var n uint16
		if n, ok = v.(uint16); ok {
			e.buf = strconv.AppendUint(e.buf, uint64(n), 10)
		}
	case KindU32:
		var n uint32
		if n, ok = v.(uint32); ok {
			e.buf = strconv.AppendUint(e.buf, uint64(n), 10)
		}
	case KindU64:
		var n uint64
		if n, ok = v.(uint64); ok {
			e.buf = strconv.AppendUint(e.buf, n, 10)
		}
	case KindF32:
		var f float32
		if f, ok = v.(float32); ok {
			e.buf = appendFloat(e.buf, float64(f), 32)
		}
	case KindF64:
		var f float64
		if f, ok = v.(float64); ok {
			e.buf = appendFloat(e.buf, f, 64)
		}
	case KindChar:
		var r rune
		if r, ok = v.(rune); ok {
			if !utf8.ValidRune(r) {
				return e.fail(RuleInvalidUTF8)
			}
			e.buf = appendString(e.buf, string(r))
		}
	case KindString:
		var s string
		if s, ok = v.(string); ok {
			return e.string(s)
		}
	case KindList:
		var l []any
		if l, ok = v.([]any); ok {
			return e.list(t.Elem, l)
		}
	case KindTuple:
		var l []any
		if l, ok = v.([]any); ok {
			return e.tuple(t.Elems, l)
		}
	case KindRecord:
		var m map[string]any
		if m, ok = v.(map[string]any); ok {
			return e.record(t.Fields, m)
		}
	case KindOption:
		var o OptionValue
		if o, ok = v.(OptionValue); ok {
			return e.option(t.Elem, o)
		}
	case KindEnum:
		var s string
		if s, ok = v.(string); ok {
			if caseIndex(t.Cases, []byte(s)) < 0 {
				return e.fail(RuleUnknownCase)
			}
			e.buf = appendString(e.buf, s)
		}
	case KindVariant:
		var c VariantValue
		if c, ok = v.(VariantValue); ok {
			i := caseIndex(t.Cases, []byte(c.Case))
			if i < 0 {
				return e.fail(RuleUnknownCase)
			}
			return e.member(t.Cases[i].Name, t.Cases[i].Payload, c.Value)
		}
	case KindResult:
		var r ResultValue
		if r, ok = v.(ResultValue); ok {
			if r.Err {
				return e.member("err", t.Err, r.Value)
			}
			return e.member("ok", t.Ok, r.Value)
		}
	}
	if !ok {
		return e.fail(RuleWrongType)
	}
	return nil
}

// string writes a string value.
func (e *encoder) string(s string) error {
	if len(s) > maxPayloadBytes {
		return e.fail(RuleTooLarge)
	}
	if !utf8.ValidString(s) {
		return e.fail(RuleInvalidUTF8)
	}
	e.buf = appendString(e.buf, s)
	return e.size()
}

// list writes the elements of l as values of elem.
func (e *encoder) list(elem *Type, l []any) error {
	e.buf = append(e.buf, '[')
	for i, v := range l {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.path = append(e.path, step{index: i})
		if err := e.value(elem, v); err != nil {
			return err
		}
		e.path = e.path[:len(e.path)-1]
		if err := e.size(); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, ']')
	return nil
}

// tuple writes l, one value per member type.
func (e *encoder) tuple(elems []Type, l []any) error {
	if len(l) != len(elems) {
		return e.fail(RuleLength)
	}
	e.buf = append(e.buf, '[')
	for i := range elems {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.path = append(e.path, step{index: i})
		if err := e.value(&elems[i], l[i]); err != nil {
			return err
		}
		e.path = e.path[:len(e.path)-1]
	}
	e.buf = append(e.buf, ']')
	return nil
}

// record writes m's fields in declared order; m must hold exactly them.
func (e *encoder) record(fields []Field, m map[string]any) error {
	e.buf = append(e.buf, '{')
	for i, f := range fields {
		e.path = append(e.path, step{name: f.Name})
		v, ok := m[f.Name]
		if !ok {
			return e.fail(RuleMissingField)
		}
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = append(e.buf, '"')
		e.buf = append(e.buf, f.Name...)
		e.buf = append(e.buf, '"', ':')
		if err := e.value(&f.Type, v); err != nil {
			return err
		}
		e.path = e.path[:len(e.path)-1]
	}
	if len(m) != len(fields) {
		return e.fail(RuleUnknownField)
	}
	e.buf = append(e.buf, '}')
	return nil
}

// option writes none as null and some(v) as v, or as {"some": v} when
// elem is itself an option.
func (e *encoder) option(elem *Type, o OptionValue) error {
	if !o.Some {
		if o.Value != nil {
			return e.fail(RuleWrongType)
		}
		e.buf = append(e.buf, "null"...)
		return nil
	}
	if elem.Kind == KindOption {
		return e.member("some", elem, o.Value)
	}
	e.path = append(e.path, step{name: "some"})
	if err := e.value(elem, o.Value); err != nil {
		return err
	}
	e.path = e.path[:len(e.path)-1]
	return nil
}

// member writes {"name": v}, v a value of t or, when t is nil, null.
func (e *encoder) member(name string, t *Type, v any) error {
	e.path = append(e.path, step{name: name})
	e.buf = append(e.buf, '{', '"')
	e.buf = append(e.buf, name...)
	e.buf = append(e.buf, '"', ':')
	if t == nil {
		if v != nil {
			return e.fail(RuleWrongType)
		}
		e.buf = append(e.buf, "null"...)
	} else if err := e.value(t, v); err != nil {
		return err
	}
	e.path = e.path[:len(e.path)-1]
	e.buf = append(e.buf, '}')
	return nil
}

// appendString writes s, valid UTF-8, as a JSON string with only '"',
// '\' and control characters escaped.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	last := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[last:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		last = i + 1
	}
	dst = append(dst, s[last:]...)
	return append(dst, '"')
}

// appendFloat writes f, of the given bit size, in canonical form: "nan",
// "inf" and "-inf" as strings; otherwise the shortest digits that round
// trip, in the shortest of the plain form and the exponent forms (plain
// first, then the fewest digits before the point, on a tie).
func appendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"nan"`...)
	case math.IsInf(f, 1):
		return append(dst, `"inf"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-inf"`...)
	}
	if math.Signbit(f) {
		dst = append(dst, '-')
		f = -f
	}
	// "d.ddde±xx": the shortest digits D and the exponent x of D[0].
	var sci [32]byte
	s := strconv.AppendFloat(sci[:0], f, 'e', -1, bits)
	var digits [24]byte
	n := 0
	i := 0
	for ; s[i] != 'e'; i++ {
		if s[i] != '.' {
			digits[n] = s[i]
			n++
		}
	}
	x, _ := strconv.Atoi(string(s[i+1:]))
	d := digits[:n]

	best, bestAt := plainLen(n, x), 0
	for at := 1; at <= n; at++ {
		l := n + 1 + decLen(x-(at-1))
		if at < n {
			l++ // the point
		}
		if l < best {
			best, bestAt = l, at
		}
	}
	if bestAt > 0 {
		dst = append(dst, d[:bestAt]...)
		if bestAt < n {
			dst = append(dst, '.')
			dst = append(dst, d[bestAt:]...)
		}
		dst = append(dst, 'e')
		return strconv.AppendInt(dst, int64(x-(bestAt-1)), 10)
	}
	switch {
	case x >= n-1:
		dst = append(dst, d...)
		for range x - (n - 1) {
			dst = append(dst, '0')
		}
	case x >= 0:
		dst = append(dst, d[:x+1]...)
		dst = append(dst, '.')
		dst = append(dst, d[x+1:]...)
	default:
		dst = append(dst, '0', '.')
		for range -x - 1 {
			dst = append(dst, '0')
		}
		dst = append(dst, d...)
	}
	return dst
}

// plainLen is the length of the plain decimal form of n digits whose first
// has exponent x.
func plainLen(n, x int) int {
	switch {
	case x >= n-1:
		return x + 1
	case x >= 0:
		return n + 1
	}
	return n + 1 - x
}

// decLen is the length of x in decimal, sign included.
func decLen(x int) int {
	l := 1
	if x < 0 {
		l++
		x = -x
	}
	for x >= 10 {
		l++
		x /= 10
	}
	return l
}
