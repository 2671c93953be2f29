package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
