package broker

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestServerBinaryOtherVersion: LATENT_NATS_SERVER_VERSION opts in to
// another release, named by LATENT_NATS_SERVER and reporting exactly that
// version; nothing is ever built for it.
func TestServerBinaryOtherVersion(t *testing.T) {
	other := fakeServer(t, "nats-server: v2.15.3")
	pinned := fakeServer(t, "nats-server: v"+ServerVersion)
	missing := filepath.Join(t.TempDir(), "nats-server-v2.15.3")
	for _, tc := range []struct {
		name, version, path string
		want                error
		wantPath            string
	}{
		{"the named version", "2.15.3", other, nil, other},
		{"a release candidate's form", "2.15.0-RC.1", fakeServer(t, "nats-server: v2.15.0-RC.1"), nil, ""},
		{"the pinned version", ServerVersion, pinned, nil, pinned},
		{"another version than named", "2.15.3", pinned, ErrWrongVersion, ""},
		{"a longer version", "2.15.3", fakeServer(t, "nats-server: v2.15.31"), ErrWrongVersion, ""},
		{"no binary named", "2.15.3", "", ErrWrongVersion, ""},
		{"missing binary", "2.15.3", missing, fs.ErrNotExist, ""},
		{"with a v", "v2.15.3", other, ErrWrongVersion, ""},
		{"two numbers", "2.15", other, ErrWrongVersion, ""},
		{"empty suffix", "2.15.3-", other, ErrWrongVersion, ""},
		{"not a number", "2.x.3", other, ErrWrongVersion, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvServerVersion, tc.version)
			t.Setenv(EnvServer, tc.path)
			got, err := ServerBinary(t.Context())
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("ServerBinary = %q, %v; want %v", got, err, tc.want)
			}
			if tc.wantPath != "" && got != tc.wantPath {
				t.Errorf("ServerBinary = %q, want %q", got, tc.wantPath)
			}
		})
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a binary of another version was built: %v", err)
	}
}

func TestBinaryVersion(t *testing.T) {
	for _, tc := range []struct {
		name, out, want string
		err             error
	}{
		{"pinned", "nats-server: v" + ServerVersion, ServerVersion, nil},
		{"other", "nats-server: v2.15.3", "2.15.3", nil},
		{"release candidate", "nats-server: v2.15.0-RC.1", "2.15.0-RC.1", nil},
		{"no prefix", "v2.15.3", "", ErrWrongVersion},
		{"not a version", "nats-server: vX", "", ErrWrongVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := BinaryVersion(t.Context(), fakeServer(t, tc.out))
			if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Errorf("BinaryVersion = %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
}
