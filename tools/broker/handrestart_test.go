package broker

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestConfigNamesChosenPort pins issue 20: the generated nats.conf kept
// "port: -1", so the server started again by hand with it listened on
// another port. Once ready, the configuration names the port the server
// chose (and a cluster node's monitor port): nats-server -c with the same
// file listens there again, and Restart still comes back on it.
func TestConfigNamesChosenPort(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	b, err := Start(ctx, Options{Tenants: []string{"t1"}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c, err := StartCluster(ctx, Options{Tenants: []string{"t1"}, Dir: t.TempDir()}, MinClusterSize)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	node := c.Nodes()[0]

	for _, tc := range []struct {
		name  string
		b     *Broker
		lines []string
	}{
		{"broker", b, []string{"port: " + strconv.Itoa(int(b.Addr().Port()))}},
		{"cluster node", node, []string{
			"port: " + strconv.Itoa(int(node.Addr().Port())),
			`http: "` + node.MonitorAddr().String() + `"`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf, err := os.ReadFile(tc.b.ConfigFile())
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range tc.lines {
				if !bytes.Contains(conf, []byte("\n"+l+"\n")) {
					t.Errorf("configuration lacks the line %q", l)
				}
			}

			// Started again by hand with the same file: the same port.
			addr := tc.b.Addr()
			if err := tc.b.Kill(); err != nil {
				t.Fatal(err)
			}
			p, err := spawn(tc.b.Binary(), tc.b.Dir(), newLogSink(&logRing{}, nil))
			if err != nil {
				t.Fatal(err)
			}
			err = p.waitReady(ctx)
			got := p.sink.listenAddr()
			p.kill()
			if err != nil || got != addr {
				t.Errorf("nats-server -c %s: listening on %v (%v), want %v", tc.b.ConfigFile(), got, err, addr)
			}

			// Restart keeps its port too.
			if err := tc.b.Restart(ctx); err != nil {
				t.Fatal(err)
			}
			if tc.b.Addr() != addr {
				t.Errorf("address after Restart %v, want %v", tc.b.Addr(), addr)
			}
		})
	}
}
