package broker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

const (
	// ServerVersion is the nats-server version tools/go.mod pins as a
	// tool.
	ServerVersion = "2.14.6"
	// ServerModule is the module path of nats-server.
	ServerModule = "github.com/nats-io/nats-server/v2"
	// EnvServer names the environment variable [ServerBinary] reads.
	EnvServer = "LATENT_NATS_SERVER"
	// EnvServerVersion names the opt-in to a nats-server other than
	// ServerVersion (make compat): with it set to a version such as
	// 2.15.3, [ServerBinary] returns the binary EnvServer names when it
	// reports that version, and never builds one.
	EnvServerVersion = "LATENT_NATS_SERVER_VERSION"
	// BinaryName is the file name of the cached binary.
	BinaryName = "nats-server-v" + ServerVersion
	// CacheSubdir is the directory under the user cache directory that
	// holds the binary when EnvServer is not set.
	CacheSubdir = "latent-nats"

	// lockPoll is how often a waiting builder retries the build lock.
	lockPoll = 50 * time.Millisecond
	// maxVersionOutput bounds what is read from `nats-server --version`.
	maxVersionOutput = 256
)

// ServerBinary returns the path of a nats-server binary of [ServerVersion],
// building it if needed. It is the one function of this package that reads
// the environment:
//
//   - if LATENT_NATS_SERVER_VERSION is set to another version than
//     ServerVersion (the explicit opt-in of make compat), LATENT_NATS_SERVER
//     must name a binary that reports exactly that version
//     ([ErrWrongVersion] otherwise); it is used as it is and never built;
//   - if LATENT_NATS_SERVER is set, that path is used: a binary there must
//     report ServerVersion ([ErrWrongVersion] otherwise, and it is never
//     replaced); a missing one is built there;
//   - otherwise the path is `<user cache dir>/latent-nats/nats-server-v2.14.6`
//     (os.UserCacheDir), rebuilt if it reports another version.
//
// Building runs `go build` of [ServerModule] in the module of the working
// directory (which must pin ServerVersion), under an exclusive file lock next
// to the binary, into a temporary name that is renamed into place, so
// parallel callers build once. A cold build takes about 30 s; ctx bounds the
// wait for the lock and the build.
func ServerBinary(ctx context.Context) (string, error) {
	if v := os.Getenv(EnvServerVersion); v != "" && v != ServerVersion {
		return otherBinary(ctx, os.Getenv(EnvServer), v)
	}
	if p := os.Getenv(EnvServer); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("broker: %s: %w", EnvServer, err)
		}
		return ensureBinary(ctx, abs, false)
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("broker: no cache directory: %w", err)
	}
	return ensureBinary(ctx, filepath.Join(dir, CacheSubdir, BinaryName), true)
}

// EnsureBinary makes sure path holds a nats-server of [ServerVersion],
// building it as [ServerBinary] describes if the file is missing. A file that
// reports another version is an error ([ErrWrongVersion]).
func EnsureBinary(ctx context.Context, path string) (string, error) {
	return ensureBinary(ctx, path, false)
}

func ensureBinary(ctx context.Context, path string, replace bool) (string, error) {
	// Fast path: the file only ever appears by an atomic rename of a
	// verified build, or was put there by the Makefile.
	err := checkVersion(ctx, path)
	if err == nil {
		return path, nil
	}
	if !errors.Is(err, fs.ErrNotExist) && !(replace && errors.Is(err, ErrWrongVersion)) {
		return "", err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("broker: cache directory: %w", err)
	}
	unlock, err := lockFile(ctx, path+".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	// Another process may have built it while this one waited.
	err = checkVersion(ctx, path)
	if err == nil {
		return path, nil
	}
	if !errors.Is(err, fs.ErrNotExist) && !(replace && errors.Is(err, ErrWrongVersion)) {
		return "", err
	}
	if err := build(ctx, path); err != nil {
		return "", err
	}
	return path, nil
}

// otherBinary is ServerBinary under the EnvServerVersion opt-in: path must
// name a binary reporting version, which must look like a release
// (digits.digits.digits, optionally -suffix).
func otherBinary(ctx context.Context, path, version string) (string, error) {
	if !validVersion(version) {
		return "", fmt.Errorf("broker: %s=%q is not a version like %s: %w", EnvServerVersion, version, ServerVersion, ErrWrongVersion)
	}
	if path == "" {
		return "", fmt.Errorf("broker: %s=%s needs %s naming a nats-server of that version (make compat builds them): %w",
			EnvServerVersion, version, EnvServer, ErrWrongVersion)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("broker: %s: %w", EnvServer, err)
	}
	if err := checkVersionOf(ctx, abs, version); err != nil {
		return "", err
	}
	return abs, nil
}

// validVersion reports whether v is a release version without the "v":
// three dot-separated decimal numbers, optionally followed by "-" and a
// suffix of letters, digits and dots (2.15.0-RC.1).
func validVersion(v string) bool {
	core, suffix, hasSuffix := strings.Cut(v, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 || (hasSuffix && suffix == "") {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return strings.Trim(suffix, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.") == ""
}

// BinaryVersion runs `path --version` and returns the version it reports,
// without the "v" (2.14.6). A missing file gives an error matching
// fs.ErrNotExist; output of another form, [ErrWrongVersion].
func BinaryVersion(ctx context.Context, path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("broker: nats-server binary: %w", err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("broker: nats-server binary is not a regular file: %w", ErrWrongVersion)
	}
	cmd := exec.CommandContext(ctx, path, "--version")
	out := &limitedBuffer{max: maxVersionOutput}
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("broker: running nats-server --version: %w (%w)", ErrWrongVersion, err)
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(out.String()), "nats-server: v")
	if !ok || !validVersion(v) {
		return "", ErrWrongVersion
	}
	return v, nil
}

// checkVersion runs `path --version` and compares its output with
// ServerVersion. A missing file gives an error matching fs.ErrNotExist.
func checkVersion(ctx context.Context, path string) error {
	return checkVersionOf(ctx, path, ServerVersion)
}

// checkVersionOf checks that path reports exactly version.
func checkVersionOf(ctx context.Context, path, version string) error {
	v, err := BinaryVersion(ctx, path)
	if err != nil {
		return err
	}
	if v != version {
		return fmt.Errorf("broker: %s reports v%s, want v%s: %w", path, v, version, ErrWrongVersion)
	}
	return nil
}

// build compiles nats-server into a temporary file next to path, checks its
// version and renames it into place. The caller holds the lock.
func build(ctx context.Context, path string) error {
	modDir, err := moduleDir(ctx)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".build-*")
	if err != nil {
		return fmt.Errorf("broker: build: %w", err)
	}
	tmpName := tmp.Name()
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("broker: build: %w", err)
	}
	defer os.Remove(tmpName) // a no-op after the rename

	logPath := path + ".build.log"
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("broker: build: %w", err)
	}
	defer logFile.Close()

	cmd := exec.CommandContext(ctx, "go", "build", "-o", tmpName, ServerModule)
	cmd.Dir = modDir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		return &BuildError{Log: logPath, Err: err}
	}
	if err := checkVersion(ctx, tmpName); err != nil {
		return err
	}
	if err := os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("broker: build: %w", err)
	}
	_ = os.Remove(logPath) // kept only when the build fails
	return nil
}

// moduleDir returns the directory of the main module of the working
// directory, after checking that it requires ServerModule at ServerVersion.
func moduleDir(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Version}}", ServerModule)
	out := &limitedBuffer{max: maxVersionOutput}
	cmd.Stdout = out
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoModule, err)
	}
	if strings.TrimSpace(out.String()) != "v"+ServerVersion {
		return "", fmt.Errorf("%w: the module graph does not pin v%s", ErrNoModule, ServerVersion)
	}
	cmd = exec.CommandContext(ctx, "go", "env", "GOMOD")
	out = &limitedBuffer{max: 4096}
	cmd.Stdout = out
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoModule, err)
	}
	gomod := strings.TrimSpace(out.String())
	if gomod == "" || gomod == os.DevNull {
		return "", ErrNoModule
	}
	return filepath.Dir(gomod), nil
}

// lockFile takes an exclusive flock on path, retrying until ctx ends, and
// returns the function that releases it.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("broker: build lock: %w", err)
	}
	unlock := func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}
	tick := time.NewTicker(lockPoll)
	defer tick.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return unlock, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("broker: build lock: %w", err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("broker: waiting for the build lock: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// limitedBuffer keeps the first max bytes written to it and drops the rest.
type limitedBuffer struct {
	buf bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *limitedBuffer) String() string { return b.buf.String() }
