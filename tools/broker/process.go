package broker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// childEnv returns the whole environment of the server process.
func childEnv() []string { return []string{"GOMEMLIMIT=256MiB", "GOMAXPROCS=1"} }

// process is one running nats-server.
type process struct {
	cmd    *exec.Cmd
	sink   *logSink
	done   chan struct{} // closed when the process has been reaped
	err    error         // Wait's result; read only after done
	paused atomic.Bool   // SIGSTOP sent by pause and no SIGCONT since
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
		return p.exitError()
	case <-ctx.Done():
		p.kill()
		return fmt.Errorf("broker: waiting for the server: %w", ctx.Err())
	}
}

// waitRoutes waits for the route listener marker, which the server's
// routing goroutine may log after readiness, the end of the process or the
// end of ctx; it kills the process unless the marker came.
func (p *process) waitRoutes(ctx context.Context) error {
	select {
	case <-p.sink.routes:
		return nil
	case <-p.done:
		return p.exitError()
	case <-ctx.Done():
		p.kill()
		return fmt.Errorf("broker: waiting for the route listener: %w", ctx.Err())
	}
}

// exitError is [ErrExited] for a process reaped before it was ready, with
// its exit status and the message of its fatal line; a listener's port
// held by another socket is also [ErrPortTaken]. Read only after done.
func (p *process) exitError() error {
	fatal := p.sink.fatalLine()
	switch {
	case fatal == "":
		return fmt.Errorf("%w: %w", ErrExited, p.err)
	case strings.Contains(fatal, portTakenText):
		return fmt.Errorf("%w: %w: %w: %s", ErrExited, ErrPortTaken, p.err, fatal)
	}
	return fmt.Errorf("%w: %w: %s", ErrExited, p.err, fatal)
}

// exited reports whether the process has been reaped.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// signal sends sig; a process that has already been reaped is
// [ErrNotRunning].
func (p *process) signal(sig syscall.Signal) error {
	err := p.cmd.Process.Signal(sig)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, os.ErrProcessDone):
		return ErrNotRunning
	default:
		return fmt.Errorf("broker: sending %v to the server: %w", sig, err)
	}
}

// pause sends SIGSTOP and waits until every thread of the process has
// stopped (see waitStopped), the process ends or [PauseWait] passes.
func (p *process) pause() error {
	if p.paused.Load() {
		return nil
	}
	if err := p.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	p.paused.Store(true)
	return waitStopped(p.pid(), p.done, PauseWait)
}

// resume sends SIGCONT, which the kernel acts on before kill(2) returns:
// every stopped thread is runnable again when resume returns.
func (p *process) resume() error {
	if err := p.signal(syscall.SIGCONT); err != nil {
		return err
	}
	p.paused.Store(false)
	return nil
}

// end sends SIGCONT (a stopped process acts on no signal but SIGKILL until
// it is continued), then sig, and waits for the process to exit; if expire
// is closed first, it kills the process. It reports whether the process
// exited before expire. A process already reaped counts as exited.
func (p *process) end(sig syscall.Signal, expire <-chan struct{}) bool {
	_ = p.resume()
	_ = p.signal(sig)
	select {
	case <-p.done:
		return true
	case <-expire:
		p.kill()
		return false
	}
}

// stacks ends the process with SIGQUIT, on which the Go runtime writes
// every goroutine's stack to standard error before it exits, and returns
// what the process wrote from the signal to its end; if expire is closed
// first, it kills the process. It reports whether the process ended on
// the signal.
func (p *process) stacks(expire <-chan struct{}) ([]byte, bool) {
	p.sink.startCapture()
	ended := p.end(syscall.SIGQUIT, expire)
	return p.sink.endCapture(), ended
}

// terminate asks the server to shut down (SIGTERM) and waits for it; if
// expire is closed first, it kills the process. It reports whether the
// shutdown was graceful.
func (p *process) terminate(expire <-chan struct{}) bool {
	return p.end(syscall.SIGTERM, expire)
}

// kill sends SIGKILL, which ends a stopped process too, and waits until
// the process has been reaped.
func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
	p.paused.Store(false)
}

func (p *process) pid() int { return p.cmd.Process.Pid }
