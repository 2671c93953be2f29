package broker

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// sysProcAttr puts the child in its own process group (a terminal's Ctrl-C
// reaches only the parent, which then stops the broker in order) and asks
// the kernel to SIGKILL it when the parent dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// stopPoll is how often waitStopped reads the threads' states.
const stopPoll = time.Millisecond

// waitStopped waits until every thread of pid is stopped (state 'T' in
// /proc/<pid>/task/<tid>/stat), done is closed or pid is gone
// ([ErrNotRunning]), or wait passes ([ErrPauseTimeout]). The kernel stops the threads of a
// process one by one after SIGSTOP, each when it next handles signals, so
// the signal alone does not mean the process stopped; a stopped thread
// creates no other, so the check cannot be outrun.
func waitStopped(pid int, done <-chan struct{}, wait time.Duration) error {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(stopPoll)
	defer tick.Stop()
	for {
		stopped, err := threadsStopped(pid)
		if err != nil {
			return err
		}
		if stopped {
			return nil
		}
		select {
		case <-done:
			return ErrNotRunning
		case <-deadline.C:
			return ErrPauseTimeout
		case <-tick.C:
		}
	}
}

// threadsStopped reports whether every thread of pid is stopped. A thread
// that exits while it is read is skipped.
func threadsStopped(pid int) (bool, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, ErrNotRunning // reaped
	}
	if err != nil {
		return false, fmt.Errorf("broker: reading the server's threads: %w", err)
	}
	for _, e := range ents {
		stat, err := os.ReadFile(dir + "/" + e.Name() + "/stat")
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("broker: reading a server thread's state: %w", err)
		}
		// The state follows the command name, which is in parentheses
		// and may itself contain them: "tid (comm) S ...".
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 || i+2 >= len(stat) {
			return false, errors.New("broker: unexpected thread state of the server")
		}
		if stat[i+2] != 'T' {
			return false, nil
		}
	}
	return len(ents) > 0, nil
}
