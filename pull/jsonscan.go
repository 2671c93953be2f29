package pull

import (
	"errors"
	"unicode/utf8"
)

// A small strict JSON scanner over a byte slice, used to decode consumer
// info without allocating. It follows RFC 8259 and is stricter than
// encoding/json where that library is lenient: keys match exactly (case
// included), invalid UTF-8 and lone surrogate escapes are refused, and the
// nesting depth is capped. Values the caller does not look at are still
// validated completely.

// maxJSONDepth caps object/array nesting in a consumer-info reply. The
// deepest value nats-server 2.14.6 emits there is cluster.replicas[i], depth 4.
const maxJSONDepth = 16

// maxUnknownFields caps the fields the decoder does not know in one object
// it reads member by member (the reply, config, delivered, ack_floor,
// error); each is remembered, without allocating, to refuse a repeated key.
// nats-server 2.14.6 sends none; a later release adds a few at a time.
const maxUnknownFields = 32

// Reasons a reply is malformed; they name our grammar, never broker text.
var (
	errJSONSyntax    = errors.New("invalid json")
	errJSONDepth     = errors.New("json nested too deeply")
	errJSONTrailing  = errors.New("data after the json value")
	errJSONString    = errors.New("invalid json string")
	errJSONNumber    = errors.New("invalid or out-of-range integer")
	errJSONType      = errors.New("field of the wrong json type")
	errJSONDuplicate = errors.New("duplicate field")
	errJSONUnknown   = errors.New("too many unknown fields in one object")
	errJSONMissing   = errors.New("required field missing")
	errJSONRange     = errors.New("field out of range")
)

type jscan struct {
	b []byte
	i int
}

func (s *jscan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte without consuming it, 0 at the end.
func (s *jscan) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

func (s *jscan) consume(c byte) bool {
	if s.peek() != c {
		return false
	}
	s.i++
	return true
}

// end checks that only white space remains.
func (s *jscan) end() error {
	s.ws()
	if s.i != len(s.b) {
		return errJSONTrailing
	}
	return nil
}

// member advances to the next member of an object whose '{' was consumed
// and returns its raw key (between the quotes) with the ':' consumed. ok is
// false at the closing '}'.
func (s *jscan) member(first bool) (key []byte, esc, ok bool, err error) {
	c := s.peek()
	if c == '}' {
		s.i++
		return nil, false, false, nil
	}
	if !first {
		if c != ',' {
			return nil, false, false, errJSONSyntax
		}
		s.i++
	}
	key, esc, err = s.str()
	if err != nil {
		return nil, false, false, err
	}
	if !s.consume(':') {
		return nil, false, false, errJSONSyntax
	}
	return key, esc, true, nil
}

// element advances to the next element of an array whose '[' was consumed.
// ok is false at the closing ']'.
func (s *jscan) element(first bool) (ok bool, err error) {
	c := s.peek()
	if c == ']' {
		s.i++
		return false, nil
	}
	if !first {
		if c != ',' {
			return false, errJSONSyntax
		}
		s.i++
	}
	return true, nil
}

// str reads a string and returns its raw contents between the quotes and
// whether it contains escapes. Control characters, invalid escapes, lone
// surrogates and invalid UTF-8 are refused.
func (s *jscan) str() (raw []byte, esc bool, err error) {
	if !s.consume('"') {
		return nil, false, errJSONType
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw = s.b[start:s.i:s.i]
			s.i++
			if !utf8.Valid(raw) {
				return nil, false, errJSONString
			}
			return raw, esc, nil
		case c < 0x20:
			return nil, false, errJSONString
		case c == '\\':
			esc = true
			n, _, ok := unescapeAt(s.b, s.i)
			if !ok {
				return nil, false, errJSONString
			}
			s.i += n
		default:
			s.i++
		}
	}
	return nil, false, errJSONString
}

// unescapeAt decodes the escape sequence at b[i] (which is '\\'): it returns
// the number of input bytes used and the rune, or ok false. A high surrogate
// must be followed by an escaped low surrogate; a lone one is refused.
func unescapeAt(b []byte, i int) (n int, r rune, ok bool) {
	if i+1 >= len(b) {
		return 0, 0, false
	}
	switch b[i+1] {
	case '"':
		return 2, '"', true
	case '\\':
		return 2, '\\', true
	case '/':
		return 2, '/', true
	case 'b':
		return 2, '\b', true
	case 'f':
		return 2, '\f', true
	case 'n':
		return 2, '\n', true
	case 'r':
		return 2, '\r', true
	case 't':
		return 2, '\t', true
	case 'u':
	default:
		return 0, 0, false
	}
	r1, ok := hex4(b, i+2)
	if !ok {
		return 0, 0, false
	}
	switch {
	case r1 >= 0xDC00 && r1 <= 0xDFFF:
		return 0, 0, false
	case r1 < 0xD800 || r1 > 0xDBFF:
		return 6, r1, true
	}
	if i+7 >= len(b) || b[i+6] != '\\' || b[i+7] != 'u' {
		return 0, 0, false
	}
	r2, ok := hex4(b, i+8)
	if !ok || r2 < 0xDC00 || r2 > 0xDFFF {
		return 0, 0, false
	}
	return 12, 0x10000 + (r1-0xD800)<<10 + (r2 - 0xDC00), true
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	return r, true
}

// appendUnescaped appends the decoded form of a raw string (as returned by
// str, so already validated) to dst. It stops and returns false once dst
// would grow beyond limit bytes, so it never allocates when dst has that
// capacity.
func appendUnescaped(dst, raw []byte, limit int) ([]byte, bool) {
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			if len(dst) >= limit {
				return dst, false
			}
			dst = append(dst, raw[i])
			i++
			continue
		}
		n, r, _ := unescapeAt(raw, i)
		if len(dst)+utf8.RuneLen(r) > limit {
			return dst, false
		}
		dst = utf8.AppendRune(dst, r)
		i += n
	}
	return dst, true
}

// jsonStringEqual reports whether a raw string from str decodes to want,
// without allocating.
func jsonStringEqual(raw []byte, esc bool, want string) bool {
	if !esc {
		return string(raw) == want
	}
	j := 0
	var rb [utf8.UTFMax]byte
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			if j >= len(want) || want[j] != raw[i] {
				return false
			}
			i++
			j++
			continue
		}
		n, r, _ := unescapeAt(raw, i)
		m := utf8.EncodeRune(rb[:], r)
		if j+m > len(want) || string(rb[:m]) != want[j:j+m] {
			return false
		}
		i += n
		j += m
	}
	return j == len(want)
}

// decodeString returns the decoded form of a raw string as a new string. It
// allocates and is used only to report a mismatch.
func decodeString(raw []byte, esc bool) string {
	if !esc {
		return string(raw)
	}
	out, _ := appendUnescaped(make([]byte, 0, len(raw)), raw, len(raw))
	return string(out)
}

// integer reads a JSON number that must be an integer without fraction or
// exponent, in [min, max] of int64.
func (s *jscan) integer() (int64, error) {
	s.ws()
	neg := false
	if s.i < len(s.b) && s.b[s.i] == '-' {
		neg = true
		s.i++
	}
	start := s.i
	var v uint64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		d := uint64(s.b[s.i] - '0')
		if v > (1<<63-d)/10 {
			return 0, errJSONNumber
		}
		v = v*10 + d
		s.i++
	}
	digits := s.i - start
	if digits == 0 {
		if neg {
			return 0, errJSONSyntax
		}
		return 0, errJSONType
	}
	if digits > 1 && s.b[start] == '0' {
		return 0, errJSONSyntax
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return 0, errJSONNumber
		}
	}
	if neg {
		return -int64(v), nil
	}
	if v > 1<<63-1 {
		return 0, errJSONNumber
	}
	return int64(v), nil
}

// unsigned reads a JSON integer in [0, max uint64].
func (s *jscan) unsigned() (uint64, error) {
	s.ws()
	start := s.i
	var v uint64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		d := uint64(s.b[s.i] - '0')
		if v > (^uint64(0)-d)/10 {
			return 0, errJSONNumber
		}
		v = v*10 + d
		s.i++
	}
	digits := s.i - start
	switch {
	case digits == 0 && s.i < len(s.b) && s.b[s.i] == '-':
		return 0, errJSONNumber
	case digits == 0:
		return 0, errJSONType
	case digits > 1 && s.b[start] == '0':
		return 0, errJSONSyntax
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return 0, errJSONNumber
		}
	}
	return v, nil
}

// boolean reads true or false.
func (s *jscan) boolean() (bool, error) {
	switch s.peek() {
	case 't':
		return true, s.literal("true")
	case 'f':
		return false, s.literal("false")
	}
	return false, errJSONType
}

func (s *jscan) literal(lit string) error {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return errJSONSyntax
	}
	s.i += len(lit)
	return nil
}

// number validates any JSON number.
func (s *jscan) number() error {
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return errJSONSyntax
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return errJSONSyntax
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return errJSONSyntax
		}
	}
	return nil
}

func (s *jscan) digits() int {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}

// skip validates and consumes any value at nesting depth.
func (s *jscan) skip(depth int) error {
	if depth > maxJSONDepth {
		return errJSONDepth
	}
	switch c := s.peek(); {
	case c == '{':
		s.i++
		for first := true; ; first = false {
			_, _, ok, err := s.member(first)
			if err != nil {
				return err
			}
			if !ok {
				return nil
			}
			if err := s.skip(depth + 1); err != nil {
				return err
			}
		}
	case c == '[':
		s.i++
		for first := true; ; first = false {
			ok, err := s.element(first)
			if err != nil {
				return err
			}
			if !ok {
				return nil
			}
			if err := s.skip(depth + 1); err != nil {
				return err
			}
		}
	case c == '"':
		_, _, err := s.str()
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return errJSONSyntax
}

// unknownKeys remembers the keys of one object that the decoder does not
// know, to refuse a repeated one. The keys alias the reply.
type unknownKeys struct {
	n    int
	keys [maxUnknownFields]jstr
}

// add records a raw key; a key equal (after unescaping) to one already
// recorded is errJSONDuplicate, one more than maxUnknownFields is
// errJSONUnknown.
func (u *unknownKeys) add(raw []byte, esc bool) error {
	for _, k := range u.keys[:u.n] {
		if rawStringsEqual(k.raw, k.esc, raw, esc) {
			return errJSONDuplicate
		}
	}
	if u.n == len(u.keys) {
		return errJSONUnknown
	}
	u.keys[u.n] = jstr{raw: raw, esc: esc, present: true}
	u.n++
	return nil
}

// rawStringsEqual reports whether two raw strings from str decode to the
// same text, without allocating.
func rawStringsEqual(a []byte, aesc bool, b []byte, besc bool) bool {
	if !aesc && !besc {
		return string(a) == string(b)
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ra, na := rawRune(a, i)
		rb, nb := rawRune(b, j)
		if ra != rb {
			return false
		}
		i += na
		j += nb
	}
	return i == len(a) && j == len(b)
}

// rawRune decodes the rune at raw[i] of a raw string from str (an escape
// or a UTF-8 sequence) and returns it with the bytes it used.
func rawRune(raw []byte, i int) (rune, int) {
	if raw[i] == '\\' {
		n, r, _ := unescapeAt(raw, i)
		return r, n
	}
	return utf8.DecodeRune(raw[i:])
}

// emptyValue reports whether a raw JSON value, as validated by skip, is
// empty or zero: null, false, 0, "", [] or {} (white space allowed inside
// the brackets).
func emptyValue(v []byte) bool {
	switch string(v) {
	case "null", "false", "0", `""`:
		return true
	}
	if len(v) < 2 || !(v[0] == '[' || v[0] == '{') {
		return false
	}
	for _, c := range v[1 : len(v)-1] {
		switch c {
		case ' ', '\t', '\n', '\r':
		default:
			return false
		}
	}
	return true
}

// skipValue validates and consumes a value at depth like skip, and returns
// its raw text.
func (s *jscan) skipValue(depth int) ([]byte, error) {
	s.ws()
	start := s.i
	if err := s.skip(depth); err != nil {
		return nil, err
	}
	return s.b[start:s.i:s.i], nil
}
