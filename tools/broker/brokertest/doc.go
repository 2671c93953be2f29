// Package brokertest starts a pinned broker (package broker) for a test
// and removes it, and everything it wrote, when the test ends, also when
// the test fails; it refuses to outlive the test.
package brokertest
