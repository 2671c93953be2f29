package jsonlex

// Space returns the offset of the first byte at or after i that is not
// JSON white space (space, tab, LF, CR), len(b) at the end.
func Space(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// Literal reports whether the literal lit ("true", "false" or "null")
// stands at b[i].
func Literal(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// Next reads, from i and after white space, what comes before the next
// member or element of an object or array whose opening bracket was read:
// the closing bracket closer (more false, end past it), or nothing before
// the first value and a comma before every other (more true, end past
// the comma). On a fault, end is its offset and err is ErrSyntax.
func Next(b []byte, i int, first bool, closer byte) (end int, more bool, err error) {
	i = Space(b, i)
	if i < len(b) && b[i] == closer {
		return i + 1, false, nil
	}
	if !first {
		if i >= len(b) || b[i] != ',' {
			return i, false, ErrSyntax
		}
		i++
	}
	return i, true, nil
}

// Key reads, from i and after white space, a member's key and the ':'
// after it. It returns the key's contents and whether they hold escapes
// (as String does) and the offset past the ':'. On a fault, end is its
// offset and err is String's error or ErrSyntax.
func Key(b []byte, i int) (key []byte, esc bool, end int, err error) {
	key, esc, end, err = String(b, Space(b, i))
	if err != nil {
		return nil, false, end, err
	}
	end = Space(b, end)
	if end >= len(b) || b[end] != ':' {
		return nil, false, end, ErrSyntax
	}
	return key, esc, end + 1, nil
}

// Skip reads, from i and after white space, one whole value that lies at
// nesting depth depth (the members or elements of a container at depth d
// lie at d+1), and returns the offset past it. A value deeper than
// maxDepth, scalar or container, is ErrDepth at its first byte, so the
// recursion is bounded by maxDepth-depth. On any other fault, end is its
// offset and err is ErrSyntax or String's error.
func Skip(b []byte, i, depth, maxDepth int) (end int, err error) {
	i = Space(b, i)
	if depth > maxDepth {
		return i, ErrDepth
	}
	if i >= len(b) {
		return i, ErrSyntax
	}
	var more bool
	switch c := b[i]; {
	case c == '{':
		i++
		for first := true; ; first = false {
			if i, more, err = Next(b, i, first, '}'); err != nil || !more {
				return i, err
			}
			if _, _, i, err = Key(b, i); err != nil {
				return i, err
			}
			if i, err = Skip(b, i, depth+1, maxDepth); err != nil {
				return i, err
			}
		}
	case c == '[':
		i++
		for first := true; ; first = false {
			if i, more, err = Next(b, i, first, ']'); err != nil || !more {
				return i, err
			}
			if i, err = Skip(b, i, depth+1, maxDepth); err != nil {
				return i, err
			}
		}
	case c == '"':
		_, _, end, err = String(b, i)
		return end, err
	case NumberStart(c):
		end, _, _, err = Number(b, i)
		return end, err
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if Literal(b, i, lit) {
			return i + len(lit), nil
		}
	}
	return i, ErrSyntax
}
