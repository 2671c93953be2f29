package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
		name      string
		args      []string
		want      broker.Options
		wantNodes int
		wantErr   bool
	}{
		{"defaults", nil, base, 0, false},
		{"cluster", []string{"-cluster", "3"}, base, 3, false},
		{"bad cluster", []string{"-cluster", "three"}, broker.Options{}, 0, true},
		{"sync always", []string{"-sync", "always"}, with(func(o *broker.Options) { o.SyncInterval = "always" }), 0, false},
		{"sync interval", []string{"-sync", "2m"}, with(func(o *broker.Options) { o.SyncInterval = "2m" }), 0, false},
		{"lame duck grace", []string{"-lame-duck-grace", "1s"}, with(func(o *broker.Options) { o.LameDuckGracePeriod = time.Second }), 0, false},
		{"tenants and ack v2", []string{"-tenants", "a,b", "-ack-v2"}, with(func(o *broker.Options) {
			o.Tenants = []string{"a", "b"}
			o.Extra = "\nfeature_flags { js_ack_fc_v2: true }\n"
		}), 0, false},
		{"fallback", []string{"-handshake", "300ms"}, with(func(o *broker.Options) {
			o.Handshake, o.FallbackDelay = broker.HandshakeFallback, 300*time.Millisecond
		}), 0, false},
		{"bad handshake", []string{"-handshake", "sometimes"}, broker.Options{}, 0, true},
		{"bad grace", []string{"-lame-duck-grace", "soon"}, broker.Options{}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, nodes, err := parseOptions(tc.args, io.Discard)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseOptions(%q) error %v, want error %v", tc.args, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" || nodes != tc.wantNodes {
				t.Errorf("parseOptions(%q): %d nodes (want %d), options (-want +got):\n%s", tc.args, nodes, tc.wantNodes, diff)
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
