package acksubject

// Binding is the stream and consumer a binding pulls from: every
// acknowledgement subject it acts on must name them.
type Binding struct {
	// Stream and Consumer are the configured names.
	Stream   string
	Consumer string
	// AccountHash is the expected v2 account hash (AccountHash of the
	// account's name), or empty when unknown. A classic subject carries no
	// account hash, so this field constrains v2 subjects only.
	AccountHash string
}

// Check reports whether i is a valid Info (see Info.Validate) that names
// b's stream and consumer and, when b.AccountHash is set and i is of the v2
// form, b's account hash. A mismatch is a *MismatchError for the first
// field that differs, in the order stream, consumer, account hash.
func (b Binding) Check(i Info) error {
	if err := i.Validate(); err != nil {
		return err
	}
	return b.match(i)
}

// match compares a valid i with b.
func (b Binding) match(i Info) error {
	if i.Stream != b.Stream {
		return &MismatchError{Field: FieldStream}
	}
	if i.Consumer != b.Consumer {
		return &MismatchError{Field: FieldConsumer}
	}
	if b.AccountHash != "" && i.Form == FormV2 && i.AccountHash != b.AccountHash {
		return &MismatchError{Field: FieldAccountHash}
	}
	return nil
}

// Parse parses subject and checks it against b: the one call to make on
// the reply of a pulled message before acting on it. It does not allocate
// when the subject is accepted.
func (b Binding) Parse(subject string) (Info, error) {
	info, err := Parse(subject)
	if err != nil {
		return Info{}, err
	}
	if err := b.match(info); err != nil {
		return Info{}, err
	}
	return info, nil
}

// ParseBytes is Parse for a subject held in a byte slice (a reused
// buffer), read during the call only, and checked against b. It does not
// allocate when the subject is accepted: the Info's Stream and Consumer
// are b's (the subject's names were compared with them as bytes), and its
// AccountHash is b.AccountHash, which a v2 subject must then carry. With
// b.AccountHash empty, a v2 subject's hash is copied (one allocation).
// Errors are Parse's, then Binding.Check's.
func (b Binding) ParseBytes(subject []byte) (Info, error) {
	if len(subject) > MaxLen {
		return Info{}, syntaxError(-1, FieldSubject, RuleTooLong)
	}
	var info Info
	var sp spans
	if e := scan(subject, &info, &sp); e != nil {
		return Info{}, e
	}
	switch {
	case string(subject[sp.stream[0]:sp.stream[1]]) != b.Stream:
		return Info{}, &MismatchError{Field: FieldStream}
	case string(subject[sp.consumer[0]:sp.consumer[1]]) != b.Consumer:
		return Info{}, &MismatchError{Field: FieldConsumer}
	}
	info.Stream, info.Consumer = b.Stream, b.Consumer
	if info.Form == FormV2 {
		hash := subject[sp.hash[0]:sp.hash[1]]
		switch {
		case b.AccountHash == "":
			info.AccountHash = string(hash)
		case string(hash) != b.AccountHash:
			return Info{}, &MismatchError{Field: FieldAccountHash}
		default:
			info.AccountHash = b.AccountHash
		}
	}
	return info, nil
}
