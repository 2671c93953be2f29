//go:build !race

package trigger_test

// idleRaceAllocs is the extra allocations per empty step the race
// detector's instrumentation costs.
const idleRaceAllocs = 0
