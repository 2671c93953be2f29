//go:build unix

package main

import (
	"syscall"
	"time"
)

// cpuTime is this process's user and system CPU time so far, every thread
// included (the runtime's, the garbage collector's); a child process such
// as the broker is not counted.
func cpuTime() (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}
