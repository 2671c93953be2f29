package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/clustertest"
)

// The empty consumers of nats.go's loops in -mode cluster, one per client
// so that each user holds only its own loops' permissions.
const (
	loopEmptyCore loopName = "emptycore"
	loopEmptyJS   loopName = "emptyjs"
)

// Fixed settings of the cluster comparison.
const (
	// pinNode is the node every measured connection is pinned to.
	pinNode = 0
	// remoteNode is the node that leads the stream and every consumer with
	// -cluster-leader remote: each request then crosses one route.
	remoteNode = 1
	// placeAttempts bounds the step-downs that move one leader.
	placeAttempts = 4
	// publishWindow bounds the asynchronous publishes in flight.
	publishWindow = 256
	// publishBound bounds the publication of one loop's messages.
	publishBound = 3 * time.Minute
)

// clusterEnv is the cluster with its R3 stream and consumers, the leaders
// placed, and every loop's connection pinned to one node.
type clusterEnv struct {
	cl     *broker.Cluster
	pin    *broker.Broker // the node every connection is pinned to
	lead   *broker.Broker // the node leading the stream and every consumer
	admin  *admin
	latent *conn.Conn
	core   *nats.Conn
	js     *nats.Conn
	pub    *nats.Conn // nats.go as the admin, for publishing only
	pids   []int      // the nodes' process ids, in index order
}

// startClusterEnv starts the cluster, provisions the stream and every
// consumer with co.nodes replicas, places their leaders, publishes perLoop
// messages for each message loop and dials every connection to the pinned
// node. On error everything started is stopped and removed.
func startClusterEnv(ctx context.Context, o pullOptions, co clusterOptions, perLoop int) (env *clusterEnv, err error) {
	bin := o.server
	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if bin == "" {
		if bin, err = broker.ServerBinary(sctx); err != nil {
			return nil, fmt.Errorf("peerbench: nats-server %s: %w (build it with `make broker` in the main module and pass -server or set %s)",
				broker.ServerVersion, err, broker.EnvServer)
		}
	} else if bin, err = filepath.Abs(bin); err != nil {
		return nil, err
	}
	cl, err := broker.StartCluster(sctx, broker.Options{Tenants: []string{pullTenant}, Binary: bin}, co.nodes)
	if err != nil {
		return nil, err
	}
	env = &clusterEnv{cl: cl, pin: cl.Node(pinNode)}
	defer func() {
		if err != nil {
			err = errors.Join(err, env.close())
			env = nil
		}
	}()
	for _, b := range cl.Nodes() {
		env.pids = append(env.pids, b.PID())
	}
	env.lead = cl.Node(remoteNode)
	if co.leader == "local" {
		env.lead = env.pin
	}

	adminCreds, err := cl.Admin(pullTenant)
	if err != nil {
		return env, err
	}
	ac, err := dialLatent(ctx, env.pin, adminCreds, "peerbench-admin", o.thread)
	if err != nil {
		return env, err
	}
	env.admin = &admin{c: ac}
	if err := env.admin.api(ctx, "$JS.API.STREAM.CREATE."+pullStream, map[string]any{
		"name": pullStream, "subjects": []string{"bench.>"}, "storage": o.storage, "num_replicas": co.nodes,
	}, nil); err != nil {
		return env, err
	}
	names := []loopName{loopLatent, loopCore, loopJetStream, loopEmpty, loopEmptyCore, loopEmptyJS}
	for _, n := range names {
		cfg := profileConfig(binding(n))
		cfg["num_replicas"] = co.nodes
		if err := env.admin.api(ctx, "$JS.API.CONSUMER.CREATE."+pullStream+"."+string(n), map[string]any{
			"stream_name": pullStream, "config": cfg, "action": "create",
		}, nil); err != nil {
			return env, err
		}
	}
	req := clustertest.NodeRequester(env.pin, adminCreds)
	if err := env.placeLeaders(ctx, req, names); err != nil {
		return env, err
	}

	if env.pub, err = dialNats(env.pin, adminCreds, "peerbench-publisher"); err != nil {
		return env, err
	}
	for _, n := range []loopName{loopLatent, loopCore, loopJetStream} {
		if err := publishAsync(ctx, env.pub, binding(n).FilterSubject, perLoop); err != nil {
			return env, err
		}
	}

	user := func(name string, bs ...jspull.Binding) (broker.Creds, error) {
		perms, err := jspull.DerivePermissions(conn.DefaultInboxPrefix, bs...)
		if err != nil {
			return broker.Creds{}, err
		}
		return cl.User(pullTenant, broker.UserSpec{Name: name, PubAllow: perms.Publish, SubAllow: perms.Subscribe})
	}
	lc, err := user("latent", binding(loopLatent), binding(loopEmpty))
	if err != nil {
		return env, err
	}
	if env.latent, err = dialLatent(ctx, env.pin, lc, "peerbench-latent", o.thread); err != nil {
		return env, err
	}
	cc, err := user("core", binding(loopCore), binding(loopEmptyCore))
	if err != nil {
		return env, err
	}
	if env.core, err = dialNats(env.pin, cc, "peerbench-core"); err != nil {
		return env, err
	}
	jc, err := user("jetstream", binding(loopJetStream), binding(loopEmptyJS))
	if err != nil {
		return env, err
	}
	if env.js, err = dialNats(env.pin, jc, "peerbench-jetstream"); err != nil {
		return env, err
	}
	return env, nil
}

// placeLeaders moves the stream's leader and each consumer's to env.lead
// by asking the current leader to step down in its favour.
func (e *clusterEnv) placeLeaders(ctx context.Context, r broker.Requester, consumers []loopName) error {
	place := func(what string, leader func() (*broker.Broker, error), stepDown func() error, wait func(old *broker.Broker) (*broker.Broker, error)) error {
		for range placeAttempts {
			cur, err := leader()
			if err != nil {
				return fmt.Errorf("peerbench: %s leader: %w", what, err)
			}
			if cur == e.lead {
				return nil
			}
			if err := stepDown(); err != nil {
				return fmt.Errorf("peerbench: %s step-down: %w", what, err)
			}
			if _, err := wait(cur); err != nil {
				return fmt.Errorf("peerbench: %s new leader: %w", what, err)
			}
		}
		return fmt.Errorf("peerbench: %s leader not on %s after %d step-downs", what, e.lead.Name(), placeAttempts)
	}
	err := place("stream",
		func() (*broker.Broker, error) { return e.cl.WaitStreamLeader(ctx, r, pullStream, nil) },
		func() error { return e.cl.StepDownStream(ctx, r, pullStream, e.lead) },
		func(old *broker.Broker) (*broker.Broker, error) {
			return e.cl.WaitStreamLeader(ctx, r, pullStream, old)
		})
	if err != nil {
		return err
	}
	for _, n := range consumers {
		err := place("consumer "+string(n),
			func() (*broker.Broker, error) { return e.cl.WaitConsumerLeader(ctx, r, pullStream, string(n), nil) },
			func() error { return e.cl.StepDownConsumer(ctx, r, pullStream, string(n), e.lead) },
			func(old *broker.Broker) (*broker.Broker, error) {
				return e.cl.WaitConsumerLeader(ctx, r, pullStream, string(n), old)
			})
		if err != nil {
			return err
		}
	}
	return nil
}

// publishAsync stores n messages of payloadSize bytes under subject with
// nats.go's asynchronous publish, publishWindow at a time, every one
// acknowledged by the stream, all within publishBound.
func publishAsync(ctx context.Context, nc *nats.Conn, subject string, n int) error {
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(publishWindow))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, publishBound)
	defer cancel()
	payload := make([]byte, payloadSize)
	for i := range payload {
		payload[i] = 'a' + byte(i%26)
	}
	futures := make([]jetstream.PubAckFuture, 0, publishWindow)
	for sent := 0; sent < n; {
		futures = futures[:0]
		for range min(publishWindow, n-sent) {
			f, err := js.PublishAsync(subject, payload)
			if err != nil {
				return fmt.Errorf("peerbench: publish to %s: %w", subject, err)
			}
			futures = append(futures, f)
		}
		select {
		case <-js.PublishAsyncComplete():
		case <-ctx.Done():
			return fmt.Errorf("peerbench: publish to %s: not acknowledged within %v", subject, publishBound)
		}
		for i, f := range futures {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				return fmt.Errorf("peerbench: publish %d to %s: %w", sent+i, subject, err)
			}
		}
		sent += len(futures)
	}
	return nil
}

// close closes every connection, stops every node and removes the
// cluster's directory.
func (e *clusterEnv) close() error {
	var errs []error
	for _, nc := range []*nats.Conn{e.core, e.js, e.pub} {
		if nc != nil {
			nc.Close()
		}
	}
	for _, c := range []*conn.Conn{e.latent, adminConn(e.admin)} {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	errs = append(errs, e.cl.Close())
	return errors.Join(errs...)
}

// clockTick is the unit of utime and stime in /proc/<pid>/stat: USER_HZ,
// 100 per second on Linux whatever the kernel's own tick.
const clockTick = 10 * time.Millisecond

// procCPU is a process's user plus system time from /proc/<pid>/stat
// (fields 14 and 15, counted after the parenthesised command name), in
// clockTick units.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("peerbench: broker cpu: %w", err)
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, errors.New("peerbench: broker cpu: malformed stat")
	}
	f := strings.Fields(string(b[i+1:]))
	// After ")": state is field 3, utime field 14, stime field 15.
	if len(f) < 13 {
		return 0, errors.New("peerbench: broker cpu: short stat")
	}
	u, err1 := strconv.ParseUint(f[11], 10, 63)
	s, err2 := strconv.ParseUint(f[12], 10, 63)
	if err1 != nil || err2 != nil {
		return 0, errors.New("peerbench: broker cpu: malformed times")
	}
	return time.Duration(u+s) * clockTick, nil
}

// brokerCPU is every node's CPU time so far, in index order.
func brokerCPU(pids []int) ([]time.Duration, error) {
	out := make([]time.Duration, len(pids))
	for i, pid := range pids {
		d, err := procCPU(pid)
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}
