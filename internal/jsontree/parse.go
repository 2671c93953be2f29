package jsontree

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// Parse reads exactly one JSON value from b, surrounded by nothing but
// white space, into a tree. The document is at depth 0 and the elements or
// members of a container at depth d are at depth d+1; a container at depth
// maxDepth or deeper is refused, even empty. So at most maxDepth containers
// nest, a scalar may sit at depth maxDepth, and maxDepth <= 0 admits a
// scalar document only. The recursion is bounded by maxDepth (and by
// encoding/json's own nesting bound).
//
// Every error is a *ParseError wrapping ErrSyntax, ErrTooDeep or
// ErrTrailingData; nothing is returned with it.
func Parse(b []byte, maxDepth int) (*Node, error) {
	p := parser{dec: json.NewDecoder(bytes.NewReader(b)), maxDepth: maxDepth}
	p.dec.UseNumber()
	root, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if _, err := p.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &ParseError{Err: ErrTrailingData}
	}
	return root, nil
}

// parser reads tokens into nodes. It keeps the path to the value being
// read as a stack of steps and renders it only for an error.
type parser struct {
	dec      *json.Decoder
	maxDepth int
	stack    []step
}

// step is one step of a path: an object key, or an array index when index
// is not negative.
type step struct {
	key   string
	index int
}

// fail returns a *ParseError for err at the current path.
func (p *parser) fail(err error) (*Node, error) {
	path := ""
	for _, s := range p.stack {
		if s.index >= 0 {
			path = Index(path, s.index)
		} else {
			path = Key(path, s.key)
		}
	}
	return nil, &ParseError{Path: path, Err: err}
}

// value reads one value at depth.
func (p *parser) value(depth int) (*Node, error) {
	n := &Node{Start: p.dec.InputOffset()}
	tok, err := p.dec.Token()
	if err != nil {
		return p.fail(ErrSyntax)
	}
	switch v := tok.(type) {
	case nil:
		n.Kind = KindNull
	case bool:
		n.Kind, n.Bool = KindBool, v
	case json.Number:
		n.Kind, n.Text = KindNumber, string(v)
	case string:
		n.Kind, n.Text = KindString, v
	case json.Delim:
		if depth >= p.maxDepth {
			return p.fail(ErrTooDeep)
		}
		switch v {
		case '[':
			n.Kind = KindArray
			if err := p.elems(n, depth); err != nil {
				return nil, err
			}
		case '{':
			n.Kind = KindObject
			if err := p.members(n, depth); err != nil {
				return nil, err
			}
		default:
			return p.fail(ErrSyntax)
		}
		if _, err := p.dec.Token(); err != nil { // the closing delimiter
			return p.fail(ErrSyntax)
		}
	default:
		return p.fail(ErrSyntax)
	}
	n.End = p.dec.InputOffset()
	return n, nil
}

// elems reads the elements of the array n, after its '['.
func (p *parser) elems(n *Node, depth int) error {
	for i := 0; p.dec.More(); i++ {
		p.stack = append(p.stack, step{index: i})
		e, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		p.stack = p.stack[:len(p.stack)-1]
		n.Elems = append(n.Elems, e)
	}
	return nil
}

// members reads the members of the object n, after its '{'.
func (p *parser) members(n *Node, depth int) error {
	for p.dec.More() {
		tok, err := p.dec.Token()
		key, isKey := tok.(string)
		if err != nil || !isKey {
			_, err := p.fail(ErrSyntax)
			return err
		}
		p.stack = append(p.stack, step{key: key, index: -1})
		v, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		p.stack = p.stack[:len(p.stack)-1]
		n.Members = append(n.Members, Member{Key: key, Value: v})
	}
	return nil
}
