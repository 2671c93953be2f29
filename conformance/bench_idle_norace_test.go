//go:build !race

package conformance_test

// idleRaceAllocs is the extra allocations per empty step the race
// detector's instrumentation costs.
const idleRaceAllocs = 0
