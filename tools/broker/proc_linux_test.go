package broker

import (
	"errors"
	"os"
	"testing"
	"time"
)

// TestWaitStoppedEnds: waitStopped on threads that never stop ends with
// the process (done closed, or no such process) or at its wait. The
// stopped case runs against the real server in TestPauseResume.
func TestWaitStoppedEnds(t *testing.T) {
	open, closed := make(chan struct{}), make(chan struct{})
	close(closed)
	for _, tc := range []struct {
		name string
		pid  int
		done chan struct{}
		wait time.Duration
		want error
	}{
		// This test process runs, so its threads are not stopped.
		{"running, wait passes", os.Getpid(), open, 20 * time.Millisecond, ErrPauseTimeout},
		{"running, process done", os.Getpid(), closed, time.Minute, ErrNotRunning},
		// Above the kernel's largest pid (2^22), so never a process.
		{"no such process", 1<<22 + 1, open, time.Minute, ErrNotRunning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := waitStopped(tc.pid, tc.done, tc.wait)
			if !errors.Is(err, tc.want) {
				t.Errorf("waitStopped = %v, want %v", err, tc.want)
			}
		})
	}
}
