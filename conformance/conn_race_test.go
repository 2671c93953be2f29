//go:build race

package conformance_test

// connRaceAllocs is the extra allocation per request the race detector's
// instrumentation costs.
const connRaceAllocs = 1
