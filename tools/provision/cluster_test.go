package provision

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/tools/broker/clustertest"
)

// clusterWait bounds a wait for a leader on the cluster.
const clusterWait = time.Minute

// TestAgainstCluster provisions R3 streams and consumers on a real
// three-node cluster through one node that need lead neither: created
// with three replicas (every node holds one, a leader is elected for
// each), jspull's profile check (the runtime's own) accepts the R3 consumer,
// an assert run with three replicas changes nothing, and an assert run
// asking for one replica reports the stream's and the consumer's count. A
// consumer created without num_replicas on the R3 stream has the stream's
// count and is asserted.
func TestAgainstCluster(t *testing.T) {
	c := brokertest.StartCluster(t, broker.Options{Tenants: []string{"acme"}}, broker.DefaultClusterSize)
	node := c.Node(1)
	b0 := binding("b0", "acme", "ORDERS", "c0", "acme.orders.created")
	b1 := binding("b1", "acme", "ORDERS", "c1", "acme.orders.paid")
	cfg := config(t, node, b0, b1)
	creds := adminCreds(t, node, cfg)
	r3 := DefaultOptions()
	r3.Stream.Replicas = 3

	began := time.Now()
	rep := runProvision(t, cfg, creds, r3)
	// A create waits for the new group's leader: an election timeout
	// (4 to 9 s) when the preferred peer's first campaign fails.
	t.Logf("R3 run: %v", time.Since(began).Round(time.Millisecond))
	want := []outcome{
		{"acme", "capture", DeadLetterStream, "", "", "created", 0, 0},
		{"acme", "stream", "ORDERS", "", "", "created", 0, 0},
		{"acme", "consumer", "ORDERS", "c0", "b0", "created", 0, 0},
		{"acme", "consumer", "ORDERS", "c1", "b1", "created", 0, 0},
	}
	if diff := cmp.Diff(want, outcomes(rep)); diff != "" {
		t.Fatalf("R3 run (-want +got):\n%s\nerrors: %v", diff, resultErrors(rep))
	}

	// Every node holds a replica and each group has a leader.
	admin := adminClient(t, node, "acme")
	st := snapshotStream(t, admin, "ORDERS")
	if got := st.Config["num_replicas"]; got != 3.0 {
		t.Errorf("stream num_replicas %v, want 3", got)
	}
	acme, err := c.Admin("acme")
	if err != nil {
		t.Fatal(err)
	}
	req := clustertest.Requester(c, acme)
	ctx, cancel := context.WithTimeout(t.Context(), clusterWait)
	defer cancel()
	if _, err := c.WaitStreamLeader(ctx, req, "ORDERS", nil); err != nil {
		t.Fatal(err)
	}
	for _, bd := range cfg.Bindings {
		if _, err := c.WaitConsumerLeader(ctx, req, "ORDERS", bd.Consumer, nil); err != nil {
			t.Fatal(err)
		}
		snap := snapshotConsumer(t, admin, "ORDERS", bd.Consumer)
		if got := snap.Config["num_replicas"]; got != 3.0 {
			t.Errorf("consumer %s num_replicas %v, want 3", bd.Consumer, got)
		}

		// jspull's profile check, the runtime's own, accepts the R3
		// consumer through a node that may lead nothing.
		pc, err := jspull.NewConsumer(PullBinding(bd), jspull.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ictx, icancel := context.WithTimeout(t.Context(), testTimeout)
		p, err := pc.Inspect(ictx, admin.conn)
		icancel()
		if err != nil || !p.Empty() {
			t.Errorf("Inspect %s: %+v, %v; want an empty consumer of the profile", bd.ID, p, err)
		}
	}

	r3.Mode = ModeAssert
	rep = runProvision(t, cfg, creds, r3)
	for i := range want {
		want[i].Action = "asserted"
	}
	if diff := cmp.Diff(want, outcomes(rep)); diff != "" {
		t.Errorf("R3 assert run (-want +got):\n%s", diff)
	}

	// The command asserts the same with -replicas 3.
	cfgPath, credsPath := brokertest.WriteInputs(t, node, cfg, t.TempDir())
	var stdout, stderr bytes.Buffer
	args := []string{"-config", cfgPath, "-credentials", credsPath, "-assert", "-replicas", "3", "-permissions", "none"}
	if code := Main(t.Context(), args, &stdout, &stderr); code != ExitOK {
		t.Errorf("Main -assert -replicas 3: exit %d, want %d\n%s", code, ExitOK, stderr.String())
	}
	wantReport := "acme: capture stream LATENT_DEADLETTER: asserted\n" +
		"acme: stream ORDERS: asserted\n" +
		"acme: consumer ORDERS/c0 (binding b0): asserted\n" +
		"acme: consumer ORDERS/c1 (binding b1): asserted\n" +
		"summary: 0 created, 4 asserted, 0 mismatch, 0 missing, 0 skipped, 0 failed\n"
	if diff := cmp.Diff(wantReport, stderr.String()); diff != "" {
		t.Errorf("Main report (-want +got):\n%s", diff)
	}

	r1 := DefaultOptions()
	r1.Mode = ModeAssert
	rep = runProvision(t, cfg, creds, r1)
	wantR1 := []outcome{
		{"acme", "capture", DeadLetterStream, "", "", "mismatch", 1, 0},
		{"acme", "stream", "ORDERS", "", "", "mismatch", 1, 0},
		{"acme", "consumer", "ORDERS", "c0", "b0", "mismatch", 1, 0},
		{"acme", "consumer", "ORDERS", "c1", "b1", "mismatch", 1, 0},
	}
	if diff := cmp.Diff(wantR1, outcomes(rep)); diff != "" {
		t.Errorf("R1 assert run on R3 (-want +got):\n%s", diff)
	}
	for _, res := range rep.Results {
		if diff := cmp.Diff([]jspull.Mismatch{{Field: "num_replicas", Want: "1", Got: "3"}}, res.Mismatches); diff != "" {
			t.Errorf("%s mismatches (-want +got):\n%s", res.name(), diff)
		}
	}

	// A consumer created without num_replicas has the stream's three.
	lcfg := config(t, node, binding("b3", "acme", "AUDIT", "c3", "acme.audit"))
	lcreds := adminCreds(t, node, lcfg)
	limits := DefaultOptions()
	limits.Stream.Retention, limits.Stream.Replicas = RetentionLimits, 3
	if rep := runProvision(t, lcfg, lcreds, limits); !rep.OK() {
		t.Fatalf("limits stream: %+v", outcomes(rep))
	}
	inherit := lcfg.Bindings[0]
	inherit.ID, inherit.Consumer = "b4", "c4"
	if err := admin.createConsumer(t.Context(), PullBinding(inherit), 0, 3); err != nil {
		t.Fatal(err)
	}
	if got := snapshotConsumer(t, admin, "AUDIT", "c4").Config["num_replicas"]; got != nil && got != 0.0 {
		t.Fatalf("consumer created without num_replicas reports %v", got)
	}
	icfg := config(t, node, inherit)
	limits.Mode = ModeAssert
	rep = runProvision(t, icfg, adminCreds(t, node, icfg), limits)
	wantInherit := []outcome{
		{"acme", "capture", DeadLetterStream, "", "", "asserted", 0, 0},
		{"acme", "stream", "AUDIT", "", "", "asserted", 0, 0},
		{"acme", "consumer", "AUDIT", "c4", "b4", "asserted", 0, 0},
	}
	if diff := cmp.Diff(wantInherit, outcomes(rep)); diff != "" {
		t.Errorf("assert of a consumer that inherits the stream's count (-want +got):\n%s", diff)
	}
}
