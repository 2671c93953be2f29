package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// The credentials file is decoded in two passes, as the configuration is:
// parseTree reads the JSON into a tree that keeps every key (duplicates
// included) in order; the schema in credfile.go then walks that tree and
// reports unknown, duplicate and missing keys and wrong types with their
// paths instead of stopping at the first.

// maxDepth bounds the nesting of the credentials file. The schema needs
// four levels (document, list, entry, destination); anything deeper is a
// syntax violation.
const maxDepth = 8

// kind is the JSON type of a node.
type kind uint8

const (
	kindNull kind = iota + 1
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// node is one JSON value.
type node struct {
	kind    kind
	text    string // kindString, kindNumber
	bool    bool   // kindBool
	elems   []*node
	members []member
}

// member is one key of an object and its value.
type member struct {
	key string
	val *node
}

// treeParser reads one JSON value token by token.
type treeParser struct {
	dec *json.Decoder
}

// parseTree reads exactly one JSON value from b. It returns false for a
// syntax error, nesting deeper than maxDepth or data after the value.
func parseTree(b []byte) (*node, bool) {
	p := treeParser{dec: json.NewDecoder(bytes.NewReader(b))}
	p.dec.UseNumber()
	root, ok := p.value(0)
	if !ok {
		return nil, false
	}
	if _, err := p.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false
	}
	return root, true
}

// value reads the next value at depth d.
func (p *treeParser) value(d int) (*node, bool) {
	if d > maxDepth {
		return nil, false
	}
	tok, err := p.dec.Token()
	if err != nil {
		return nil, false
	}
	switch v := tok.(type) {
	case nil:
		return &node{kind: kindNull}, true
	case bool:
		return &node{kind: kindBool, bool: v}, true
	case json.Number:
		return &node{kind: kindNumber, text: v.String()}, true
	case string:
		return &node{kind: kindString, text: v}, true
	case json.Delim:
		switch v {
		case '[':
			return p.array(d)
		case '{':
			return p.object(d)
		}
	}
	return nil, false
}

// array reads the elements after '['.
func (p *treeParser) array(d int) (*node, bool) {
	n := &node{kind: kindArray}
	for p.dec.More() {
		e, ok := p.value(d + 1)
		if !ok {
			return nil, false
		}
		n.elems = append(n.elems, e)
	}
	if _, err := p.dec.Token(); err != nil { // ']'
		return nil, false
	}
	return n, true
}

// object reads the members after '{'.
func (p *treeParser) object(d int) (*node, bool) {
	n := &node{kind: kindObject}
	for p.dec.More() {
		tok, err := p.dec.Token()
		if err != nil {
			return nil, false
		}
		key, ok := tok.(string)
		if !ok {
			return nil, false
		}
		v, ok := p.value(d + 1)
		if !ok {
			return nil, false
		}
		n.members = append(n.members, member{key: key, val: v})
	}
	if _, err := p.dec.Token(); err != nil { // '}'
		return nil, false
	}
	return n, true
}

// pathField joins an object key to a path.
func pathField(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// pathIndex joins an array index to a path.
func pathIndex(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}
