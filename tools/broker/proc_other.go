//go:build unix && !linux

package broker

import (
	"syscall"
	"time"
)

// sysProcAttr puts the child in its own process group. Outside Linux there
// is no parent-death signal: a killed parent leaves the broker running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// waitStopped returns at once: outside Linux the threads' states are not
// read, so [Broker.Pause] returns once SIGSTOP is sent.
func waitStopped(pid int, done <-chan struct{}, wait time.Duration) error { return nil }
