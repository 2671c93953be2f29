package broker_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
)

// clusterTimeout bounds each wait of the cluster tests (an election, a
// restart, a node catching up): the server's election timeout is 4 to 9 s
// (v2.14.6 raft.go, minElectionTimeoutDefault, maxElectionTimeoutDefault),
// and a loaded machine stretches every step.
const clusterTimeout = 90 * time.Second

// clusterTenant is the tenant account of the cluster tests.
const clusterTenant = "t1"

// clusterCtx returns a context bounded by clusterTimeout.
func clusterCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clusterTimeout)
	t.Cleanup(cancel)
	return ctx
}

// startCluster starts a three-node cluster and logs how long the start
// and the formation took.
func startCluster(t *testing.T) *broker.Cluster {
	t.Helper()
	start := time.Now()
	c := brokertest.StartCluster(t, broker.Options{Tenants: []string{clusterTenant}}, broker.DefaultClusterSize)
	t.Logf("cluster of %d started and formed in %v", c.Size(), time.Since(start).Round(time.Millisecond))
	return c
}

// TestClusterStartsFormsAndCloses: three nodes with distinct names and
// ports, one operator (a user minted once connects to every node), one
// certificate (every node verifies with the cluster's server name and
// roots), routes between them (each node's INFO names the cluster and the
// other nodes' client URLs), one meta leader; Close ends every process and
// removes every file.
func TestClusterStartsFormsAndCloses(t *testing.T) {
	parent := t.TempDir()
	var log lockedBuffer
	start := time.Now()
	c := brokertest.StartCluster(t, broker.Options{Tenants: []string{clusterTenant}, Dir: parent, Log: &log}, broker.DefaultClusterSize)
	t.Logf("started and formed in %v", time.Since(start).Round(time.Millisecond))
	if c.Size() != broker.DefaultClusterSize || len(c.Nodes()) != c.Size() {
		t.Fatalf("Size %d, Nodes %d, want %d", c.Size(), len(c.Nodes()), broker.DefaultClusterSize)
	}
	admin, err := c.Admin(clusterTenant)
	if err != nil {
		t.Fatal(err)
	}
	var names, addrs []string
	var pids []int
	for i, b := range c.Nodes() {
		if b.Name() != broker.NodeName(i) || c.NodeNamed(b.Name()) != b || c.Index(b) != i || c.Node(i) != b {
			t.Errorf("node %d: name %q, NodeNamed, Index or Node disagree", i, b.Name())
		}
		if b.ServerName() != c.ServerName() || !b.Addr().Addr().IsLoopback() || !b.MonitorAddr().Addr().IsLoopback() {
			t.Errorf("node %d: server name %q, address %v, monitor %v", i, b.ServerName(), b.Addr(), b.MonitorAddr())
		}
		names = append(names, b.Name())
		addrs = append(addrs, b.Addr().String(), b.MonitorAddr().String())
		pids = append(pids, b.PID())

		// The cluster's roots and server name verify every node.
		cl := dialTLSFirstWith(t, b, &tls.Config{ServerName: c.ServerName(), RootCAs: c.RootCAs(), MinVersion: tls.VersionTLS12})
		if got := cl.info["server_name"]; got != b.Name() {
			t.Errorf("node %d: INFO server_name %v, want %s", i, got, b.Name())
		}
		if got := cl.info["cluster"]; got != broker.ClusterName {
			t.Errorf("node %d: INFO cluster %v, want %s", i, got, broker.ClusterName)
		}
		cl.mustConnect(admin)
	}
	if len(slices.Compact(slices.Sorted(slices.Values(addrs)))) != len(addrs) {
		t.Errorf("addresses not distinct: %v", addrs)
	}
	if c.NodeNamed("latent-broker") != nil || c.Index(nil) != -1 {
		t.Error("NodeNamed or Index found a node that is not one")
	}
	// Every forwarded line is a whole line of one node, after its name.
	forwarded := log.String()
	for _, line := range strings.SplitAfter(forwarded, "\n") {
		if line == "" {
			continue
		}
		prefixed := slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(line, "["+n+"] [") })
		if !prefixed || !strings.HasSuffix(line, "\n") {
			t.Fatalf("forwarded line %.80q: not one node's whole line", line)
		}
	}
	for _, n := range names {
		if !strings.Contains(forwarded, "["+n+"] ") {
			t.Errorf("no line of %s forwarded", n)
		}
	}

	leader, err := c.WaitFormed(clusterCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.Index(leader) < 0 {
		t.Fatalf("meta leader %v is not a node", leader)
	}
	t.Logf("nodes %v, meta leader %s", names, leader.Name())

	// StartCluster waited until the cluster placed a stream of three
	// replicas, and deleted its probe; asked again, the cluster places one
	// at once. A replica count the cluster cannot hold is refused.
	r := clusterRequester(c, admin)
	if err := c.WaitPlacement(clusterCtx(t), r, c.Size()); err != nil {
		t.Errorf("WaitPlacement on a formed cluster: %v", err)
	}
	body, err := r.Request(clusterCtx(t), "$JS.API.STREAM.NAMES", nil)
	if err != nil || strings.Contains(string(body), "LATENT_PLACEMENT_PROBE") {
		t.Errorf("stream names after WaitPlacement: %s, %v; want no probe", body, err)
	}
	var oe *broker.OptionError
	for _, n := range []int{0, c.Size() + 1} {
		if err := c.WaitPlacement(clusterCtx(t), r, n); !errors.As(err, &oe) {
			t.Errorf("WaitPlacement(%d replicas) = %v, want an OptionError", n, err)
		}
	}

	start = time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("closed in %v", time.Since(start).Round(time.Millisecond))
	for i, pid := range pids {
		if !processGone(t, pid) {
			t.Errorf("node %d: process %d left after Close", i, pid)
		}
	}
	if left := dirEntries(t, parent); len(left) != 0 {
		t.Errorf("files left after Close: %v", left)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// dialTLSFirstWith is dialTLSFirst with the client's TLS configuration.
func dialTLSFirstWith(t *testing.T, b *broker.Broker, cfg *tls.Config) *rawClient {
	t.Helper()
	raw := dialTCP(t, b)
	tc := tls.Client(raw, cfg)
	if err := tc.HandshakeContext(t.Context()); err != nil {
		t.Fatalf("tls handshake with %s: %v", b.Name(), err)
	}
	c := &rawClient{t: t, conn: tc, r: newReader(tc)}
	c.info = c.readInfo()
	return c
}

// clusterAPI sends a JetStream API request through r and decodes the
// reply into v, failing the test on an error reply.
func clusterAPI(t *testing.T, r broker.Requester, subject string, req, v any) {
	t.Helper()
	var body []byte
	if req != nil {
		var err error
		if body, err = json.Marshal(req); err != nil {
			t.Fatal(err)
		}
	}
	// An API request on a cluster waits for its Raft groups (a stream
	// created just after the cluster formed waits for its group's first
	// election, 4-9 s): clusterTimeout, not one I/O's bound.
	ctx, cancel := context.WithTimeout(t.Context(), clusterTimeout)
	defer cancel()
	reply, err := r.Request(ctx, subject, body)
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(reply, &e); err != nil || e.Error != nil {
		t.Fatalf("%s: error %s (%v)", subject, e.Error, err)
	}
	if v != nil {
		if err := json.Unmarshal(reply, v); err != nil {
			t.Fatal(err)
		}
	}
}

// createR3 creates stream S (file storage, subjects s.>, three replicas)
// and, when consumer is not empty, a durable pull consumer of it with
// three replicas.
func createR3(t *testing.T, r broker.Requester, consumer string) {
	t.Helper()
	clusterAPI(t, r, "$JS.API.STREAM.CREATE.S", map[string]any{
		"name": "S", "subjects": []string{"s.>"}, "storage": "file", "num_replicas": 3, "max_bytes": 1 << 20,
	}, nil)
	if consumer == "" {
		return
	}
	clusterAPI(t, r, "$JS.API.CONSUMER.CREATE.S."+consumer, map[string]any{
		"stream_name": "S",
		"config":      map[string]any{"durable_name": consumer, "ack_policy": "explicit", "num_replicas": 3},
	}, nil)
}

// streamState is what the cluster tests read of stream S's info: its
// message count and each replica (not the leader) by name, current or
// not.
type streamState struct {
	Messages uint64
	Leader   string
	Replicas map[string]bool
}

func streamInfo(t *testing.T, r broker.Requester) streamState {
	t.Helper()
	var info struct {
		State struct {
			Messages uint64 `json:"messages"`
		} `json:"state"`
		Cluster struct {
			Leader   string `json:"leader"`
			Replicas []struct {
				Name    string `json:"name"`
				Current bool   `json:"current"`
			} `json:"replicas"`
		} `json:"cluster"`
	}
	clusterAPI(t, r, "$JS.API.STREAM.INFO.S", nil, &info)
	st := streamState{Messages: info.State.Messages, Leader: info.Cluster.Leader, Replicas: map[string]bool{}}
	for _, rep := range info.Cluster.Replicas {
		st.Replicas[rep.Name] = rep.Current
	}
	return st
}

// publish stores one message in stream S and returns its sequence.
func publish(t *testing.T, r broker.Requester, subject string) uint64 {
	t.Helper()
	var ack struct {
		Stream string `json:"stream"`
		Seq    uint64 `json:"seq"`
	}
	// A stream just created on a cluster may not yet have its interest at
	// the node asked: the broker answers a status (503, no responders)
	// without storing anything. Ask again within clusterTimeout.
	deadline := time.Now().Add(clusterTimeout)
	for {
		ctx, cancel := context.WithDeadline(t.Context(), deadline)
		reply, err := r.Request(ctx, subject, nil)
		cancel()
		if errors.Is(err, errStatus) && time.Now().Before(deadline) {
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", subject, err)
		}
		if err := json.Unmarshal(reply, &ack); err != nil {
			t.Fatalf("%s: %v", subject, err)
		}
		break
	}
	if ack.Stream != "S" || ack.Seq == 0 {
		t.Fatalf("publish to %s: ack %+v", subject, ack)
	}
	return ack.Seq
}

// others returns the cluster's nodes but b, in index order.
func others(c *broker.Cluster, b *broker.Broker) []*broker.Broker {
	return slices.DeleteFunc(c.Nodes(), func(n *broker.Broker) bool { return n == b })
}

// waitFor waits until cond holds, checking every broker.ClusterPoll, for
// at most clusterTimeout.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(clusterTimeout)
	tick := time.NewTicker(broker.ClusterPoll)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, clusterTimeout)
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("%s: %v", what, t.Context().Err())
		case <-tick.C:
		}
	}
}

// replicasCurrent reports whether stream S's info names a leader and
// every other node as a current replica.
func replicasCurrent(t *testing.T, c *broker.Cluster, r broker.Requester) bool {
	t.Helper()
	st := streamInfo(t, r)
	leader := c.NodeNamed(st.Leader)
	if leader == nil {
		return false
	}
	for _, b := range others(c, leader) {
		if !st.Replicas[b.Name()] {
			return false
		}
	}
	return true
}

// TestClusterStreamLeaderKilled: the leader of an R3 stream, found from
// the stream's info, is killed with SIGKILL; another node is elected
// within the bound and the stored message is still there; the killed
// node, restarted on the same ports with its store, rejoins: healthy,
// counted by the meta leader, a current replica of the stream again.
func TestClusterStreamLeaderKilled(t *testing.T) {
	c := startCluster(t)
	admin, err := c.Admin(clusterTenant)
	if err != nil {
		t.Fatal(err)
	}
	r := clusterRequester(c, admin)
	createR3(t, r, "")
	publish(t, r, "s.1")

	leader, err := c.WaitStreamLeader(clusterCtx(t), r, "S", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.StreamLeader(clusterCtx(t), r, "S"); err != nil || got != leader {
		t.Fatalf("StreamLeader = %v, %v; want %s", got, err, leader.Name())
	}
	waitFor(t, "every replica of S current", func() bool { return replicasCurrent(t, c, r) })
	addr, monitor, pid := leader.Addr(), leader.MonitorAddr(), leader.PID()

	killed := time.Now()
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	next, err := c.WaitStreamLeader(clusterCtx(t), r, "S", leader)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stream leader %s killed, %s elected after %v", leader.Name(), next.Name(), time.Since(killed).Round(time.Millisecond))
	if next == leader || !next.Running() {
		t.Fatalf("new leader %s: the killed node or not running", next.Name())
	}
	if got := streamInfo(t, r).Messages; got != 1 {
		t.Errorf("messages after the leader's loss: %d, want 1", got)
	}
	meta, err := c.WaitFormed(clusterCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("meta leader %s after %v", meta.Name(), time.Since(killed).Round(time.Millisecond))
	if meta == leader {
		t.Errorf("meta leader %s is the killed node", meta.Name())
	}

	restarted := time.Now()
	if err := leader.Restart(clusterCtx(t)); err != nil {
		t.Fatal(err)
	}
	if leader.Addr() != addr || leader.MonitorAddr() != monitor || leader.PID() == pid {
		t.Errorf("after Restart: address %v (was %v), monitor %v (was %v), pid %d (was %d)",
			leader.Addr(), addr, leader.MonitorAddr(), monitor, leader.PID(), pid)
	}
	if err := c.WaitHealthy(clusterCtx(t), leader); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFormed(clusterCtx(t)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the restarted node a current replica of S", func() bool { return replicasCurrent(t, c, r) })
	t.Logf("%s rejoined after %v", leader.Name(), time.Since(restarted).Round(time.Millisecond))
	publish(t, r, "s.2")
	if got := streamInfo(t, r).Messages; got != 2 {
		t.Errorf("messages after the rejoin: %d, want 2", got)
	}
}

// TestClusterStepDown: a stream leader step-down with a preferred node
// moves the leadership to that node; asking again for the node that now
// leads is the server's refusal (400/10005); a consumer leader step-down
// without a preference moves it to another node. Bad names and a node of
// no cluster are refused before anything is sent.
func TestClusterStepDown(t *testing.T) {
	c := startCluster(t)
	admin, err := c.Admin(clusterTenant)
	if err != nil {
		t.Fatal(err)
	}
	r := clusterRequester(c, admin)
	createR3(t, r, "C")

	leader, err := c.WaitStreamLeader(clusterCtx(t), r, "S", nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every replica of S current", func() bool { return replicasCurrent(t, c, r) })
	to := others(c, leader)[1]
	if err := c.StepDownStream(clusterCtx(t), r, "S", to); err != nil {
		t.Fatal(err)
	}
	got, err := c.WaitStreamLeader(clusterCtx(t), r, "S", leader)
	if err != nil {
		t.Fatal(err)
	}
	if got != to {
		t.Errorf("stream leader after the step-down to %s: %s", to.Name(), got.Name())
	}
	var apiErr *broker.APIError
	err = c.StepDownStream(clusterCtx(t), r, "S", to)
	if !errors.As(err, &apiErr) || apiErr.Code != 400 || apiErr.ErrCode != 10005 {
		t.Errorf("step-down to the leader itself: %v, want the API error 400/10005", err)
	}

	cl, err := c.WaitConsumerLeader(clusterCtx(t), r, "S", "C", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.ConsumerLeader(clusterCtx(t), r, "S", "C"); err != nil || got != cl {
		t.Fatalf("ConsumerLeader = %v, %v; want %s", got, err, cl.Name())
	}
	if err := c.StepDownConsumer(clusterCtx(t), r, "S", "C", nil); err != nil {
		t.Fatal(err)
	}
	next, err := c.WaitConsumerLeader(clusterCtx(t), r, "S", "C", cl)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("consumer leader %s stepped down, %s leads", cl.Name(), next.Name())

	_, err = c.ConsumerLeader(clusterCtx(t), r, "S", "NONE")
	if !errors.As(err, &apiErr) || apiErr.Code != 404 || apiErr.ErrCode != 10014 {
		t.Errorf("leader of a consumer that does not exist: %v, want the API error 404/10014", err)
	}
	_, err = c.WaitStreamLeader(clusterCtx(t), r, "NONE", nil)
	if !errors.As(err, &apiErr) || apiErr.Code != 404 || apiErr.ErrCode != 10059 {
		t.Errorf("waiting for the leader of a stream that does not exist: %v, want the API error 404/10059 at once", err)
	}

	sent := 0
	count := broker.RequestFunc(func(context.Context, string, []byte) ([]byte, error) {
		sent++
		return nil, errors.New("not sent")
	})
	single := brokertest.Start(t, broker.Options{Tenants: []string{clusterTenant}})
	for name, err := range map[string]error{
		"stream with a dot":     func() error { _, err := c.StreamLeader(t.Context(), count, "S.x"); return err }(),
		"empty stream":          func() error { _, err := c.WaitStreamLeader(t.Context(), count, "", nil); return err }(),
		"consumer with a space": c.StepDownConsumer(t.Context(), count, "S", "C D", nil),
		"consumer wildcard":     func() error { _, err := c.ConsumerLeader(t.Context(), count, "S", ">"); return err }(),
	} {
		if !errors.Is(err, broker.ErrInvalidOptions) {
			t.Errorf("%s: %v, want ErrInvalidOptions", name, err)
		}
	}
	if err := c.StepDownStream(t.Context(), count, "S", single); !errors.Is(err, broker.ErrUnknownNode) {
		t.Errorf("step-down to a broker of no cluster: %v, want ErrUnknownNode", err)
	}
	if err := c.WaitHealthy(t.Context(), single); !errors.Is(err, broker.ErrUnknownNode) {
		t.Errorf("WaitHealthy of a broker of no cluster: %v, want ErrUnknownNode", err)
	}
	if sent != 0 {
		t.Errorf("%d requests sent for refused arguments, want none", sent)
	}
}

// TestClusterPauseAndLameDuck: while the stream's leader is paused
// (SIGSTOP) the other two elect a new one and store a message, and the
// cluster stays formed without the paused node; after Resume it is
// healthy and a current replica again. A follower put into lame duck mode
// exits; restarted, it rejoins.
func TestClusterPauseAndLameDuck(t *testing.T) {
	c := startCluster(t)
	admin, err := c.Admin(clusterTenant)
	if err != nil {
		t.Fatal(err)
	}
	r := clusterRequester(c, admin)
	createR3(t, r, "")
	leader, err := c.WaitStreamLeader(clusterCtx(t), r, "S", nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every replica of S current", func() bool { return replicasCurrent(t, c, r) })

	paused := time.Now()
	if err := leader.Pause(); err != nil {
		t.Fatal(err)
	}
	next, err := c.WaitStreamLeader(clusterCtx(t), r, "S", leader)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stream leader %s paused, %s elected after %v", leader.Name(), next.Name(), time.Since(paused).Round(time.Millisecond))
	publish(t, r, "s.1")
	meta, err := c.WaitFormed(clusterCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if meta == leader || !leader.Paused() {
		t.Errorf("meta leader %s, paused node %s still paused %v", meta.Name(), leader.Name(), leader.Paused())
	}

	if err := leader.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHealthy(clusterCtx(t), leader); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the resumed node a current replica of S", func() bool { return replicasCurrent(t, c, r) })
	if got := streamInfo(t, r).Messages; got != 1 {
		t.Errorf("messages after the pause: %d, want 1", got)
	}

	follower := others(c, c.NodeNamed(streamInfo(t, r).Leader))[0]
	if err := follower.LameDuck(clusterCtx(t)); err != nil {
		t.Fatal(err)
	}
	if follower.Running() {
		t.Fatalf("%s still running after LameDuck", follower.Name())
	}
	if _, err := c.WaitFormed(clusterCtx(t)); err != nil {
		t.Fatal(err)
	}
	publish(t, r, "s.2")
	if err := follower.Restart(clusterCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHealthy(clusterCtx(t), follower); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the restarted node a current replica of S", func() bool { return replicasCurrent(t, c, r) })
	if got := streamInfo(t, r).Messages; got != 2 {
		t.Errorf("messages after the lame duck: %d, want 2", got)
	}
}

// TestStartClusterFailureLeavesNothing: a size out of bounds is refused
// before anything starts; nodes that cannot start and a canceled start
// leave no process and no file.
func TestStartClusterFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	bin, err := broker.ServerBinary(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		opts broker.Options
		n    int
		want error
	}{
		{"below MinClusterSize", t.Context(), broker.Options{Tenants: []string{"t1"}, Binary: bin}, broker.MinClusterSize - 1, broker.ErrInvalidOptions},
		{"past MaxClusterSize", t.Context(), broker.Options{Tenants: []string{"t1"}, Binary: bin}, broker.MaxClusterSize + 1, broker.ErrInvalidOptions},
		{"invalid options", t.Context(), broker.Options{Binary: bin}, broker.MinClusterSize, broker.ErrInvalidOptions},
		{"bad config", t.Context(), broker.Options{Tenants: []string{"t1"}, Binary: bin, Extra: "jetstream {"}, broker.MinClusterSize, broker.ErrExited},
		{"canceled", canceled, broker.Options{Tenants: []string{"t1"}, Binary: bin}, broker.MinClusterSize, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.opts.Dir = t.TempDir()
			c, err := broker.StartCluster(tc.ctx, tc.opts, tc.n)
			if !errors.Is(err, tc.want) {
				t.Errorf("StartCluster: %v, want %v", err, tc.want)
			}
			if c != nil {
				t.Errorf("StartCluster returned a cluster with an error")
			}
			if left := dirEntries(t, tc.opts.Dir); len(left) != 0 {
				t.Errorf("files left: %v", left)
			}
		})
	}
}
