package jsontree

import "github.com/latent-systems/latent-nats/internal/jsonlex"

// Parse reads exactly one JSON value from b, surrounded by nothing but
// white space, into a tree, with internal/jsonlex's tokens, UTF-8 policy
// and depth rule: the document is at depth 0, the elements or members of a
// container at depth d are at depth d+1, and a value deeper than maxDepth,
// scalar or container, is refused. So maxDepth 0 admits a scalar document
// or an empty container only, and a negative bound nothing. The recursion
// is bounded by maxDepth.
//
// Every error is a *ParseError wrapping ErrSyntax, ErrUTF8, ErrTooDeep or
// ErrTrailingData; nothing is returned with it.
func Parse(b []byte, maxDepth int) (*Node, error) {
	p := parser{in: b, maxDepth: maxDepth}
	root, err := p.value(0, 0, 0)
	if err != nil {
		return nil, err
	}
	if end := jsonlex.Space(b, int(root.End)); end != len(b) {
		return nil, &ParseError{Offset: int64(end), Err: ErrTrailingData}
	}
	return root, nil
}

// parser reads tokens into nodes. It keeps the path to the value being
// read as a stack of steps and renders it only for an error.
type parser struct {
	in       []byte
	maxDepth int
	stack    []step
	// text is scratch space for unescaping a string.
	text []byte
}

// step is one step of a path: an object key, or an array index when index
// is not negative.
type step struct {
	key   string
	index int
}

// fail returns a *ParseError for the jsonlex fault err at off, at the
// current path.
func (p *parser) fail(off int, err error) (*Node, error) {
	path := ""
	for _, s := range p.stack {
		if s.index >= 0 {
			path = Index(path, s.index)
		} else {
			path = Key(path, s.key)
		}
	}
	switch err {
	case jsonlex.ErrUTF8:
		err = ErrUTF8
	case jsonlex.ErrDepth:
		err = ErrTooDeep
	default:
		err = ErrSyntax
	}
	return nil, &ParseError{Path: path, Offset: int64(off), Err: err}
}

// value reads one value at depth from the offset from, past its
// separator; start, where its span starts, is where the token before the
// separator ended.
func (p *parser) value(start, from, depth int) (*Node, error) {
	n := &Node{Start: int64(start)}
	i := jsonlex.Space(p.in, from)
	if depth > p.maxDepth {
		return p.fail(i, jsonlex.ErrDepth)
	}
	if i >= len(p.in) {
		return p.fail(i, jsonlex.ErrSyntax)
	}
	var err error
	switch c := p.in[i]; {
	case c == '{':
		n.Kind = KindObject
		i, err = p.members(n, i+1, depth)
	case c == '[':
		n.Kind = KindArray
		i, err = p.elems(n, i+1, depth)
	case c == '"':
		n.Kind = KindString
		n.Text, i, err = p.str(i)
	case jsonlex.NumberStart(c):
		end, _, _, lexErr := jsonlex.Number(p.in, i)
		if lexErr != nil {
			return p.fail(end, lexErr)
		}
		n.Kind, n.Text, i = KindNumber, string(p.in[i:end]), end
	case jsonlex.Literal(p.in, i, "true"):
		n.Kind, n.Bool, i = KindBool, true, i+len("true")
	case jsonlex.Literal(p.in, i, "false"):
		n.Kind, i = KindBool, i+len("false")
	case jsonlex.Literal(p.in, i, "null"):
		n.Kind, i = KindNull, i+len("null")
	default:
		return p.fail(i, jsonlex.ErrSyntax)
	}
	if err != nil {
		return nil, err
	}
	n.End = int64(i)
	return n, nil
}

// str reads the string at i and returns its text and the offset past it.
func (p *parser) str(i int) (string, int, error) {
	raw, esc, end, err := jsonlex.String(p.in, i)
	if err != nil {
		_, err = p.fail(end, err)
		return "", end, err
	}
	if !esc {
		return string(raw), end, nil
	}
	p.text = jsonlex.AppendUnescaped(p.text[:0], raw)
	return string(p.text), end, nil
}

// elems reads the elements of the array n from i, past its '[', and
// returns the offset past its ']'.
func (p *parser) elems(n *Node, i, depth int) (int, error) {
	for first := true; ; first = false {
		end, more, err := jsonlex.Next(p.in, i, first, ']')
		if err != nil {
			_, err = p.fail(end, err)
			return end, err
		}
		if !more {
			return end, nil
		}
		p.stack = append(p.stack, step{index: len(n.Elems)})
		e, err := p.value(i, end, depth+1)
		if err != nil {
			return 0, err
		}
		p.stack = p.stack[:len(p.stack)-1]
		n.Elems = append(n.Elems, e)
		i = int(e.End)
	}
}

// members reads the members of the object n from i, past its '{', and
// returns the offset past its '}'.
func (p *parser) members(n *Node, i, depth int) (int, error) {
	for first := true; ; first = false {
		end, more, err := jsonlex.Next(p.in, i, first, '}')
		if err != nil {
			_, err = p.fail(end, err)
			return end, err
		}
		if !more {
			return end, nil
		}
		key, keyEnd, err := p.str(jsonlex.Space(p.in, end))
		if err != nil {
			return 0, err
		}
		p.stack = append(p.stack, step{key: key, index: -1})
		if end = jsonlex.Space(p.in, keyEnd); end >= len(p.in) || p.in[end] != ':' {
			_, err = p.fail(end, jsonlex.ErrSyntax)
			return 0, err
		}
		v, err := p.value(keyEnd, end+1, depth+1)
		if err != nil {
			return 0, err
		}
		p.stack = p.stack[:len(p.stack)-1]
		n.Members = append(n.Members, Member{Key: key, Value: v})
		i = int(v.End)
	}
}
