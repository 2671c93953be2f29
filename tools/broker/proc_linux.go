package broker

import "syscall"

// sysProcAttr puts the child in its own process group (a terminal's Ctrl-C
// reaches only the parent, which then stops the broker in order) and asks
// the kernel to SIGKILL it when the parent dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
