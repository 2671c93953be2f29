// Package brokertest owns the pinned broker (package broker) of one test:
// it starts it and removes it, and everything it wrote, when the test ends,
// also when the test fails; it refuses to outlive the test.
package brokertest
