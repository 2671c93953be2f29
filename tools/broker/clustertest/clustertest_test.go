package clustertest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/tools/broker/clustertest"
)

// TestRequester: a request reaches the cluster through the first running
// node, also once node 0 is killed, and through a node given; a status
// reply is ErrStatus; with every node killed, ErrNoNode.
func TestRequester(t *testing.T) {
	c := brokertest.StartCluster(t, broker.Options{Tenants: []string{"t1"}}, broker.MinClusterSize)
	admin, err := c.Admin("t1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	r := clustertest.Requester(c, admin)
	info := func(r broker.Requester) error {
		_, err := r.Request(ctx, "$JS.API.INFO", nil)
		return err
	}
	if err := info(r); err != nil {
		t.Fatalf("account info: %v", err)
	}
	if _, err := r.Request(ctx, "nobody.listens", nil); !errors.Is(err, clustertest.ErrStatus) {
		t.Errorf("request without responders: %v, want ErrStatus", err)
	}
	if err := c.Node(0).Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Request(ctx, "nobody.listens", nil); !errors.Is(err, clustertest.ErrStatus) {
		t.Errorf("request through node 1 with node 0 killed: %v, want ErrStatus", err)
	}
	if _, err := clustertest.NodeRequester(c.Node(1), admin).Request(ctx, "nobody.listens", nil); !errors.Is(err, clustertest.ErrStatus) {
		t.Errorf("request through node 1: %v, want ErrStatus", err)
	}
	if err := info(clustertest.NodeRequester(c.Node(0), admin)); err == nil {
		t.Error("request through a killed node succeeded")
	}
	if err := c.Node(1).Kill(); err != nil {
		t.Fatal(err)
	}
	if err := info(r); !errors.Is(err, clustertest.ErrNoNode) {
		t.Errorf("request with every node killed: %v, want ErrNoNode", err)
	}
}
