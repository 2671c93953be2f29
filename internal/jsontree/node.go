package jsontree

import (
	"strconv"
	"strings"
)

// Kind is the JSON type of a Node.
type Kind uint8

// The JSON types.
const (
	KindNull Kind = iota + 1
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
	kindEnd
)

// String returns the JSON name of the type ("null", "object", ...).
func (k Kind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindBool:
		return "bool"
	case KindNumber:
		return "number"
	case KindString:
		return "string"
	case KindArray:
		return "array"
	case KindObject:
		return "object"
	default:
		return "Kind(" + strconv.Itoa(int(k)) + ")"
	}
}

// Node is one JSON value and the byte span [Start, End) of the input it was
// read from. Start is where the previous token ended, so the span includes
// the white space and the separator (':' or ',') before the value; the
// spans of the elements or members of a container follow each other
// without a gap, inside the container's span.
type Node struct {
	Kind Kind
	// Text is the unescaped value of a KindString and the literal text of
	// a KindNumber ("1e2" stays "1e2").
	Text string
	// Bool is the value of a KindBool.
	Bool bool
	// Elems are the elements of a KindArray, in order.
	Elems []*Node
	// Members are the members of a KindObject, in input order, duplicate
	// keys included.
	Members []Member
	// Start and End are byte offsets into the input.
	Start, End int64
}

// Member is one key of an object and its value.
type Member struct {
	Key   string
	Value *Node
}

// Locate returns the path (see Key and Index) of the deepest value under n
// whose span holds the byte offset off, n itself being "". An offset
// outside every child's span, such as the closing delimiter of a
// container, locates the container. A nil n locates "".
func (n *Node) Locate(off int64) string { return n.locate(off, "") }

func (n *Node) locate(off int64, path string) string {
	if n == nil {
		return path
	}
	for _, m := range n.Members {
		if off >= m.Value.Start && off < m.Value.End {
			return m.Value.locate(off, Key(path, m.Key))
		}
	}
	for i, e := range n.Elems {
		if off >= e.Start && off < e.End {
			return e.locate(off, Index(path, i))
		}
	}
	return path
}

// Int returns the value of a KindNumber written as an integer (no
// fraction, no exponent) that fits a signed integer of bitSize bits. A
// value of another kind, a fraction or an exponent is ErrWrongType; an
// integer out of range is strconv's *NumError matching strconv.ErrRange.
func (n *Node) Int(bitSize int) (int64, error) {
	if n.Kind != KindNumber || strings.ContainsAny(n.Text, ".eE") {
		return 0, ErrWrongType
	}
	return strconv.ParseInt(n.Text, 10, bitSize)
}
