//go:build unix && !linux

package broker

import "syscall"

// sysProcAttr puts the child in its own process group. Outside Linux there
// is no parent-death signal: a killed parent leaves the broker running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
