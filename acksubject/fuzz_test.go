package acksubject_test

import (
	"testing"

	"github.com/latent-systems/latent-nats/acksubject"
)

// FuzzParse feeds arbitrary bytes to Parse and checks the invariants of
// checkSubject: refusals are well-formed *SyntaxErrors; an accepted subject
// re-encodes to the same bytes, re-parses to the same Info, and its strict
// prefixes are refused except where the grammar itself allows them. The
// committed corpus is in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add([]byte(liveClassic))
	f.Add([]byte(liveV2NoDomain))
	f.Add([]byte(maxInfo(acksubject.FormV2).String()))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkSubject(t, string(b))
	})
}
