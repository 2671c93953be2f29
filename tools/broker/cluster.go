package broker

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/latent-systems/latent-nats/tools/faultproxy"
)

// Limits and names of a cluster.
const (
	// MinClusterSize is the fewest nodes of a cluster. A clustered
	// nats-server v2.14.6 needs configured routes to enable JetStream
	// (jetstream_cluster.go, enableJetStreamClustering) and bootstraps its
	// meta group expecting at least two peers (raft.go, bootstrapRaftNode),
	// so one node alone never elects a meta leader.
	MinClusterSize = 2
	// MaxClusterSize is the most nodes of a cluster, the server's most
	// replicas of a stream (stream.go, StreamMaxReplicas).
	MaxClusterSize = 5
	// DefaultClusterSize is the size the command's -cluster flag documents
	// and tests use: three nodes hold R3 streams and survive one loss.
	DefaultClusterSize = 3
	// ClusterName is the cluster's name (`cluster { name }`).
	ClusterName = "latent-cluster"

	// MaxClusterWait bounds every wait of a [Cluster] (formation, health,
	// a leader) whatever the caller's context allows.
	MaxClusterWait = 5 * time.Minute
	// ClusterPoll is how long a wait of a [Cluster] pauses between two
	// checks of its condition.
	ClusterPoll = 50 * time.Millisecond
	// MonitorTimeout bounds one request to a node's HTTP monitor, so that a
	// paused node costs a wait no more than this per check.
	MonitorTimeout = 2 * time.Second
	// MaxMonitorReply is the most bytes read of one monitor reply.
	MaxMonitorReply = 256 << 10

	// portAttempts bounds how often StartCluster picks new route ports
	// when another process took one between its choice and the server's
	// listen.
	portAttempts = 3
	// nodeDirPrefix names each node's directory inside the cluster's.
	nodeDirPrefix = "node-"
)

// NodeName returns the server_name of a cluster's node i (from 0):
// "latent-node-0", "latent-node-1", ...
func NodeName(i int) string { return "latent-node-" + strconv.Itoa(i) }

// Cluster is a set of nats-server processes routed to each other on
// 127.0.0.1, each a [Broker] (a node) with its own directory, client port,
// route port, HTTP monitor and JetStream store, all sharing one operator,
// system account and tenant accounts, and one CA and server certificate,
// so a client verifies every node with the same server name and roots, and
// a user minted once connects to any node. Its methods are safe for
// concurrent use; each node's lifecycle calls are the Broker's own (Kill,
// Restart, Pause, Resume, LameDuck, Stop).
type Cluster struct {
	opts      Options
	dir       string
	pki       *pki
	*identity // the operator, accounts and users: Tenants, AccountKey, User, Admin, System
	nodes     []*Broker
	monitor   monitorClient
	// proxies[i][j] is the fault proxy of node i's routes to node j, with
	// [Options.ProxyRoutes]; nil otherwise.
	proxies [][]*faultproxy.Proxy

	mu     sync.Mutex
	closed bool
}

// StartCluster starts a cluster of n nodes (MinClusterSize to
// MaxClusterSize) configured by opts, as [Start] configures one broker,
// and returns once every node is ready and [Cluster.WaitFormed] reports a
// JetStream meta leader that counts every node as a current peer, and
// every node's whole route mesh. Each
// node's configuration adds a `cluster` block (name [ClusterName], its
// route port, routes to every node) and an HTTP monitor on a free port;
// its server_name is [NodeName] of its index. The route ports are chosen
// free before the nodes start (the routes must name them); if another
// process takes one meanwhile (a node exits with ErrPortTaken) the nodes
// are started again on new ports, at most three times. ctx bounds finding the binary, the start and the
// formation; on any error nothing is left behind.
//
// With [Options.ProxyRoutes], each node's routes go through a fault proxy
// per other node (see [Cluster.RouteProxy]), started before the nodes;
// the formation then waits for the mesh through them.
//
// With a cluster, [Options.Log] receives every node's lines, each
// prefixed with "[<node name>] ", one line at a time.
func StartCluster(ctx context.Context, opts Options, n int) (*Cluster, error) {
	if n < MinClusterSize || n > MaxClusterSize {
		return nil, &OptionError{Field: "cluster size"}
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	bin := opts.Binary
	if bin == "" {
		var err error
		if bin, err = ServerBinary(ctx); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp(opts.Dir, "latent-cluster-")
	if err != nil {
		return nil, fmt.Errorf("broker: temporary directory: %w", err)
	}
	c := &Cluster{opts: opts, dir: dir, monitor: newMonitorClient()}
	if err := c.prepare(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		ports, err := freePorts(n)
		if err == nil && opts.ProxyRoutes {
			c.proxies, err = startRouteProxies(ports)
		}
		if err == nil {
			c.nodes, err = c.startNodes(ctx, bin, ports)
		}
		if err == nil {
			break
		}
		closeProxies(c.proxies)
		c.proxies = nil
		if attempt == portAttempts || !errors.Is(err, ErrPortTaken) {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	if _, err := c.WaitFormed(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// prepare generates the shared certificates and identities and writes the
// CA into the cluster's directory.
func (c *Cluster) prepare() error {
	var err error
	if c.pki, err = newPKI(c.opts.serverName(), time.Now()); err != nil {
		return err
	}
	if c.identity, err = newIdentity(c.opts.Tenants, c.opts.accountLimits(), c.opts.SigningKeys...); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.dir, caFile), c.pki.caPEM, 0o600); err != nil {
		return fmt.Errorf("broker: writing %s: %w", caFile, err)
	}
	return nil
}

// startNodes starts one node per route port, all at once, and waits for
// them; on any error it closes every node it made and returns the first
// error.
func (c *Cluster) startNodes(ctx context.Context, bin string, ports []int) ([]*Broker, error) {
	var log *lockedWriter
	if c.opts.Log != nil {
		log = &lockedWriter{w: c.opts.Log}
	}
	nodes := make([]*Broker, len(ports))
	errs := make([]error, len(ports))
	for i := range ports {
		opts := c.opts
		if log != nil {
			opts.Log = &prefixWriter{w: log, prefix: "[" + NodeName(i) + "] "}
		}
		node := &nodeConfig{name: NodeName(i), cluster: ClusterName, routePort: ports[i], routePorts: ports}
		if c.proxies != nil {
			node.routeAddrs, node.advertise = routeAddrs(c.proxies, i), gossipAdvertise()
		}
		nodes[i] = &Broker{
			opts: opts, bin: bin, dir: filepath.Join(c.dir, nodeDirPrefix+strconv.Itoa(i)),
			ring: &logRing{}, pki: c.pki, identity: c.identity, node: node,
		}
	}
	var wg sync.WaitGroup
	for i, b := range nodes {
		wg.Go(func() {
			if err := os.Mkdir(b.dir, 0o700); err != nil {
				errs[i] = fmt.Errorf("broker: node directory: %w", err)
				return
			}
			if errs[i] = b.prepare(); errs[i] == nil {
				errs[i] = b.launch(ctx, -1)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		closeAll(nodes)
		return nil, err
	}
	return nodes, nil
}

// closeAll closes the nodes at once and waits for them.
func closeAll(nodes []*Broker) {
	var wg sync.WaitGroup
	for _, b := range nodes {
		wg.Go(func() { _ = b.Close() })
	}
	wg.Wait()
}

// freePorts returns n distinct ports that were free on 127.0.0.1 a moment
// ago: each is listened on at once (the kernel picks it) and released.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("broker: choosing a route port: %w", err)
		}
		lns = append(lns, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Size returns the number of nodes.
func (c *Cluster) Size() int { return len(c.nodes) }

// Node returns node i (from 0); it panics when i is out of range, as an
// index into a slice does.
func (c *Cluster) Node(i int) *Broker { return c.nodes[i] }

// Nodes returns the nodes in index order (a new slice).
func (c *Cluster) Nodes() []*Broker { return slices.Clone(c.nodes) }

// NodeNamed returns the node whose server_name is name, or nil.
func (c *Cluster) NodeNamed(name string) *Broker {
	for _, b := range c.nodes {
		if b.Name() == name {
			return b
		}
	}
	return nil
}

// Index returns b's index in the cluster, or -1 when b is not one of its
// nodes.
func (c *Cluster) Index(b *Broker) int { return slices.Index(c.nodes, b) }

// Addrs returns every node's client address, in index order.
func (c *Cluster) Addrs() []netip.AddrPort {
	out := make([]netip.AddrPort, len(c.nodes))
	for i, b := range c.nodes {
		out[i] = b.Addr()
	}
	return out
}

// Name returns the cluster's name, [ClusterName].
func (c *Cluster) Name() string { return ClusterName }

// ServerName returns the DNS name in the certificate every node presents.
func (c *Cluster) ServerName() string { return c.opts.serverName() }

// Handshake returns the client listeners' TLS mode.
func (c *Cluster) Handshake() HandshakeMode { return c.opts.handshake() }

// RootCAs returns a new pool holding only the cluster's CA.
func (c *Cluster) RootCAs() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.pki.caPEM)
	return pool
}

// CAPEM returns a copy of the CA certificate in PEM.
func (c *Cluster) CAPEM() []byte { return slices.Clone(c.pki.caPEM) }

// CAFile returns the path of the CA certificate in PEM (inside Dir).
func (c *Cluster) CAFile() string { return filepath.Join(c.dir, caFile) }

// Dir returns the cluster's directory, which holds each node's; Close
// removes it.
func (c *Cluster) Dir() string { return c.dir }

// WriteCreds writes cr in the .creds layout to a file called name (no
// path separators) inside Dir, mode 0600, and returns its path. Close
// removes it.
func (c *Cluster) WriteCreds(name string, cr Creds) (string, error) {
	return writeCreds(c.dir, name, cr)
}

// Logs returns every node's log (see [Broker.Logs]), each after a line
// naming the node.
func (c *Cluster) Logs() []byte {
	var out []byte
	for _, b := range c.nodes {
		out = append(out, "=== "+b.Name()+" ===\n"...)
		out = append(out, b.Logs()...)
	}
	return out
}

// Close closes every node at once (see [Broker.Close]) and removes the
// cluster's directory. It is idempotent.
func (c *Cluster) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	closeAll(c.nodes)
	closeProxies(c.proxies)
	c.monitor.close()
	return os.RemoveAll(c.dir)
}

// running returns the nodes whose process runs and is not paused.
func (c *Cluster) running() []*Broker {
	var out []*Broker
	for _, b := range c.nodes {
		if b.Running() && !b.Paused() {
			out = append(out, b)
		}
	}
	return out
}

// lockedWriter serialises the nodes' log lines into one writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// prefixWriter writes each line (the log sink writes whole lines) after
// its node's prefix, as one write.
type prefixWriter struct {
	w      *lockedWriter
	prefix string
}

func (p *prefixWriter) Write(line []byte) (int, error) {
	p.w.mu.Lock()
	defer p.w.mu.Unlock()
	if _, err := p.w.w.Write(append([]byte(p.prefix), line...)); err != nil {
		return 0, err
	}
	return len(line), nil
}
