package refhost

import "strings"

// Signature is a validated parameter list: the declared argument types of
// one function. It is immutable and safe for concurrent use.
type Signature struct {
	params []Type
}

// NewSignature validates params (at most 32, each a valid Type, at
// most MaxTypeNodes types in all) and returns a Signature holding a deep
// copy of them. An error is a *TypeError naming the parameter. No
// parameters is a valid signature: its payload is "[]".
func NewSignature(params ...Type) (*Signature, error) {
	if len(params) > maxParams {
		return nil, &TypeError{Param: maxParams, Offset: -1, Rule: RuleParamCount}
	}
	var c typeChecker
	for i := range params {
		c.param = i
		if err := c.check(&params[i], "", 1); err != nil {
			return nil, err
		}
	}
	s := &Signature{params: make([]Type, len(params))}
	for i := range params {
		s.params[i] = params[i].clone()
	}
	return s, nil
}

// Params returns a deep copy of the parameter types.
func (s *Signature) Params() []Type {
	out := make([]Type, len(s.params))
	for i := range s.params {
		out[i] = s.params[i].clone()
	}
	return out
}

// String returns the parameter types in parentheses, for instance
// "(u64, list<string>)".
func (s *Signature) String() string {
	var b strings.Builder
	b.WriteByte('(')
	for i := range s.params {
		if i > 0 {
			b.WriteString(", ")
		}
		s.params[i].write(&b, 0)
	}
	b.WriteByte(')')
	return b.String()
}
