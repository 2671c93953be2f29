package jspull

import (
	"errors"

	"github.com/latent-systems/latent-nats/internal/jsonlex"
)

// The scanner of the consumer-info decoder: a cursor over the reply with
// the lexical level in package jsonlex (RFC 8259, invalid UTF-8 and
// unpaired surrogate escapes refused, no allocation). It adds what this
// reply needs and encoding/json does not do: keys matched exactly (case
// included), integers checked against their range, the nesting depth
// capped, repeated keys refused. Values the caller does not look at are
// still validated completely.

// maxJSONDepth caps object/array nesting in a consumer-info reply. The
// deepest value nats-server 2.14.6 emits there is cluster.replicas[i], depth 4.
const maxJSONDepth = 16

// maxUnknownFields caps the fields the decoder does not know in one object
// it reads member by member (the reply, config, delivered, ack_floor,
// cluster, error); each is remembered, without allocating, to refuse a repeated key.
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

// lexError maps a jsonlex fault onto the reasons above; nil stays nil.
func lexError(err error) error {
	switch err {
	case nil:
		return nil
	case jsonlex.ErrString, jsonlex.ErrUTF8:
		return errJSONString
	case jsonlex.ErrDepth:
		return errJSONDepth
	}
	return errJSONSyntax
}

// jscan is the cursor: on a fault, i is the fault's offset.
type jscan struct {
	b []byte
	i int
}

// peek returns the next non-space byte without consuming it, 0 at the end.
func (s *jscan) peek() byte {
	s.i = jsonlex.Space(s.b, s.i)
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
	if s.i = jsonlex.Space(s.b, s.i); s.i != len(s.b) {
		return errJSONTrailing
	}
	return nil
}

// member advances to the next member of an object whose '{' was consumed
// and returns its raw key (between the quotes) with the ':' consumed. ok is
// false at the closing '}'.
func (s *jscan) member(first bool) (key []byte, esc, ok bool, err error) {
	if s.i, ok, err = jsonlex.Next(s.b, s.i, first, '}'); err != nil || !ok {
		return nil, false, false, lexError(err)
	}
	if key, esc, s.i, err = jsonlex.Key(s.b, s.i); err != nil {
		return nil, false, false, lexError(err)
	}
	return key, esc, true, nil
}

// element advances to the next element of an array whose '[' was consumed.
// ok is false at the closing ']'.
func (s *jscan) element(first bool) (ok bool, err error) {
	if s.i, ok, err = jsonlex.Next(s.b, s.i, first, ']'); err != nil {
		return false, lexError(err)
	}
	return ok, nil
}

// str reads a string and returns its raw contents between the quotes and
// whether it contains escapes.
func (s *jscan) str() (raw []byte, esc bool, err error) {
	if s.peek() != '"' {
		return nil, false, errJSONType
	}
	if raw, esc, s.i, err = jsonlex.String(s.b, s.i); err != nil {
		return nil, false, lexError(err)
	}
	return raw, esc, nil
}

// decodeString returns the decoded form of a raw string as a new string. It
// allocates and is used only to report a mismatch.
func decodeString(raw []byte, esc bool) string {
	if !esc {
		return string(raw)
	}
	return string(jsonlex.AppendUnescaped(make([]byte, 0, len(raw)), raw))
}

// integral reads a JSON number in integer form (no fraction or exponent)
// whose magnitude fits in a uint64, and returns its sign and magnitude.
func (s *jscan) integral() (neg bool, mag uint64, err error) {
	if !jsonlex.NumberStart(s.peek()) {
		return false, 0, errJSONType
	}
	start := s.i
	end, frac, exp, err := jsonlex.Number(s.b, s.i)
	s.i = end
	switch {
	case err != nil:
		return false, 0, errJSONSyntax
	case frac || exp:
		return false, 0, errJSONNumber
	}
	neg, mag, ok := jsonlex.Integer(s.b[start:end])
	if !ok {
		return false, 0, errJSONNumber
	}
	return neg, mag, nil
}

// integer reads a JSON integer in [min, max] of int64.
func (s *jscan) integer() (int64, error) {
	neg, mag, err := s.integral()
	switch {
	case err != nil:
		return 0, err
	case neg && mag > 1<<63, !neg && mag > 1<<63-1:
		return 0, errJSONNumber
	case neg:
		return int64(-mag), nil // two's complement; mag <= 1<<63
	}
	return int64(mag), nil
}

// unsigned reads a JSON integer in [0, max uint64]; "-0" is refused, as
// encoding/json refuses it for an unsigned field.
func (s *jscan) unsigned() (uint64, error) {
	neg, mag, err := s.integral()
	switch {
	case err != nil:
		return 0, err
	case neg:
		return 0, errJSONNumber
	}
	return mag, nil
}

// boolean reads true or false.
func (s *jscan) boolean() (bool, error) {
	s.peek()
	switch {
	case jsonlex.Literal(s.b, s.i, "true"):
		s.i += len("true")
		return true, nil
	case jsonlex.Literal(s.b, s.i, "false"):
		s.i += len("false")
		return false, nil
	}
	return false, errJSONType
}

// skip validates and consumes any value at nesting depth.
func (s *jscan) skip(depth int) (err error) {
	if s.i, err = jsonlex.Skip(s.b, s.i, depth, maxJSONDepth); err != nil {
		return lexError(err)
	}
	return nil
}

// skipValue validates and consumes a value at depth like skip, and returns
// its raw text.
func (s *jscan) skipValue(depth int) ([]byte, error) {
	start := jsonlex.Space(s.b, s.i)
	if err := s.skip(depth); err != nil {
		return nil, err
	}
	return s.b[start:s.i:s.i], nil
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
		if jsonlex.EqualRaw(k.raw, k.esc, raw, esc) {
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
	return jsonlex.Space(v, 1) == len(v)-1
}
