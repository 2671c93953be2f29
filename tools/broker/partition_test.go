package broker_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/tools/faultproxy"
)

// routesOf returns the remote names of node b's routes (one entry per
// route connection), from its /routez.
func routesOf(ctx context.Context, t *testing.T, b *broker.Broker) []string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+b.MonitorAddr().String()+"/routez", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("routez of %s: %v", b.Name(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, broker.MaxMonitorReply))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Routes []struct {
			RemoteName string `json:"remote_name"`
		} `json:"routes"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("routez of %s: %v", b.Name(), err)
	}
	var out []string
	for _, rt := range r.Routes {
		out = append(out, rt.RemoteName)
	}
	return out
}

// TestClusterProxiedRoutes starts a three-node cluster whose routes go
// through a fault proxy per ordered pair of nodes: it forms through them
// (every proxy carried a route). A partition of node 2 from nodes 0 and
// 1, cutting (RST) the routes at once and every reconnection, leaves node
// 2 with no route at all, so no route went around the proxies (a
// gossiped implicit route to a node's own port), and nodes 0 and 1 with
// routes to each other only. Heal lets the nodes reconnect through the
// proxies and the cluster forms again. Logged: the time to lose the
// routes and to form again.
func TestClusterProxiedRoutes(t *testing.T) {
	c := brokertest.StartCluster(t, broker.Options{Tenants: []string{clusterTenant}, ProxyRoutes: true}, broker.DefaultClusterSize)
	ctx := clusterCtx(t)
	for i := range c.Size() {
		for j := range c.Size() {
			if p := c.RouteProxy(i, j); i != j && p.Stats().Accepted == 0 {
				t.Errorf("the proxy of %d's routes to %d carried no route", i, j)
			} else if i == j && p != nil {
				t.Errorf("RouteProxy(%d, %d) is a proxy", i, i)
			}
		}
	}

	cut := faultproxy.Fault{Kind: faultproxy.CutRST}
	at := time.Now()
	if err := c.Partition(cut, []int{2}, []int{0, 1}); err != nil {
		t.Fatal(err)
	}
	alone := func() bool {
		if len(routesOf(ctx, t, c.Node(2))) != 0 {
			return false
		}
		for _, i := range []int{0, 1} {
			for _, name := range routesOf(ctx, t, c.Node(i)) {
				if name != c.Node(1-i).Name() {
					return false
				}
			}
		}
		return true
	}
	for !alone() {
		if ctx.Err() != nil {
			t.Fatalf("node 2 still routed %v after the partition: %v", time.Since(at), routesOf(ctx, t, c.Node(2)))
		}
		time.Sleep(broker.ClusterPoll)
	}
	t.Logf("partitioned: node 2 without routes %v after the cut", time.Since(at).Round(time.Millisecond))
	if n := len(routesOf(ctx, t, c.Node(0))); n == 0 {
		t.Errorf("nodes 0 and 1 lost their routes to each other")
	}

	healed := time.Now()
	if err := c.Heal(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFormed(ctx); err != nil {
		t.Fatalf("not formed again after the heal: %v", err)
	}
	t.Logf("healed: formed again %v after the heal", time.Since(healed).Round(time.Millisecond))
}
