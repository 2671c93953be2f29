package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
)

func TestParseHandshake(t *testing.T) {
	for _, tc := range []struct {
		in        string
		wantMode  broker.HandshakeMode
		wantDelay time.Duration
		wantErr   bool
	}{
		{"first", broker.HandshakeFirst, 0, false},
		{"after-info", broker.HandshakeAfterInfo, 0, false},
		{"auto", broker.HandshakeAuto, 0, false},
		{"300ms", broker.HandshakeFallback, 300 * time.Millisecond, false},
		{"", 0, 0, true},
		{"sometimes", 0, 0, true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			mode, delay, err := parseHandshake(tc.in)
			if mode != tc.wantMode || delay != tc.wantDelay || (err != nil) != tc.wantErr {
				t.Errorf("parseHandshake(%q) = %v, %v, %v", tc.in, mode, delay, err)
			}
		})
	}
}

func TestParseOptions(t *testing.T) {
	base := broker.Options{Tenants: []string{"demo"}, ServerName: broker.DefaultServerName, Handshake: broker.HandshakeFirst}
	with := func(f func(*broker.Options)) broker.Options {
		o := base
		f(&o)
		return o
	}
	for _, tc := range []struct {
		name    string
		args    []string
		want    command
		wantErr bool
	}{
		{"defaults", nil, command{opts: base}, false},
		{"cluster", []string{"-cluster", "3"}, command{opts: base, nodes: 3}, false},
		{"bad cluster", []string{"-cluster", "three"}, command{}, true},
		{"sync always", []string{"-sync", "always"}, command{opts: with(func(o *broker.Options) { o.SyncInterval = "always" })}, false},
		{"sync interval", []string{"-sync", "2m"}, command{opts: with(func(o *broker.Options) { o.SyncInterval = "2m" })}, false},
		{"lame duck grace", []string{"-lame-duck-grace", "1s"}, command{opts: with(func(o *broker.Options) { o.LameDuckGracePeriod = time.Second })}, false},
		{"tenants and ack v2", []string{"-tenants", "a,b", "-ack-v2"}, command{opts: with(func(o *broker.Options) {
			o.Tenants = []string{"a", "b"}
			o.Extra = "\nfeature_flags { js_ack_fc_v2: true }\n"
		})}, false},
		{"fallback", []string{"-handshake", "300ms"}, command{opts: with(func(o *broker.Options) {
			o.Handshake, o.FallbackDelay = broker.HandshakeFallback, 300*time.Millisecond
		})}, false},
		{"bad handshake", []string{"-handshake", "sometimes"}, command{}, true},
		{"bad grace", []string{"-lame-duck-grace", "soon"}, command{}, true},
		{"runtime creds", []string{"-runtime-creds", "trigger.json"}, command{opts: base, runtime: runtimeCreds{config: "trigger.json"}}, false},
		{"runtime creds into a directory", []string{"-runtime-creds", "trigger.json", "-out", "creds"},
			command{opts: base, runtime: runtimeCreds{config: "trigger.json", out: "creds"}}, false},
		{"out without runtime creds", []string{"-out", "creds"}, command{}, true},
		{"client certificates", []string{"-client-certs"}, command{opts: with(func(o *broker.Options) { o.ClientCertificates = true })}, false},
		{"client certificates of a cluster", []string{"-client-certs", "-cluster", "3"}, command{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseOptions(tc.args, io.Discard)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseOptions(%q) error %v, want error %v", tc.args, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(command{}, runtimeCreds{})); diff != "" {
				t.Errorf("parseOptions(%q) (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

func TestLogTail(t *testing.T) {
	for _, tc := range []struct {
		name string
		log  string
		n    int
		want string
	}{
		{"empty", "", 2, ""},
		{"fewer lines than asked", "a\nb\n", 3, "a\nb\n"},
		{"exactly as many", "a\nb\n", 2, "a\nb\n"},
		{"the last ones", "a\nb\nc\n", 2, "b\nc\n"},
		{"no final newline", "a\nb\nc", 1, "c\n"},
		{"blank tail dropped", "a\nb\n\n\n", 1, "b\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, string(logTail([]byte(tc.log), tc.n))); diff != "" {
				t.Errorf("logTail(%q, %d) (-want +got):\n%s", tc.log, tc.n, diff)
			}
		})
	}
}

// TestServeNoticesServerExit pins issue 20: the command kept running for
// minutes after its server died. serve now returns ErrServerExited at once
// for a broker and for any node of a cluster, stops the other nodes, keeps
// every file and says how to restart each server on its port; the end of
// ctx (Ctrl-C) is a plain return with the servers left to Close.
func TestServeNoticesServerExit(t *testing.T) {
	single := brokertest.Start(t, broker.Options{Tenants: []string{"demo"}})
	cluster := brokertest.StartCluster(t, broker.Options{Tenants: []string{"demo"}}, broker.MinClusterSize)
	for _, tc := range []struct {
		name  string
		nodes []*broker.Broker
		dir   string
	}{
		{"broker", []*broker.Broker{single}, single.Dir()},
		{"cluster node", cluster.Nodes(), cluster.Dir()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := target{nodes: tc.nodes, dir: tc.dir}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()

			// Ctrl-C: nil, every server still running.
			stopped, stop := context.WithCancel(ctx)
			stop()
			if err := serve(stopped, io.Discard, io.Discard, tg, runtimeCreds{}, nil); err != nil {
				t.Fatalf("serve after ctx ended: %v, want nil", err)
			}

			victim := tc.nodes[len(tc.nodes)-1]
			done := make(chan error, 1)
			var stderr bytes.Buffer
			go func() { done <- serve(ctx, io.Discard, &stderr, tg, runtimeCreds{}, nil) }()
			if err := syscall.Kill(victim.PID(), syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-done:
			case <-ctx.Done():
				t.Fatal("serve did not notice the server's exit")
			}
			if !errors.Is(err, broker.ErrServerExited) {
				t.Errorf("serve = %v, want ErrServerExited", err)
			}
			var running []string
			for _, b := range tc.nodes {
				if b.Running() {
					running = append(running, b.Name())
				}
			}
			if diff := cmp.Diff([]string(nil), running); diff != "" {
				t.Errorf("nodes running after serve returned (-want +got):\n%s", diff)
			}
			want := []string{victim.Name(), "rm -r " + tc.dir}
			for _, b := range tc.nodes {
				want = append(want, b.Binary()+" -c "+b.ConfigFile())
			}
			for _, w := range want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("message lacks %q:\n%s", w, stderr.String())
				}
			}
			if _, err := os.Stat(victim.ConfigFile()); err != nil {
				t.Errorf("configuration not kept: %v", err)
			}
		})
	}
}

func TestDescribeWritesCreds(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{"demo", "other"}})
	var out bytes.Buffer
	if err := describe(&out, b); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"demo-admin.creds", "other-admin.creds", "system.creds"} {
		path := filepath.Join(b.Dir(), name)
		st, err := os.Stat(path)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if st.Mode().Perm() != 0o600 || !strings.Contains(out.String(), path) {
			t.Errorf("%s: mode %v, printed %v", name, st.Mode().Perm(), strings.Contains(out.String(), path))
		}
	}
	for _, want := range []string{b.Addr().String(), b.ServerName(), b.CAFile()} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestDescribeClusterWritesCreds(t *testing.T) {
	c := brokertest.StartCluster(t, broker.Options{Tenants: []string{"demo"}}, broker.MinClusterSize)
	var out bytes.Buffer
	if err := describeCluster(t.Context(), &out, c); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"demo-admin.creds", "system.creds"} {
		path := filepath.Join(c.Dir(), name)
		st, err := os.Stat(path)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if st.Mode().Perm() != 0o600 || !strings.Contains(out.String(), path) {
			t.Errorf("%s: mode %v, printed %v", name, st.Mode().Perm(), strings.Contains(out.String(), path))
		}
	}
	want := []string{c.ServerName(), c.CAFile()}
	for _, b := range c.Nodes() {
		want = append(want, b.Name(), b.Addr().String(), b.MonitorAddr().String())
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q", w)
		}
	}
}

// TestDescribeWritesClientCerts: with -client-certs the command writes a
// client certificate and key per tenant, and a tenant's admin user dials
// the broker with its pair (the broker refuses a dial without one).
func TestDescribeWritesClientCerts(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{"demo"}, ClientCertificates: true})
	var out bytes.Buffer
	if err := describe(&out, b); err != nil {
		t.Fatal(err)
	}
	var pems [2][]byte
	for i, name := range []string{"demo-client.crt", "demo-client.key"} {
		path := filepath.Join(b.Dir(), name)
		st, err := os.Stat(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if st.Mode().Perm() != 0o600 || !strings.Contains(out.String(), path) {
			t.Errorf("%s: mode %v, printed %v", name, st.Mode().Perm(), strings.Contains(out.String(), path))
		}
		if pems[i], err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	admin, err := b.Admin("demo")
	if err != nil {
		t.Fatal(err)
	}
	dial := func(withCert bool) error {
		file, err := admin.File()
		if err != nil {
			t.Fatal(err)
		}
		secret, err := credential.ParseCreds(file)
		if err != nil {
			t.Fatal(err)
		}
		defer secret.Wipe()
		if withCert {
			if err := secret.AddClientCertificate(pems[0], pems[1]); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		c, err := conn.Dial(ctx, conn.Config{Addr: b.Addr(), AllowNonPublic: b.Addr().Addr(),
			ServerName: b.ServerName(), Roots: b.RootCAs(), Credential: secret})
		if err == nil {
			_ = c.Close()
		}
		return err
	}
	if err := dial(true); err != nil {
		t.Errorf("dial with the written pair: %v", err)
	}
	if err := dial(false); !errors.Is(err, conn.ErrClientCertificate) {
		t.Errorf("dial without a certificate: %v, want ErrClientCertificate", err)
	}
}
