//go:build !race

package conformance_test

// connRaceAllocs is the extra allocation per request the race detector's
// instrumentation costs; none without it.
const connRaceAllocs = 0
