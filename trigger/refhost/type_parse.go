package refhost

// ParseType reads a type in the syntax Type.String writes:
//
//	type    = scalar | "list<" type ">" | "option<" type ">"
//	        | "tuple<" type *("," type) ">"
//	        | "record{" name ":" type *("," name ":" type) "}"
//	        | "enum{" name *("," name) "}"
//	        | "variant{" case *("," case) "}"
//	        | "result" [ "<" (type | "_") [ "," type ] ">" ]
//	case    = name [ "(" type ")" ]
//	scalar  = "bool" | "s8" | ... | "u64" | "f32" | "f64" | "char" | "string"
//
// with optional whitespace between tokens ("result<_>" is not a type:
// write "result"). The result is validated; ParseType(t.String()) returns
// t for every valid t. A syntax fault is a *TypeError with the byte
// Offset of the fault and Param -1.
func ParseType(s string) (Type, error) {
	if len(s) > maxTypeTextBytes {
		return Type{}, &TypeError{Param: -1, Offset: 0, Rule: RuleTooLarge}
	}
	p := typeParser{s: s}
	t, err := p.typ(1)
	if err != nil {
		return Type{}, err
	}
	p.space()
	if p.pos != len(p.s) {
		return Type{}, p.fail(RuleSyntax)
	}
	if err := t.Validate(); err != nil {
		return Type{}, err
	}
	return t, nil
}

// typeParser reads one type text.
type typeParser struct {
	s   string
	pos int
}

func (p *typeParser) fail(r Rule) *TypeError {
	return &TypeError{Param: -1, Offset: p.pos, Rule: r}
}

// space skips whitespace.
func (p *typeParser) space() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t' || p.s[p.pos] == '\n' || p.s[p.pos] == '\r') {
		p.pos++
	}
}

// word reads a run of letters, digits and '-' after whitespace; empty when
// there is none.
func (p *typeParser) word() string {
	p.space()
	start := p.pos
	for p.pos < len(p.s) {
		ch := p.s[p.pos]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-') {
			break
		}
		p.pos++
	}
	return p.s[start:p.pos]
}

// peek reports whether the next token is the punctuation ch.
func (p *typeParser) peek(ch byte) bool {
	p.space()
	return p.pos < len(p.s) && p.s[p.pos] == ch
}

// expect consumes the punctuation ch.
func (p *typeParser) expect(ch byte) *TypeError {
	if !p.peek(ch) {
		return p.fail(RuleSyntax)
	}
	p.pos++
	return nil
}

// name reads a member name.
func (p *typeParser) name() (string, *TypeError) {
	start := p.pos
	n := p.word()
	if !validName(n) {
		p.pos = start
		p.space()
		if n == "" {
			return "", p.fail(RuleSyntax)
		}
		return "", p.fail(RuleInvalidName)
	}
	return n, nil
}

// typ reads one type at depth.
func (p *typeParser) typ(depth int) (Type, *TypeError) {
	if depth > MaxTypeDepth {
		return Type{}, p.fail(RuleTooDeep)
	}
	start := p.pos
	w := p.word()
	switch w {
	case "list", "option":
		k := KindList
		if w == "option" {
			k = KindOption
		}
		if err := p.expect('<'); err != nil {
			return Type{}, err
		}
		e, err := p.typ(depth + 1)
		if err != nil {
			return Type{}, err
		}
		if err := p.expect('>'); err != nil {
			return Type{}, err
		}
		return Type{Kind: k, Elem: &e}, nil
	case "tuple":
		t := Type{Kind: KindTuple}
		err := p.list('<', '>', func() *TypeError {
			e, err := p.typ(depth + 1)
			t.Elems = append(t.Elems, e)
			return err
		})
		return t, err
	case "record":
		t := Type{Kind: KindRecord}
		err := p.list('{', '}', func() *TypeError {
			n, err := p.name()
			if err != nil {
				return err
			}
			if err := p.expect(':'); err != nil {
				return err
			}
			ft, err := p.typ(depth + 1)
			t.Fields = append(t.Fields, Field{Name: n, Type: ft})
			return err
		})
		return t, err
	case "enum", "variant":
		t := Type{Kind: KindEnum}
		if w == "variant" {
			t.Kind = KindVariant
		}
		err := p.list('{', '}', func() *TypeError {
			n, err := p.name()
			if err != nil {
				return err
			}
			c := Case{Name: n}
			if t.Kind == KindVariant && p.peek('(') {
				p.pos++
				pt, err := p.typ(depth + 1)
				if err != nil {
					return err
				}
				c.Payload = &pt
				if err := p.expect(')'); err != nil {
					return err
				}
			}
			t.Cases = append(t.Cases, c)
			return nil
		})
		return t, err
	case "result":
		return p.result(depth)
	}
	for k := KindBool; k <= KindString; k++ {
		if w == k.String() {
			return Type{Kind: k}, nil
		}
	}
	p.pos = start
	p.space()
	return Type{}, p.fail(RuleSyntax)
}

// list reads open, one or more items separated by ',', then close.
func (p *typeParser) list(open, close byte, item func() *TypeError) *TypeError {
	if err := p.expect(open); err != nil {
		return err
	}
	for {
		if err := item(); err != nil {
			return err
		}
		if p.peek(close) {
			p.pos++
			return nil
		}
		if err := p.expect(','); err != nil {
			return err
		}
	}
}

// result reads what follows the word "result".
func (p *typeParser) result(depth int) (Type, *TypeError) {
	t := Type{Kind: KindResult}
	if !p.peek('<') {
		return t, nil
	}
	p.pos++
	if p.peek('_') {
		p.pos++
		if err := p.expect(','); err != nil {
			return Type{}, err
		}
		e, err := p.typ(depth + 1)
		if err != nil {
			return Type{}, err
		}
		t.Err = &e
	} else {
		o, err := p.typ(depth + 1)
		if err != nil {
			return Type{}, err
		}
		t.Ok = &o
		if p.peek(',') {
			p.pos++
			e, err := p.typ(depth + 1)
			if err != nil {
				return Type{}, err
			}
			t.Err = &e
		}
	}
	if err := p.expect('>'); err != nil {
		return Type{}, err
	}
	return t, nil
}
