package broker

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestServerVersionMatchesGoMod keeps ServerVersion and the pin in the
// harness's go.mod (tools/go.mod) in step.
func TestServerVersionMatchesGoMod(t *testing.T) {
	f, err := os.Open("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var pinned []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == ServerModule {
			pinned = append(pinned, fields[1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(pinned) != 1 || pinned[0] != "v"+ServerVersion {
		t.Errorf("tools/go.mod requires %s at %v, want exactly v%s", ServerModule, pinned, ServerVersion)
	}
}

// fakeServer writes an executable script that prints out for --version.
func fakeServer(t *testing.T, out string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nats-server")
	script := "#!/bin/sh\necho '" + out + "'\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		path string
		want error
	}{
		{"pinned", fakeServer(t, "nats-server: v"+ServerVersion), nil},
		{"other version", fakeServer(t, "nats-server: v2.14.5"), ErrWrongVersion},
		{"longer version", fakeServer(t, "nats-server: v"+ServerVersion+"1"), ErrWrongVersion},
		{"missing", filepath.Join(t.TempDir(), "none"), fs.ErrNotExist},
		{"directory", t.TempDir(), ErrWrongVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkVersion(t.Context(), tc.path)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("checkVersion = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestServerBinaryHonoursEnv: a binary named by the environment variable
// is used as it is and never replaced, even with the wrong version.
func TestServerBinaryHonoursEnv(t *testing.T) {
	right := fakeServer(t, "nats-server: v"+ServerVersion)
	wrong := fakeServer(t, "nats-server: v0.0.1")
	before, err := os.ReadFile(wrong)
	if err != nil {
		t.Fatal(err)
	}

	t.Setenv(EnvServer, right)
	if got, err := ServerBinary(t.Context()); err != nil || got != right {
		t.Errorf("ServerBinary = %q, %v; want %q", got, err, right)
	}

	t.Setenv(EnvServer, wrong)
	if _, err := ServerBinary(t.Context()); !errors.Is(err, ErrWrongVersion) {
		t.Errorf("ServerBinary with a wrong version = %v, want ErrWrongVersion", err)
	}
	after, err := os.ReadFile(wrong)
	if err != nil || string(after) != string(before) {
		t.Errorf("the binary named by %s was changed", EnvServer)
	}
}

func TestLockFileExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := lockFile(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to the open file description, so a second open
	// in this process contends like another process would.
	ctx, cancel := context.WithTimeout(t.Context(), 3*lockPoll)
	defer cancel()
	if _, err := lockFile(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock while held = %v, want context.DeadlineExceeded", err)
	}
	unlock()
	ctx, cancel = context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	unlock2, err := lockFile(ctx, path)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock2()
}

// TestEnsureBinaryBuildsOnce builds the pinned server into an empty
// directory from two goroutines at once (the lock makes one wait for the
// other's build), then finds it without building.
func TestEnsureBinaryBuildsOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	path := filepath.Join(t.TempDir(), "cache", BinaryName)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			got, err := EnsureBinary(ctx, path)
			if err == nil && got != path {
				err = errors.New("EnsureBinary returned another path")
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureBinary(ctx, path); err != nil {
		t.Fatal(err)
	}
	st2, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !st2.ModTime().Equal(st.ModTime()) || !os.SameFile(st, st2) {
		t.Error("the binary was rebuilt although it was in place")
	}
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{BinaryName, BinaryName + ".lock"}; !slices.Equal(names, want) {
		t.Errorf("cache directory holds %v, want %v", names, want)
	}
}
