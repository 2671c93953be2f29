package refhost

import "fmt"

// Contract declares the functions a contract offers and their types. A
// declared contract makes every activation through it check, at its final
// start check, that the function the pinned revision registered has the
// declared parameter types and result type; a revision built against
// another version of the contract ends as trigger.OutcomeIncompatibleContract
// without running. A contract never declared is taken as each revision
// registered it.
type Contract struct {
	// Name is the contract, as bindings and Function.Contract name it.
	Name string
	// Functions are its functions, 1..256, each named
	// once.
	Functions []ContractFunction
}

// ContractFunction is one function of a Contract.
type ContractFunction struct {
	Name   string
	Params []Type
	// Result is the declared result type, nil for none.
	Result *Type
}

// contractFunc is a validated ContractFunction, kept as the canonical
// text of its types.
type contractFunc struct {
	params, result string
}

// DeclareContract declares c, replacing an earlier declaration of the same
// name; activations started after it are checked against it. Errors:
// ErrInvalidName for a contract or function name outside the identifier
// rules, ErrInvalidContract (wrapping the *TypeError of an invalid type).
func (h *Host) DeclareContract(c Contract) error {
	if !validIdentifier(c.Name) {
		return ErrInvalidName
	}
	if len(c.Functions) == 0 || len(c.Functions) > maxContractFunctions {
		return fmt.Errorf("%w: %d functions outside 1..%d", ErrInvalidContract, len(c.Functions), maxContractFunctions)
	}
	fns := make(map[string]contractFunc, len(c.Functions))
	for i, f := range c.Functions {
		if !validIdentifier(f.Name) {
			return ErrInvalidName
		}
		if _, dup := fns[f.Name]; dup {
			return fmt.Errorf("%w: function %d named twice", ErrInvalidContract, i)
		}
		sig, result, err := functionType(f.Params, f.Result)
		if err != nil {
			return fmt.Errorf("%w: function %d: %w", ErrInvalidContract, i, err)
		}
		fns[f.Name] = contractFunc{params: sig.String(), result: result}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.contracts[c.Name] = fns
	return nil
}

// RemoveContract withdraws the declaration of a contract: its functions
// are taken again as each revision registered them.
func (h *Host) RemoveContract(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.contracts, name)
}

// compatible reports whether f, registered for contract and name, matches
// the contract's declaration, if any. h.mu is held.
func (h *Host) compatible(contract, name string, f *function) bool {
	fns, declared := h.contracts[contract]
	if !declared {
		return true
	}
	cf, ok := fns[name]
	return ok && cf.params == f.params && cf.result == f.result
}

// functionType validates a function's parameter and result types, for a
// registration and a contract alike: the signature, and the result's
// canonical text (empty for none), which is what a contract compares.
func functionType(params []Type, result *Type) (*Signature, string, error) {
	sig, err := NewSignature(params...)
	if err != nil {
		return nil, "", err
	}
	if result == nil {
		return sig, "", nil
	}
	if err := result.Validate(); err != nil {
		return nil, "", fmt.Errorf("result: %w", err)
	}
	return sig, result.String(), nil
}
