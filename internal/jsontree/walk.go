package jsontree

// Want is one key of an object's schema.
type Want struct {
	// Name is the key, as the schema writes it (a plain name: see Key).
	Name string
	// Kind is the JSON type the value must have; 0 leaves the check to
	// Set.
	Kind Kind
	// Optional keys may be absent.
	Optional bool
	// Set, when not nil, receives the value and its path.
	Set func(path string, n *Node)
}

// Walker applies a schema, one object or array at a time, to a tree that
// Parse read, and reports every fault with its path; it stops at none.
// The package that owns a format writes its schema as calls to Object and
// Array and maps the sentinels onto its own rules.
type Walker struct {
	// Report receives each fault: the path of the value at fault and
	// ErrUnknownKey, ErrDuplicateKey, ErrMissingKey or ErrWrongType.
	Report func(path string, err error)
}

// Object applies want to n, at path. n not an object is ErrWrongType at
// path. In input order, each member's key is looked up in want: a key
// want does not name is ErrUnknownKey, and a key seen before in n (named
// or not) is ErrDuplicateKey, both at Key(path, key); the value of a named
// key seen first is ErrWrongType at Field(path, name) when it is not of
// the Kind wanted, and is otherwise handed to Set. A required key absent is
// ErrMissingKey at Field(path, name).
//
// It returns the value of each key wanted, at its index in want, nil
// where absent or of the wrong type (all nil when n is not an object).
func (w Walker) Object(path string, n *Node, want []Want) []*Node {
	got := make([]*Node, len(want))
	if n.Kind != KindObject {
		w.Report(path, ErrWrongType)
		return got
	}
	seen := make([]bool, len(want))
	var unknown map[string]bool // keys want does not name, made at the first
	for _, m := range n.Members {
		j := -1
		for i := range want {
			if want[i].Name == m.Key {
				j = i
				break
			}
		}
		switch {
		case j >= 0 && seen[j], j < 0 && unknown[m.Key]:
			w.Report(Key(path, m.Key), ErrDuplicateKey)
			continue
		case j < 0:
			if unknown == nil {
				unknown = make(map[string]bool)
			}
			unknown[m.Key] = true
			w.Report(Key(path, m.Key), ErrUnknownKey)
			continue
		}
		seen[j] = true
		p := Field(path, want[j].Name)
		if want[j].Kind != 0 && m.Value.Kind != want[j].Kind {
			w.Report(p, ErrWrongType)
			continue
		}
		got[j] = m.Value
		if want[j].Set != nil {
			want[j].Set(p, m.Value)
		}
	}
	for i := range want {
		if !seen[i] && !want[i].Optional {
			w.Report(Field(path, want[i].Name), ErrMissingKey)
		}
	}
	return got
}

// Array returns the elements of n, at path; n not an array is
// ErrWrongType at path, and no elements.
func (w Walker) Array(path string, n *Node) []*Node {
	if n.Kind != KindArray {
		w.Report(path, ErrWrongType)
		return nil
	}
	return n.Elems
}
