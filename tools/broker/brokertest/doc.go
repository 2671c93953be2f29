// Package brokertest owns the pinned broker (package broker) of one test:
// it starts it and removes it, and everything it wrote, when the test ends,
// also when the test fails; it refuses to outlive the test. WriteInputs
// writes what an operator gives the tools for that broker: a
// configuration and a credentials file naming each tenant's
// administrator.
package brokertest
