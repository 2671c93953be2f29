package broker

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// childEnv returns the whole environment of the server process.
func childEnv() []string { return []string{"GOMEMLIMIT=256MiB", "GOMAXPROCS=1"} }

// process is one running nats-server.
type process struct {
	cmd  *exec.Cmd
	sink *logSink
	done chan struct{} // closed when the process has been reaped
	err  error         // Wait's result; read only after done
}

// spawn starts the server with the configuration file in dir. The goroutine
// that starts the child stays locked to its OS thread until the child is
// reaped, because Linux sends the parent-death signal when that thread
// exits, not only when the process does.
func spawn(bin, dir string, sink *logSink) (*process, error) {
	cmd := exec.Command(bin, "-c", dir+"/"+configFile)
	cmd.Dir = dir
	cmd.Env = childEnv()
	cmd.Stdout = sink
	cmd.Stderr = sink
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = time.Second
	p := &process{cmd: cmd, sink: sink, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(p.done)
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
	}()
	if err := <-started; err != nil {
		<-p.done
		return nil, fmt.Errorf("broker: starting nats-server: %w", err)
	}
	return p, nil
}

// waitReady waits for the readiness marker, the end of the process or the
// end of ctx; it kills the process unless it became ready.
func (p *process) waitReady(ctx context.Context) error {
	select {
	case <-p.sink.ready:
		if !p.sink.listenAddr().IsValid() {
			p.kill()
			return ErrNotReady
		}
		return nil
	case <-p.done:
		return fmt.Errorf("%w: %w", ErrExited, p.err)
	case <-ctx.Done():
		p.kill()
		return fmt.Errorf("broker: waiting for the server: %w", ctx.Err())
	}
}

// terminate asks the server to shut down (SIGTERM) and waits for it; if
// expire is closed first, it kills the process. It reports whether the
// shutdown was graceful.
func (p *process) terminate(expire <-chan struct{}) bool {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return true
	case <-expire:
		p.kill()
		return false
	}
}

// kill sends SIGKILL and waits until the process has been reaped.
func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

func (p *process) pid() int { return p.cmd.Process.Pid }
