package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/tools/broker/clustertest"
)

// clusterWait bounds a wait for a leader on the cluster: an election takes
// the server's 4 to 9 s election timeout, longer on a loaded machine.
const clusterWait = 90 * time.Second

// TestPullInspectReplicated: on a real three-node cluster, jspull.Inspect of
// an R3 consumer (num_replicas 3 in its config, the "cluster" state in its
// info) passes the profile check through conn.Conn on every node, with
// the runtime's derived permissions, and reports what is pending as the
// consumer's leader gives it (Pending.Leader: only the leader answers,
// whatever node the request enters by); after the consumer's leader steps
// down, the same connections inspect it again without being touched.
func TestPullInspectReplicated(t *testing.T) {
	t.Parallel()
	c := brokertest.StartCluster(t, broker.Options{Tenants: []string{pullTenant}}, broker.DefaultClusterSize)
	bind := testBinding("ORDERS", "worker", "orders.new")
	a := newAdmin(t, c.Node(0))
	a.api("$JS.API.STREAM.CREATE.ORDERS", map[string]any{
		"name": "ORDERS", "subjects": []string{"orders.>"}, "storage": "file", "num_replicas": 3,
	})
	cfg := profileConfig(bind)
	cfg["num_replicas"] = 3
	a.createConsumer("ORDERS", "worker", cfg)
	a.publish("orders.new", []byte("one"))

	// The info Inspect checks carries the replica count and the cluster
	// state.
	info := a.api("$JS.API.CONSUMER.INFO.ORDERS.worker", nil)
	gotConfig, _ := info["config"].(map[string]any)
	gotCluster, _ := info["cluster"].(map[string]any)
	replicas, _ := gotCluster["replicas"].([]any)
	if gotConfig["num_replicas"] != 3.0 || len(replicas) != 2 {
		t.Fatalf("consumer info: num_replicas %v, %d other replicas; want 3 and 2", gotConfig["num_replicas"], len(replicas))
	}

	creds, err := c.Admin(pullTenant)
	if err != nil {
		t.Fatal(err)
	}
	req := clustertest.Requester(c, creds)
	ctx, cancel := context.WithTimeout(t.Context(), clusterWait)
	defer cancel()
	leader, err := c.WaitConsumerLeader(ctx, req, "ORDERS", "worker", nil)
	if err != nil {
		t.Fatal(err)
	}

	perms := derive(t, bind)
	var pullers []*puller
	for i, node := range c.Nodes() {
		p := newPuller(t, node, bind, perms, jspull.Options{})
		if !p.c.Clustered() {
			t.Errorf("node %d: Clustered = false: its INFO names the cluster", i)
		}
		pullers = append(pullers, p)
	}
	inspectAll := func(when string) {
		t.Helper()
		for i, p := range pullers {
			got, err := p.inspect()
			if err != nil {
				t.Fatalf("%s: Inspect through node %d: %v", when, i, err)
			}
			if want := (jspull.Pending{NumPending: 1, Leader: true}); got != want {
				t.Errorf("%s: Inspect through node %d: %+v, want %+v", when, i, got, want)
			}
		}
	}
	inspectAll("leader " + leader.Name())

	if err := c.StepDownConsumer(ctx, req, "ORDERS", "worker", nil); err != nil {
		t.Fatal(err)
	}
	next, err := c.WaitConsumerLeader(ctx, req, "ORDERS", "worker", leader)
	if err != nil {
		t.Fatal(err)
	}
	inspectAll("after the step-down to " + next.Name())
}
