package acksubject

// Hooks for the differential tests in package acksubject_test, which share
// the generators of the property tests.

// ReferenceParse is refParse: Parse as it was before the one-pass scan.
func ReferenceParse(subject string) (Info, error) { return refParse(subject) }

// Scan runs the one-pass reader alone: the Info and true for a subject
// inside the grammar, false otherwise.
func Scan(subject string) (Info, bool) {
	var info Info
	var sp spans
	ok := scan(subject, &info, &sp) == nil
	if ok {
		info.AccountHash = subject[sp.hash[0]:sp.hash[1]]
		info.Stream = subject[sp.stream[0]:sp.stream[1]]
		info.Consumer = subject[sp.consumer[0]:sp.consumer[1]]
	}
	return info, ok
}

// Fixed tokens of the grammar the external tests build subjects with.
const (
	ClassicTokens  = classicTokens
	NoDomain       = noDomain
	Prefix         = ackPrefix
	V2Tokens       = v2Tokens
	AccountHashLen = accountHashLen
)
