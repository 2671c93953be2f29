//go:build !unix

package main

import "time"

// cpuTime is not measured on this platform: it reports 0.
func cpuTime() (user, sys time.Duration) { return 0, 0 }
