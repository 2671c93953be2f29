package refhost

import "strconv"

// Validate reports whether t follows the rules: a known Kind, exactly the
// parts that kind has, members where it needs them, WIT identifiers as
// names, each used once per type, depth at most MaxTypeDepth and at most
// MaxTypeNodes types. The error is a *TypeError with Param -1.
func (t Type) Validate() error {
	c := typeChecker{param: -1}
	if err := c.check(&t, "", 1); err != nil {
		return err
	}
	return nil
}

// typeChecker walks one signature's types, counting nodes across them.
type typeChecker struct {
	param int
	nodes int
}

func (c *typeChecker) fail(path string, r Rule) *TypeError {
	return &TypeError{Param: c.param, Path: path, Offset: -1, Rule: r}
}

// count adds one node.
func (c *typeChecker) count(path string) *TypeError {
	c.nodes++
	if c.nodes > MaxTypeNodes {
		return c.fail(path, RuleTooLarge)
	}
	return nil
}

// check validates t at path and depth (1 for a parameter).
func (c *typeChecker) check(t *Type, path string, depth int) *TypeError {
	if depth > MaxTypeDepth {
		return c.fail(path, RuleTooDeep)
	}
	if err := c.count(path); err != nil {
		return err
	}
	if t.Kind == 0 || t.Kind >= kindEnd {
		return c.fail(path, RuleUnknownKind)
	}
	if !t.shapeOK() {
		return c.fail(path, RuleShape)
	}
	switch t.Kind {
	case KindList, KindOption:
		return c.check(t.Elem, path+".elem", depth+1)
	case KindTuple:
		if len(t.Elems) == 0 {
			return c.fail(path, RuleEmpty)
		}
		for i := range t.Elems {
			if err := c.check(&t.Elems[i], path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
				return err
			}
		}
	case KindRecord:
		if len(t.Fields) == 0 {
			return c.fail(path, RuleEmpty)
		}
		for i, f := range t.Fields {
			if err := c.name(path, f.Name, i, func(j int) string { return t.Fields[j].Name }); err != nil {
				return err
			}
			if err := c.check(&t.Fields[i].Type, path+"."+f.Name, depth+1); err != nil {
				return err
			}
		}
	case KindEnum, KindVariant:
		if len(t.Cases) == 0 {
			return c.fail(path, RuleEmpty)
		}
		for i, cs := range t.Cases {
			if err := c.name(path, cs.Name, i, func(j int) string { return t.Cases[j].Name }); err != nil {
				return err
			}
			if cs.Payload == nil {
				continue
			}
			if t.Kind == KindEnum {
				return c.fail(path+"."+cs.Name, RuleShape)
			}
			if err := c.check(cs.Payload, path+"."+cs.Name, depth+1); err != nil {
				return err
			}
		}
	case KindResult:
		if t.Ok != nil {
			if err := c.check(t.Ok, path+".ok", depth+1); err != nil {
				return err
			}
		}
		if t.Err != nil {
			if err := c.check(t.Err, path+".err", depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// name checks the i-th member name of the type at path: counted as a
// node, a WIT identifier, and not used by an earlier member.
func (c *typeChecker) name(path, name string, i int, nameAt func(int) string) *TypeError {
	if err := c.count(path); err != nil {
		return err
	}
	if !validName(name) {
		return c.fail(path, RuleInvalidName)
	}
	for j := range i {
		if nameAt(j) == name {
			return c.fail(path+"."+name, RuleDuplicateName)
		}
	}
	return nil
}

// shapeOK reports whether t has exactly the parts its kind has.
func (t *Type) shapeOK() bool {
	elem := t.Elem != nil
	elems := t.Elems != nil
	fields := t.Fields != nil
	cases := t.Cases != nil
	sides := t.Ok != nil || t.Err != nil
	switch t.Kind {
	case KindList, KindOption:
		return elem && !elems && !fields && !cases && !sides
	case KindTuple:
		return !elem && !fields && !cases && !sides
	case KindRecord:
		return !elem && !elems && !cases && !sides
	case KindEnum, KindVariant:
		return !elem && !elems && !fields && !sides
	case KindResult:
		return !elem && !elems && !fields && !cases
	}
	return !elem && !elems && !fields && !cases && !sides
}

// validName reports whether s is a WIT identifier of at most 64
// bytes: words of [a-z][a-z0-9]* or [A-Z][A-Z0-9]* joined by single '-'.
func validName(s string) bool {
	if s == "" || len(s) > maxFieldNameLen {
		return false
	}
	start := true // at the first byte of a word
	var upper bool
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case start:
			switch {
			case ch >= 'a' && ch <= 'z':
				upper = false
			case ch >= 'A' && ch <= 'Z':
				upper = true
			default:
				return false
			}
			start = false
		case ch == '-':
			start = true
		case ch >= '0' && ch <= '9':
		case !upper && ch >= 'a' && ch <= 'z':
		case upper && ch >= 'A' && ch <= 'Z':
		default:
			return false
		}
	}
	return !start
}
