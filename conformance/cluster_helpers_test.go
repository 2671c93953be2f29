package conformance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/clustertest"
	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// The cluster scenarios' bounds.
const (
	// clusterReplicas is the replica count of every stream and consumer
	// of the cluster scenarios.
	clusterReplicas = 3
	// clusterSettle bounds how long the consumers may take to settle
	// after the last fault of a cluster scenario: an election (4 to 9 s,
	// longer on a loaded machine), an ack wait and a few steps.
	clusterSettle = 60 * time.Second
	// clusterPublishTimeout bounds one publish of the cluster publisher;
	// a stream electing a leader answers nothing meanwhile.
	clusterPublishTimeout = 2 * time.Second
)

// clusterSpec describes one cluster case: its tenants, the node each
// tenant's runtime connection is pinned to, and the node the tenants'
// administrators use (provisioning, inspecting).
type clusterSpec struct {
	tenants []string
	// pins holds, for each tenant, the index of the node its
	// trigger.Destination names.
	pins []int
	// admin is the index of the node the administrators dial; a case
	// keeps it running while it reads the consumers.
	admin int
	// binding adjusts each binding of tenant k after the defaults are
	// set.
	binding func(k int, b *trigger.Binding)
	// perTenant, when set, holds each tenant's number of bindings (one
	// stream, one consumer each); nil means one. Binding i of tenant k is
	// "<tenant>.b<i>" (trigSpec.bindingOf).
	perTenant []int
}

// clusterEnv is a trigEnv on a cluster: e.b is the administrators' node.
type clusterEnv struct {
	*trigEnv
	c    *broker.Cluster
	spec clusterSpec
	// runtime holds each tenant's runtime user, for a second process.
	runtime []broker.Creds
}

// clusterInstall provisions spec on c (per tenant one file-backed R3
// stream and one R3 profile consumer, one runtime user with the derived
// permissions) and installs it with the reference host; tenant k's
// destination is node spec.pins[k], with the cluster's one server name
// and CA.
func clusterInstall(t *testing.T, c *broker.Cluster, spec clusterSpec) *clusterEnv {
	t.Helper()
	adminNode := c.Node(spec.admin)
	e := &trigEnv{
		b:       adminNode,
		calls:   make(chan trigCall, 4096),
		started: make(chan trigCall, 16),
		release: make(chan struct{}),
	}
	e.cfg = trigger.Config{
		Profile:             trigger.ProfileName,
		PollIntervalMS:      trigger.MinPollIntervalMS,
		MaxControlLineBytes: 4096,
		MaxHeaderBytes:      4096,
	}
	var creds []trigger.Credential
	var runtime []broker.Creds
	for k, id := range spec.tenants {
		node := c.Node(spec.pins[k])
		dest := trigger.Destination{
			Address:        node.Addr(),
			ServerName:     c.ServerName(),
			RootCAsPEM:     string(c.CAPEM()),
			AllowNonPublic: true,
		}
		adminCreds, err := c.Admin(id)
		if err != nil {
			t.Fatal(err)
		}
		acct, err := c.AccountKey(id)
		if err != nil {
			t.Fatal(err)
		}
		te := &trigTenantEnv{id: id, account: acct, adm: &trigAdmin{t: t, c: pullDial(t, adminNode, adminCreds)}}
		e.tenants = append(e.tenants, te)
		e.cfg.Tenants = append(e.cfg.Tenants, trigger.Tenant{ID: id, ProviderID: "local", Destination: dest})
		// The suite's binding defaults, with the cluster cases' max_deliver
		// of 5, then spec's adjustments.
		n := 1
		if spec.perTenant != nil {
			n = spec.perTenant[k]
		}
		var subjects []string
		var binds []jspull.Binding
		for i := range n {
			bc := trigSpec{tenants: spec.tenants, binding: func(k, _ int, b *trigger.Binding) {
				b.MaxDeliver = 5
				if spec.binding != nil {
					spec.binding(k, b)
				}
			}}.bindingOf(k, i)
			e.cfg.Bindings = append(e.cfg.Bindings, bc)
			subjects = append(subjects, bc.FilterSubject)
			binds = append(binds, trigPullBinding(bc))
		}
		clusterCreate(t, te.adm, "$JS.API.STREAM.CREATE."+trigStream, map[string]any{
			"name": trigStream, "subjects": subjects, "storage": "file",
			"num_replicas": clusterReplicas,
		})
		for _, pb := range binds {
			cc := profileConfig(pb)
			cc["num_replicas"] = clusterReplicas
			clusterCreate(t, te.adm, "$JS.API.CONSUMER.CREATE."+trigStream+"."+pb.Consumer, map[string]any{
				"stream_name": trigStream, "config": cc, "action": "create",
			})
		}
		perms, err := jspull.DerivePermissions(trigger.InboxPrefix(id), binds...)
		if err != nil {
			t.Fatal(err)
		}
		uc, err := c.User(id, broker.UserSpec{Name: "trigger", PubAllow: perms.Publish, SubAllow: perms.Subscribe})
		if err != nil {
			t.Fatal(err)
		}
		file, err := uc.File()
		if err != nil {
			t.Fatal(err)
		}
		secret, err := credential.ParseCreds(file)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(secret.Wipe)
		creds = append(creds, trigger.Credential{Tenant: id, ProviderID: "local", Destination: dest, Secret: secret})
		runtime = append(runtime, uc)
	}

	lim := trigger.DefaultPoolLimits()
	lim.DialBackoff = trigger.MinDialBackoff
	lim.MaxDialBackoff = 200 * time.Millisecond
	pools, err := trigger.NewPools(trigger.PoolConfig{Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pools.Close)
	e.pools, e.creds = pools, creds
	e.trig, e.mon, err = trigger.Install(pools, trigger.Installation{LogicalID: "conformance", Epoch: 1, Config: e.cfg, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.trig.Close)
	e.led = ledger.New(e.cfg)
	e.ref, err = refhost.New(refhost.Config{MaxActivations: 16, MaxInputBytes: 16 * 256})
	if err != nil {
		t.Fatal(err)
	}
	e.host = &trigHookHost{Host: e.ref, led: e.led}
	e.register(t, "r1", trigFunction)
	if err := e.ref.Publish(refhost.PublicationKey{Service: trigService, Contract: trigContract, Function: trigFunction}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ref.SetRoute(trigService, "", "r1"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), trigWait)
		defer cancel()
		if err := e.ref.WaitIdle(ctx); err != nil {
			t.Errorf("reference host not idle: %v", err)
		}
	})
	return &clusterEnv{trigEnv: e, c: c, spec: spec, runtime: runtime}
}

// clusterCreate sends a create request until the cluster accepts it,
// within clusterWait: a cluster just formed may still refuse an R3
// placement (400/10005, a peer it counts as offline) or leave a request
// unanswered while a group elects.
func clusterCreate(t *testing.T, a *trigAdmin, subject string, req any) {
	t.Helper()
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(clusterWait)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), pullTimeout)
		r, err := a.c.Request(ctx, subject, nil, body)
		cancel()
		var resp struct {
			Error *struct {
				Code    int `json:"code"`
				ErrCode int `json:"err_code"`
			} `json:"error"`
		}
		if err == nil && r.Status == 0 && json.Unmarshal(r.Payload, &resp) == nil && resp.Error == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not accepted within %v: status %d, %v, %+v", subject, clusterWait, r.Status, err, resp.Error)
		}
		if a.c.Closed() {
			t.Fatalf("%s: the administrator's connection closed: %v", subject, err)
		}
		time.Sleep(100 * time.Millisecond) // the next attempt, bounded by the deadline
	}
}

// requester returns a broker.Requester as tenant k's administrator
// through the first node that runs.
func (ce *clusterEnv) requester(t *testing.T, k int) broker.Requester {
	t.Helper()
	creds, err := ce.c.Admin(ce.tenants[k].id)
	if err != nil {
		t.Fatal(err)
	}
	return clustertest.Requester(ce.c, creds)
}

// leaders waits for tenant k's stream and consumer leaders and returns
// them (one binding per tenant).
func (ce *clusterEnv) leaders(t *testing.T, k int) (stream, consumer *broker.Broker) {
	t.Helper()
	return ce.leadersOf(t, k, k)
}

// leadersOf waits for tenant k's stream leader and for the leader of the
// consumer of binding b (an index of the configuration's bindings, one of
// tenant k's) and returns them.
func (ce *clusterEnv) leadersOf(t *testing.T, k, b int) (stream, consumer *broker.Broker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clusterWait)
	defer cancel()
	req := ce.requester(t, k)
	var err error
	if stream, err = ce.c.WaitStreamLeader(ctx, req, trigStream, nil); err != nil {
		t.Fatalf("stream leader of tenant %s: %v", ce.tenants[k].id, err)
	}
	if consumer, err = ce.c.WaitConsumerLeader(ctx, req, trigStream, ce.cfg.Bindings[b].Consumer, nil); err != nil {
		t.Fatalf("consumer leader of tenant %s: %v", ce.tenants[k].id, err)
	}
	return stream, consumer
}

// moveLeaders makes node to the leader of tenant k's stream and of its
// consumer, stepping each leader down in its favour when another node
// leads, and waits until the info of each names it (one binding per
// tenant).
func (ce *clusterEnv) moveLeaders(t *testing.T, k int, to *broker.Broker) {
	t.Helper()
	ce.moveLeadersOf(t, k, k, to)
}

// moveLeadersOf is moveLeaders for tenant k's stream and the consumer of
// binding b (see leadersOf).
func (ce *clusterEnv) moveLeadersOf(t *testing.T, k, b int, to *broker.Broker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clusterWait)
	defer cancel()
	req := ce.requester(t, k)
	consumer := ce.cfg.Bindings[b].Consumer
	for range 5 {
		s, cons := ce.leadersOf(t, k, b)
		if s == to && cons == to {
			return
		}
		if s != to {
			if err := ce.c.StepDownStream(ctx, req, trigStream, to); err != nil {
				t.Logf("stream step-down to %s: %v", to.Name(), err)
			} else if _, err := ce.c.WaitStreamLeader(ctx, req, trigStream, s); err != nil {
				t.Fatal(err)
			}
		}
		if cons != to {
			if err := ce.c.StepDownConsumer(ctx, req, trigStream, consumer, to); err != nil {
				t.Logf("consumer step-down to %s: %v", to.Name(), err)
			} else if _, err := ce.c.WaitConsumerLeader(ctx, req, trigStream, consumer, cons); err != nil {
				t.Fatal(err)
			}
		}
	}
	s, cons := ce.leadersOf(t, k, b)
	t.Fatalf("tenant %s: leaders %s and %s, want both on %s", ce.tenants[k].id, s.Name(), cons.Name(), to.Name())
}

// tenantOf returns the tenant index of a step report (one binding per
// tenant).
func tenantOf(r trigger.StepReport) int { return r.Binding }

// waitResume waits, within clusterSettle, for tenant k's first verified
// acknowledgement of a step that started at or after since, and returns
// the time from since to the report.
func waitResume(t *testing.T, h *procHost, from, k int, since time.Time) time.Duration {
	t.Helper()
	r := h.waitReportWithin(t, fmt.Sprintf("tenant %d delivering again", k), from, clusterSettle, func(r procReport) bool {
		return tenantOf(r.Report) == k && verifiedAck(r.Report) && !r.Report.At.Before(since)
	})
	return r.At.Sub(since)
}

// longestGap returns the longest time between two consecutive verified
// acknowledgements of tenant k among the reports from from on, counting
// from since.
func longestGap(h *procHost, from, k int, since time.Time) time.Duration {
	var gap time.Duration
	prev := since
	for _, r := range h.reports(from) {
		if tenantOf(r.Report) != k || !verifiedAck(r.Report) || r.At.Before(since) {
			continue
		}
		gap = max(gap, r.At.Sub(prev))
		prev = r.At
	}
	return gap
}

// clusterClasses are the error classes a step may report while a cluster
// elects leaders, loses a node or restarts one (trigger.ErrorClass):
// a dial refused or in backoff, a connection closed or timed out, 503
// no responders while a consumer has no leader (reported as a missing
// consumer), a JetStream API error from a node without a current leader,
// 409 Leadership Change or Server Shutdown, an acknowledgement without a
// receipt, a pull refused while another waits, and the backoff of a
// binding whose consumer left a request unanswered.
var clusterClasses = []trigger.ErrorClass{
	trigger.ClassDialBackoff,
	trigger.ClassBindingBackoff,
	trigger.ClassDial,
	trigger.ClassConnection,
	trigger.ClassConsumerMissing,
	trigger.ClassAPI,
	trigger.ClassBrokerUnavailable,
	trigger.ClassAckUncertain,
	trigger.ClassBusy,
}

// classCounts counts the error classes of tenant k's reports from from on
// (k < 0: every tenant's).
func classCounts(h *procHost, from, k int) map[trigger.ErrorClass]int {
	out := make(map[trigger.ErrorClass]int)
	for _, r := range h.reports(from) {
		if r.Report.Error != 0 && (k < 0 || tenantOf(r.Report) == k) {
			out[r.Report.Error]++
		}
	}
	return out
}

// formatClasses formats class counts in class order.
func formatClasses(m map[trigger.ErrorClass]int) string {
	keys := make([]trigger.ErrorClass, 0, len(m))
	for c := range m {
		keys = append(keys, c)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	var parts []string
	for _, c := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", c, m[c]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// checkClasses fails the case for every class seen that is not one a
// cluster fault may produce (clusterClasses): ClassInternal and
// ClassProtocol above all.
func checkClasses(t *testing.T, seen map[trigger.ErrorClass]int) {
	t.Helper()
	for c, n := range seen {
		if !slices.Contains(clusterClasses, c) {
			t.Errorf("class %s reported %d times: not a class of a cluster fault", c, n)
		}
	}
}

// clusterSettleVerdict waits, within clusterSettle, for every consumer of
// the case to settle and returns the ledger's verdict.
func (ce *clusterEnv) settleVerdict(t *testing.T) (ledger.Verdict, time.Duration) {
	t.Helper()
	return ce.settleVerdictWithin(t, clusterSettle)
}

// settleVerdictWithin is settleVerdict with its own bound, for a case
// that leaves a backlog to drain.
func (ce *clusterEnv) settleVerdictWithin(t *testing.T, within time.Duration) (ledger.Verdict, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), within)
	defer cancel()
	views, took, err := ce.led.WaitSettled(ctx, faultTick, func(ctx context.Context, id string) (ledger.ConsumerView, error) {
		return ce.consumerView(t, ctx, id)
	})
	v := ce.led.Verdict(views)
	if err != nil {
		t.Fatalf("consumers not settled within %v: %v\n%s", within, err, v)
	}
	t.Logf("settled in %v: %s", took, v)
	return v, took
}

// clusterPublisher publishes n events to one tenant's binding, one per
// tick, through whichever node runs: an attempt that fails (a node down,
// a stream electing its leader) is sent again at the next tick with the
// same Nats-Msg-Id, through the next node after a connection failure or a
// status, so that every event is recorded in the ledger once, at the
// sequence it was stored at.
type clusterPublisher struct {
	ce *clusterEnv
	k  int
	// b is the binding published to (an index of the configuration's
	// bindings), i its index among tenant k's.
	b, i int
	n    int
	tick time.Duration
	cr   broker.Creds

	mu     sync.Mutex
	stored []time.Time
	failed int
	done   chan error
	// halt, once closed, ends the publisher before its next event (an
	// event whose attempt failed is still retried until stored, so that
	// nothing stored goes unrecorded).
	halt     chan struct{}
	haltOnce sync.Once
}

// startPublisher starts publishing n events for tenant k, one per tick,
// until they are stored or ctx ends; wait returns its error.
func (ce *clusterEnv) startPublisher(t *testing.T, ctx context.Context, k, n int, tick time.Duration) *clusterPublisher {
	t.Helper()
	return ce.startBindingPublisher(t, ctx, k, k, 0, n, tick)
}

// startBindingPublisher is startPublisher for binding b of the
// configuration, binding i of tenant k.
func (ce *clusterEnv) startBindingPublisher(t *testing.T, ctx context.Context, k, b, i, n int, tick time.Duration) *clusterPublisher {
	t.Helper()
	cr, err := ce.c.Admin(ce.tenants[k].id)
	if err != nil {
		t.Fatal(err)
	}
	p := &clusterPublisher{ce: ce, k: k, b: b, i: i, n: n, tick: tick, cr: cr, done: make(chan error, 1), halt: make(chan struct{})}
	ctx, cancel := context.WithCancel(ctx)
	go func() { p.done <- p.work(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

// wait waits, within clusterSettle, for every event to be stored.
func (p *clusterPublisher) wait(t *testing.T) {
	t.Helper()
	timer := time.NewTimer(clusterSettle + time.Duration(p.n)*p.tick)
	defer timer.Stop()
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup
		if err != nil {
			t.Fatalf("publisher of tenant %d: %v", p.k, err)
		}
	case <-timer.C:
		t.Fatalf("publisher of tenant %d: not every event stored in time", p.k)
	}
}

// stop ends the publisher before its next event and waits for it.
func (p *clusterPublisher) stop(t *testing.T) {
	t.Helper()
	p.haltOnce.Do(func() { close(p.halt) })
	p.wait(t)
}

// times returns when each event was stored, and the failed attempts.
func (p *clusterPublisher) times() ([]time.Time, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.stored), p.failed
}

// count returns how many events are stored.
func (p *clusterPublisher) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.stored)
}

func (p *clusterPublisher) work(ctx context.Context) error {
	ticker := time.NewTicker(p.tick)
	defer ticker.Stop()
	var c *conn.Conn
	defer func() {
		if c != nil {
			_ = c.Close()
		}
	}()
	node := p.k % p.ce.c.Size()
	id := p.ce.cfg.Bindings[p.b].ID
	subject := trigSubject(p.ce.tenants[p.k].id, p.i)
	retry := false
	for i := 0; i < p.n; {
		if !retry {
			select {
			case <-p.halt:
				return nil
			default:
			}
		}
		retry = true
		select {
		case <-ctx.Done():
			return fmt.Errorf("event %d of %d not stored: %w", i, p.n, ctx.Err())
		case <-ticker.C:
		}
		if c != nil && (c.Closed() || c.LameDuck()) {
			_ = c.Close()
			c = nil
		}
		if c == nil {
			b := p.ce.c.Node(node)
			node = (node + 1) % p.ce.c.Size()
			if !b.Running() {
				p.fail()
				continue
			}
			cfg, err := clusterConnConfig(p.ce.c, b, p.cr)
			if err != nil {
				return err
			}
			dctx, cancel := context.WithTimeout(ctx, procDialTimeout)
			nc, err := conn.Dial(dctx, cfg)
			cancel()
			if err != nil {
				p.fail()
				continue
			}
			c = nc
		}
		hdr := []byte(fmt.Sprintf("NATS/1.0\r\nNats-Msg-Id: %s-%d\r\n\r\n", id, i))
		rctx, cancel := context.WithTimeout(ctx, clusterPublishTimeout)
		r, err := c.Request(rctx, subject, hdr, trigPayload(argOK))
		cancel()
		if err == nil && r.Status != 0 {
			// 503 no responders: this node reaches no stream leader (an
			// election, or a node cut off from the others); the next
			// attempt goes through the next node.
			_ = c.Close()
			c = nil
		}
		if err != nil || r.Status != 0 {
			p.fail()
			continue
		}
		var ack struct {
			Seq   uint64 `json:"seq"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(r.Payload, &ack); err != nil || ack.Error != nil || ack.Seq == 0 {
			p.fail()
			continue
		}
		p.ce.led.Published(id, ack.Seq)
		p.mu.Lock()
		p.stored = append(p.stored, time.Now())
		p.mu.Unlock()
		i++
		retry = false
	}
	return nil
}

func (p *clusterPublisher) fail() {
	p.mu.Lock()
	p.failed++
	p.mu.Unlock()
}

// clusterConnConfig is the configuration of an administrator's
// connection to node b.
func clusterConnConfig(c *broker.Cluster, b *broker.Broker, cr broker.Creds) (conn.Config, error) {
	file, err := cr.File()
	if err != nil {
		return conn.Config{}, err
	}
	secret, err := credential.ParseCreds(file)
	clear(file)
	if err != nil {
		return conn.Config{}, err
	}
	return conn.Config{
		Addr:           b.Addr(),
		AllowNonPublic: b.Addr().Addr(),
		ServerName:     c.ServerName(),
		Roots:          c.RootCAs(),
		Credential:     secret,
		Name:           "conformance-publisher",
	}, nil
}

// ranAll reports whether the function ran on every event published for
// tenant k's binding so far.
func (ce *clusterEnv) ranAll(k int) bool {
	id := ce.cfg.Bindings[k].ID
	last := ce.led.LastPublished(id)
	ran := make(map[uint64]bool)
	for _, c := range ce.callLog() {
		if c.Binding == id {
			ran[c.StreamSeq] = true
		}
	}
	// Sequences of one binding's stream are 1..last: one subject each.
	for seq := uint64(1); seq <= last; seq++ {
		if !ran[seq] {
			return false
		}
	}
	return true
}

// waitFlowing waits, within clusterSettle, until each publisher stored ten
// events and the function ran on every event stored; at the bound it
// fails with the publishers' counts and the classes the steps reported.
func (ce *clusterEnv) waitFlowing(t *testing.T, h *procHost, from int, pubs ...*clusterPublisher) {
	t.Helper()
	ce.waitFlowingFrom(t, h, from, "events flowing", make([]int, len(pubs)), pubs...)
}

// nodeName is b's name, "none" for nil.
func nodeName(b *broker.Broker) string {
	if b == nil {
		return "none"
	}
	return b.Name()
}

// waitFlowingFrom is waitFlowing with ten more events than counts[i]
// for publisher i.
func (ce *clusterEnv) waitFlowingFrom(t *testing.T, h *procHost, from int, what string, counts []int, pubs ...*clusterPublisher) {
	t.Helper()
	deadline := time.Now().Add(clusterSettle)
	for {
		ok := true
		for i, p := range pubs {
			ok = ok && p.count() >= counts[i]+10 && ce.ranAll(p.k)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			for i, p := range pubs {
				_, failed := p.times()
				t.Logf("tenant %d: %d stored (%d before), %d failed attempts, all run %v, classes %s",
					p.k, p.count(), counts[i], failed, ce.ranAll(p.k), formatClasses(classCounts(h, from, p.k)))
			}
			// What the broker says of each consumer: whether the events
			// wait in it (the runtime not taking them) or not (the
			// broker's state).
			for _, b := range ce.cfg.Bindings {
				cv, err := ce.consumerView(t, t.Context(), b.ID)
				if err != nil { // the administrator's connection redialled
					cv, err = ce.consumerView(t, t.Context(), b.ID)
				}
				ctx, cancel := context.WithTimeout(t.Context(), pullTimeout)
				req := ce.requester(t, ce.cfg.TenantIndex(b.Tenant))
				sl, serr := ce.c.StreamLeader(ctx, req, b.Stream)
				cl, cerr := ce.c.ConsumerLeader(ctx, req, b.Stream, b.Consumer)
				cancel()
				t.Logf("binding %s: the broker's view %+v, %v; stream leader %v (%v), consumer leader %v (%v)",
					b.ID, cv, err, nodeName(sl), serr, nodeName(cl), cerr)
			}
			for i, cs := range ce.mon.Snapshot().Consumers {
				t.Logf("binding %s: the runtime's last consumer info %+v (%v ago)", ce.cfg.Bindings[i].ID, cs, time.Since(cs.At).Round(time.Millisecond))
			}
			s := ce.mon.Snapshot()
			t.Fatalf("%s: not within %v: %d steps, %d dials, totals %+v", what, clusterSettle, s.Steps, s.Dials, s.Totals)
		}
		time.Sleep(trigPollTick)
	}
}
