package broker_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/tools/broker"
)

// Environment of the helper process TestKilledParentLeavesNoBroker runs:
// the test binary itself, started in a mode where it only starts a broker.
const (
	helperBinaryEnv = "LATENT_BROKER_TEST_HELPER_BINARY"
	helperDirEnv    = "LATENT_BROKER_TEST_HELPER_DIR"
)

func TestMain(m *testing.M) {
	if bin := os.Getenv(helperBinaryEnv); bin != "" {
		os.Exit(helperMain(bin, os.Getenv(helperDirEnv)))
	}
	os.Exit(m.Run())
}

// helperMain starts a broker, prints its pid and waits for stdin to close
// (it never does: the parent kills this process).
func helperMain(bin, dir string) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := broker.Start(ctx, broker.Options{Tenants: []string{"t1"}, Binary: bin, Dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("pid %d\n", b.PID())
	var buf [1]byte
	_, _ = os.Stdin.Read(buf[:])
	_ = b.Close()
	return 0
}

// TestKilledParentLeavesNoBroker kills (SIGKILL, no cleanup at all) a
// process that started a broker and checks that the broker dies with it.
func TestKilledParentLeavesNoBroker(t *testing.T) {
	t.Parallel()
	bin, err := broker.ServerBinary(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperBinaryEnv+"="+bin, helperDirEnv+"="+t.TempDir())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()

	if err := stdout.(*os.File).SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the helper's broker pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "pid "))
	if err != nil || pid <= 0 {
		t.Fatalf("helper printed %q", line)
	}
	if processGone(t, pid) {
		t.Fatalf("broker %d not running before its parent is killed", pid)
	}

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed = true

	// The kernel signals the orphan at once; allow it a bounded time to
	// die and be reaped.
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !processGone(t, pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL) // leave nothing behind
			t.Fatalf("broker %d survived its killed parent", pid)
		}
		<-tick.C
	}
}
