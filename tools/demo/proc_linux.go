package main

import (
	"os"
	"syscall"
)

// stopWithParent asks the kernel to send this process SIGTERM when its
// parent dies, and reports whether the parent is still the one it started
// with. `go run` and make do not forward SIGTERM to the program they run:
// without this, terminating them would leave the demo and its broker
// running. It is best effort: where prctl is refused the demo runs
// without it.
func stopWithParent() bool {
	ppid := os.Getppid()
	syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0)
	return os.Getppid() == ppid
}
