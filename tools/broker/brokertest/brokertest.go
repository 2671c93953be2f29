package brokertest

import (
	"context"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/clustertest"
)

// StartTimeout bounds finding (or building, about 30 s cold) the binary and
// starting the broker.
const StartTimeout = 3 * time.Minute

// Start starts a broker with opts (Dir defaults to t.TempDir()) and
// registers a cleanup that closes it; when the test failed, the cleanup
// logs the tail of the server's log first. Start fails the test at once if
// the broker cannot start.
func Start(t testing.TB, opts broker.Options) *broker.Broker {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(t.Context(), StartTimeout)
	defer cancel()
	b, err := broker.Start(ctx, opts)
	if err != nil {
		t.Fatalf("brokertest: starting the broker: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("brokertest: server log (last %d bytes at most):\n%s", broker.MaxLogBytes, b.Logs())
		}
		if err := b.Close(); err != nil {
			t.Errorf("brokertest: closing the broker: %v", err)
		}
	})
	return b
}

// StartCluster starts a cluster of n nodes with opts (Dir defaults to
// t.TempDir()), formed (every node ready, a JetStream meta leader that
// counts each as a current peer, every route up) and placing: a stream of
// n replicas can be created (broker.Cluster.WaitPlacement, through the
// first tenant's administrator). It registers a cleanup that closes the
// cluster; when the test failed, the cleanup logs the tail of each node's
// log first. StartCluster fails the test at once if the cluster cannot
// start, form or place.
func StartCluster(t testing.TB, opts broker.Options, n int) *broker.Cluster {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(t.Context(), StartTimeout)
	defer cancel()
	c, err := broker.StartCluster(ctx, opts, n)
	if err != nil {
		t.Fatalf("brokertest: starting the cluster: %v", err)
	}
	admin, err := c.Admin(opts.Tenants[0])
	if err == nil {
		err = c.WaitPlacement(ctx, clustertest.Requester(c, admin), n)
	}
	if err != nil {
		_ = c.Close()
		t.Fatalf("brokertest: the cluster places no stream of %d replicas: %v", n, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("brokertest: node logs (last %d bytes of each at most):\n%s", broker.MaxLogBytes, c.Logs())
		}
		if err := c.Close(); err != nil {
			t.Errorf("brokertest: closing the cluster: %v", err)
		}
	})
	return c
}
