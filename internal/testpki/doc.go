// Package testpki owns the generated certificate authorities and client
// certificates of tests and the broker harness; it refuses to be a source
// of production identities (keys are generated in memory, no revocation,
// no persistence). Standard library only.
package testpki
