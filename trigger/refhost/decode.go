package refhost

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/latent-systems/latent-nats/internal/jsonlex"
)

// Decode reads payload as the signature's argument array (see the package
// documentation for the encoding) and returns one Go value per parameter.
// The values share no memory with payload. Any fault is an *ArgumentError
// (matching ErrInvalidArguments and its Rule); a payload longer than
// trigger.MaxPayloadBytes is refused before it is read.
func (s *Signature) Decode(payload []byte) ([]any, error) {
	if len(payload) > maxPayloadBytes {
		return nil, &ArgumentError{Arg: -1, Offset: 0, Rule: RuleTooLarge}
	}
	d := decoder{in: payload, arg: -1}
	d.space()
	if !d.peek('[') {
		return nil, d.mismatch()
	}
	d.pos++
	args := make([]any, 0, len(s.params))
	d.space()
	if d.peek(']') {
		d.pos++
	} else {
		for i := 0; ; i++ {
			if i == len(s.params) {
				return nil, d.fail(RuleArgCount)
			}
			d.arg = i
			v, err := d.value(&s.params[i])
			if err != nil {
				return nil, err
			}
			d.arg = -1
			args = append(args, v)
			d.space()
			if d.peek(']') {
				d.pos++
				break
			}
			if !d.peek(',') {
				return nil, d.fail(RuleSyntax)
			}
			d.pos++
			d.space()
			if d.peek(']') {
				return nil, d.fail(RuleSyntax)
			}
		}
	}
	if len(args) != len(s.params) {
		d.pos--
		return nil, d.fail(RuleArgCount)
	}
	d.space()
	if d.pos != len(d.in) {
		return nil, d.fail(RuleTrailingData)
	}
	return args, nil
}

// decoder reads one payload, guided by the declared types.
type decoder struct {
	in   []byte
	pos  int
	arg  int
	path []step
}

// step is one step of a path: a declared name, or an index when name is
// empty.
type step struct {
	name  string
	index int
}

func (d *decoder) push(s step) { d.path = append(d.path, s) }
func (d *decoder) pop()        { d.path = d.path[:len(d.path)-1] }

// fail returns the error for r at the current offset and path.
func (d *decoder) fail(r Rule) error { return d.failAt(d.pos, r) }

// failAt returns the error for r at off and the current path.
func (d *decoder) failAt(off int, r Rule) error {
	e := &ArgumentError{Arg: d.arg, Offset: off, Rule: r}
	if d.arg >= 0 {
		e.Path = renderPath(d.path)
	}
	return e
}

// renderPath writes a path from its steps.
func renderPath(path []step) string {
	var b []byte
	for _, s := range path {
		if s.name != "" {
			b = append(b, '.')
			b = append(b, s.name...)
			continue
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(s.index), 10)
		b = append(b, ']')
	}
	return string(b)
}

// space skips JSON whitespace.
func (d *decoder) space() { d.pos = jsonlex.Space(d.in, d.pos) }

// peek reports whether the next byte is c.
func (d *decoder) peek(c byte) bool { return d.pos < len(d.in) && d.in[d.pos] == c }

// mismatch reports the value at the current offset: RuleWrongType when it
// starts a JSON value (of a type other than the one declared: a literal,
// or the first byte of a number, string, array or object), RuleSyntax
// otherwise.
func (d *decoder) mismatch() error {
	if d.pos < len(d.in) {
		rest := d.in[d.pos:]
		switch c := rest[0]; {
		case c == '{', c == '[', c == '"', jsonlex.NumberStart(c),
			jsonlex.Literal(rest, 0, "true"),
			jsonlex.Literal(rest, 0, "false"),
			jsonlex.Literal(rest, 0, "null"):
			return d.fail(RuleWrongType)
		}
	}
	return d.fail(RuleSyntax)
}

// literal consumes the literal lit ("true", "false", "null").
func (d *decoder) literal(lit string) error {
	if !jsonlex.Literal(d.in, d.pos, lit) {
		return d.fail(RuleSyntax)
	}
	d.pos += len(lit)
	return nil
}

// value reads one value of type t.
func (d *decoder) value(t *Type) (any, error) {
	d.space()
	switch t.Kind {
	case KindBool:
		switch {
		case d.peek('t'):
			return true, d.literal("true")
		case d.peek('f'):
			return false, d.literal("false")
		}
		return nil, d.mismatch()
	case KindS8, KindS16, KindS32, KindS64, KindU8, KindU16, KindU32, KindU64:
		if !d.peekNumber() {
			return nil, d.mismatch()
		}
		return d.integer(t.Kind)
	case KindF32, KindF64:
		return d.float(t.Kind)
	case KindChar:
		return d.char()
	case KindString:
		if !d.peek('"') {
			return nil, d.mismatch()
		}
		b, err := d.str()
		return string(b), err
	case KindList:
		return d.list(t.Elem)
	case KindTuple:
		return d.tuple(t.Elems)
	case KindRecord:
		return d.record(t.Fields)
	case KindOption:
		return d.option(t.Elem)
	case KindEnum:
		return d.enum(t.Cases)
	case KindVariant:
		return d.variant(t.Cases)
	case KindResult:
		return d.result(t)
	}
	// Unreachable for a validated signature.
	return nil, d.fail(RuleWrongType)
}

// peekNumber reports whether a number starts here.
func (d *decoder) peekNumber() bool { return d.pos < len(d.in) && jsonlex.NumberStart(d.in[d.pos]) }

// lexFail returns the error for a jsonlex fault at off: RuleInvalidUTF8
// for invalid UTF-8 or an unpaired surrogate escape, RuleSyntax for any
// other.
func (d *decoder) lexFail(off int, err error) error {
	if err == jsonlex.ErrUTF8 {
		return d.failAt(off, RuleInvalidUTF8)
	}
	return d.failAt(off, RuleSyntax)
}

// number reads a JSON number and returns its text (aliasing the input) and
// whether it has a fraction or an exponent.
func (d *decoder) number() (tok []byte, frac, exp bool, err error) {
	end, frac, exp, err := jsonlex.Number(d.in, d.pos)
	if err != nil {
		return nil, false, false, d.lexFail(end, err)
	}
	tok = d.in[d.pos:end:end]
	d.pos = end
	return tok, frac, exp, nil
}

// str reads a JSON string at d.pos (which holds '"') and returns its
// decoded bytes. Without escapes the result aliases the input; callers
// copy what they keep.
func (d *decoder) str() ([]byte, error) {
	raw, esc, end, err := jsonlex.String(d.in, d.pos)
	if err != nil {
		return nil, d.lexFail(end, err)
	}
	d.pos = end
	if !esc {
		return raw, nil
	}
	return jsonlex.AppendUnescaped(make([]byte, 0, len(raw)), raw), nil
}

// intRange is the magnitude bound of each integer kind: the largest
// positive value, and the largest magnitude of a negative one (0 for
// unsigned kinds).
func intRange(k Kind) (pos, neg uint64) {
	switch k {
	case KindS8:
		return math.MaxInt8, 1 << 7
	case KindS16:
		return math.MaxInt16, 1 << 15
	case KindS32:
		return math.MaxInt32, 1 << 31
	case KindS64:
		return math.MaxInt64, 1 << 63
	case KindU8:
		return math.MaxUint8, 0
	case KindU16:
		return math.MaxUint16, 0
	case KindU32:
		return math.MaxUint32, 0
	}
	return math.MaxUint64, 0
}

// integer reads an integer of kind k.
func (d *decoder) integer(k Kind) (any, error) {
	start := d.pos
	tok, frac, exp, err := d.number()
	if err != nil {
		return nil, err
	}
	if frac || exp || string(tok) == "-0" {
		return nil, d.failAt(start, RuleNotInteger)
	}
	neg, mag, ok := jsonlex.Integer(tok)
	maxPos, maxNeg := intRange(k)
	if !ok || neg && mag > maxNeg || !neg && mag > maxPos {
		return nil, d.failAt(start, RuleOutOfRange)
	}
	var v int64
	if neg {
		v = int64(-mag) // two's complement; mag <= 1<<63
	} else {
		v = int64(mag)
	}
	switch k {
	case KindS8:
		return int8(v), nil
	case KindS16:
		return int16(v), nil
	case KindS32:
		return int32(v), nil
	case KindS64:
		return v, nil
	case KindU8:
		return uint8(mag), nil
	case KindU16:
		return uint16(mag), nil
	case KindU32:
		return uint32(mag), nil
	}
	return mag, nil
}

// float reads an f32 or f64: a number or one of the three names.
func (d *decoder) float(k Kind) (any, error) {
	bits := 64
	if k == KindF32 {
		bits = 32
	}
	var f float64
	switch {
	case d.peek('"'):
		start := d.pos
		name, err := d.str()
		if err != nil {
			return nil, err
		}
		switch string(name) {
		case "nan":
			f = math.NaN()
		case "inf":
			f = math.Inf(1)
		case "-inf":
			f = math.Inf(-1)
		default:
			return nil, d.failAt(start, RuleWrongType)
		}
	case d.peekNumber():
		start := d.pos
		tok, _, _, err := d.number()
		if err != nil {
			return nil, err
		}
		f, err = strconv.ParseFloat(string(tok), bits)
		if errors.Is(err, strconv.ErrRange) {
			return nil, d.failAt(start, RuleOutOfRange)
		}
		if err != nil { // unreachable: tok follows the JSON grammar
			return nil, d.failAt(start, RuleSyntax)
		}
	default:
		return nil, d.mismatch()
	}
	if k == KindF32 {
		return float32(f), nil
	}
	return f, nil
}

// char reads a string holding one Unicode scalar value.
func (d *decoder) char() (any, error) {
	if !d.peek('"') {
		return nil, d.mismatch()
	}
	start := d.pos
	b, err := d.str()
	if err != nil {
		return nil, err
	}
	r, size := utf8.DecodeRune(b)
	if len(b) == 0 || size != len(b) {
		return nil, d.failAt(start, RuleNotOneChar)
	}
	return r, nil
}

// list reads an array of elem.
func (d *decoder) list(elem *Type) (any, error) {
	if !d.peek('[') {
		return nil, d.mismatch()
	}
	d.pos++
	out := []any{}
	d.space()
	if d.peek(']') {
		d.pos++
		return out, nil
	}
	for i := 0; ; i++ {
		d.push(step{index: i})
		v, err := d.value(elem)
		if err != nil {
			return nil, err
		}
		d.pop()
		out = append(out, v)
		d.space()
		switch {
		case d.peek(']'):
			d.pos++
			return out, nil
		case !d.peek(','):
			return nil, d.fail(RuleSyntax)
		}
		d.pos++
	}
}

// tuple reads an array with one element per member type.
func (d *decoder) tuple(elems []Type) (any, error) {
	if !d.peek('[') {
		return nil, d.mismatch()
	}
	d.pos++
	out := make([]any, 0, len(elems))
	for i := range elems {
		d.space()
		if i > 0 {
			switch {
			case d.peek(']'):
				return nil, d.fail(RuleLength)
			case !d.peek(','):
				return nil, d.fail(RuleSyntax)
			}
			d.pos++
		} else if d.peek(']') {
			return nil, d.fail(RuleLength)
		}
		d.push(step{index: i})
		v, err := d.value(&elems[i])
		if err != nil {
			return nil, err
		}
		d.pop()
		out = append(out, v)
	}
	d.space()
	switch {
	case d.peek(']'):
		d.pos++
		return out, nil
	case d.peek(','):
		return nil, d.fail(RuleLength)
	}
	return nil, d.fail(RuleSyntax)
}

// record reads an object with exactly the declared fields.
func (d *decoder) record(fields []Field) (any, error) {
	if !d.peek('{') {
		return nil, d.mismatch()
	}
	d.pos++
	out := make(map[string]any, len(fields))
	d.space()
	if !d.peek('}') {
		for {
			d.space()
			if !d.peek('"') {
				return nil, d.fail(RuleSyntax)
			}
			keyOff := d.pos
			key, err := d.str()
			if err != nil {
				return nil, err
			}
			i := fieldIndex(fields, key)
			if i < 0 {
				return nil, d.failAt(keyOff, RuleUnknownField)
			}
			name := fields[i].Name
			if _, dup := out[name]; dup {
				d.push(step{name: name})
				return nil, d.failAt(keyOff, RuleDuplicateKey)
			}
			if err := d.colon(); err != nil {
				return nil, err
			}
			d.push(step{name: name})
			v, err := d.value(&fields[i].Type)
			if err != nil {
				return nil, err
			}
			d.pop()
			out[name] = v
			d.space()
			if d.peek('}') {
				break
			}
			if !d.peek(',') {
				return nil, d.fail(RuleSyntax)
			}
			d.pos++
		}
	}
	for _, f := range fields {
		if _, ok := out[f.Name]; !ok {
			d.push(step{name: f.Name})
			return nil, d.fail(RuleMissingField)
		}
	}
	d.pos++ // '}'
	return out, nil
}

// fieldIndex returns the index of the field named key, or -1.
func fieldIndex(fields []Field, key []byte) int {
	for i := range fields {
		if fields[i].Name == string(key) {
			return i
		}
	}
	return -1
}

// caseIndex returns the index of the case named key, or -1.
func caseIndex(cases []Case, key []byte) int {
	for i := range cases {
		if cases[i].Name == string(key) {
			return i
		}
	}
	return -1
}

// colon consumes optional whitespace and ':'.
func (d *decoder) colon() error {
	d.space()
	if !d.peek(':') {
		return d.fail(RuleSyntax)
	}
	d.pos++
	return nil
}

// openOne reads '{', the only key and ':' of a one-member object, and
// returns the key and its offset.
func (d *decoder) openOne() ([]byte, int, error) {
	if !d.peek('{') {
		return nil, 0, d.mismatch()
	}
	d.pos++
	d.space()
	if d.peek('}') {
		return nil, 0, d.fail(RuleMemberCount)
	}
	if !d.peek('"') {
		return nil, 0, d.fail(RuleSyntax)
	}
	off := d.pos
	key, err := d.str()
	if err != nil {
		return nil, 0, err
	}
	return key, off, nil
}

// closeOne reads the end of a one-member object whose key was first: '}'
// or, refused, the key of a second member.
func (d *decoder) closeOne(first []byte) error {
	d.space()
	switch {
	case d.peek('}'):
		d.pos++
		return nil
	case !d.peek(','):
		return d.fail(RuleSyntax)
	}
	d.pos++
	d.space()
	if !d.peek('"') {
		return d.fail(RuleSyntax)
	}
	off := d.pos
	key, err := d.str()
	if err != nil {
		return err
	}
	if bytes.Equal(key, first) {
		return d.failAt(off, RuleDuplicateKey)
	}
	return d.failAt(off, RuleMemberCount)
}

// member reads the value of a one-member object's member named name: a
// value of t, or null when t is nil.
func (d *decoder) member(name string, t *Type) (any, error) {
	if err := d.colon(); err != nil {
		return nil, err
	}
	d.push(step{name: name})
	defer d.pop()
	if t == nil {
		d.space()
		if !d.peek('n') {
			return nil, d.mismatch()
		}
		return nil, d.literal("null")
	}
	return d.value(t)
}

// option reads null, a value of elem, or {"some": v} when elem is itself
// an option.
func (d *decoder) option(elem *Type) (any, error) {
	if d.peek('n') {
		return OptionValue{}, d.literal("null")
	}
	if elem.Kind != KindOption {
		d.push(step{name: "some"})
		v, err := d.value(elem)
		if err != nil {
			return nil, err
		}
		d.pop()
		return Some(v), nil
	}
	key, off, err := d.openOne()
	if err != nil {
		return nil, err
	}
	if string(key) != "some" {
		return nil, d.failAt(off, RuleUnknownCase)
	}
	v, err := d.member("some", elem)
	if err != nil {
		return nil, err
	}
	return Some(v), d.closeOne(key)
}

// enum reads a case name.
func (d *decoder) enum(cases []Case) (any, error) {
	if !d.peek('"') {
		return nil, d.mismatch()
	}
	off := d.pos
	name, err := d.str()
	if err != nil {
		return nil, err
	}
	i := caseIndex(cases, name)
	if i < 0 {
		return nil, d.failAt(off, RuleUnknownCase)
	}
	return cases[i].Name, nil
}

// variant reads {"case": payload}.
func (d *decoder) variant(cases []Case) (any, error) {
	key, off, err := d.openOne()
	if err != nil {
		return nil, err
	}
	i := caseIndex(cases, key)
	if i < 0 {
		return nil, d.failAt(off, RuleUnknownCase)
	}
	v, err := d.member(cases[i].Name, cases[i].Payload)
	if err != nil {
		return nil, err
	}
	return VariantValue{Case: cases[i].Name, Value: v}, d.closeOne(key)
}

// result reads {"ok": v} or {"err": e}.
func (d *decoder) result(t *Type) (any, error) {
	key, off, err := d.openOne()
	if err != nil {
		return nil, err
	}
	var r ResultValue
	switch string(key) {
	case "ok":
		r.Value, err = d.member("ok", t.Ok)
	case "err":
		r.Err = true
		r.Value, err = d.member("err", t.Err)
	default:
		return nil, d.failAt(off, RuleUnknownCase)
	}
	if err != nil {
		return nil, err
	}
	return r, d.closeOne(key)
}
