package acksubject

// Hooks for the differential tests in package acksubject_test, which share
// the generators of the property tests.

// ReferenceParse is refParse: Parse as it was before the one-pass scan.
func ReferenceParse(subject string) (Info, error) { return refParse(subject) }

// Scan runs the one-pass recognizer alone: the Info and true for a subject
// inside the grammar, false otherwise.
func Scan(subject string) (Info, bool) {
	var info Info
	ok := scan(subject, &info)
	return info, ok
}

// ParseWithoutScan is Parse with the one-pass recognizer left out, so that
// every subject is read token by token.
func ParseWithoutScan(subject string) (Info, error) {
	if len(subject) > MaxLen {
		return Info{}, syntaxError(-1, FieldSubject, RuleTooLong)
	}
	return parseTokens(subject)
}
