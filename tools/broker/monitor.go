package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"
)

// Monitor endpoints of nats-server v2.14.6 (monitor.go: Jsz, HandleHealthz,
// Routez).
const (
	jszPath     = "/jsz"
	healthzPath = "/healthz"
	routezPath  = "/routez"
)

// routePoolSize is the number of pooled routes nats-server v2.14.6 keeps
// to each other node (DEFAULT_ROUTE_POOL_SIZE, const.go); the system
// account has one more route of its own to each (its pinned route).
const routePoolSize = 3

// monitorClient asks the nodes' HTTP monitors. It uses no proxy (and
// reads no environment for one), follows no redirect and keeps no idle
// connection.
type monitorClient struct {
	client    *http.Client
	transport *http.Transport
}

func newMonitorClient() monitorClient {
	t := &http.Transport{
		Proxy:             nil,
		DialContext:       (&net.Dialer{}).DialContext,
		DisableKeepAlives: true,
	}
	return monitorClient{
		client: &http.Client{
			Transport:     t,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		transport: t,
	}
}

func (m monitorClient) close() { m.transport.CloseIdleConnections() }

// get requests path from the monitor at addr, bounded by ctx and
// MonitorTimeout, and returns the status code and at most MaxMonitorReply
// bytes of the body.
func (m monitorClient) get(ctx context.Context, addr netip.AddrPort, path string) (int, []byte, error) {
	if !addr.IsValid() {
		return 0, nil, ErrNotRunning
	}
	ctx, cancel := context.WithTimeout(ctx, MonitorTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr.String()+path, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("broker: monitor request: %w", err)
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("broker: monitor request: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxMonitorReply))
	if err != nil {
		return 0, nil, fmt.Errorf("broker: monitor reply: %w", err)
	}
	return resp.StatusCode, body, nil
}

// metaCluster is what this package reads of /jsz's "meta_cluster"
// (MetaClusterInfo): the leader's name as this node sees it, and on the
// leader only, every other peer.
type metaCluster struct {
	Leader   string `json:"leader"`
	Size     int    `json:"cluster_size"`
	Replicas []struct {
		Name    string `json:"name"`
		Current bool   `json:"current"`
		Offline bool   `json:"offline"`
	} `json:"replicas"`
}

// meta returns b's view of the JetStream meta group; nil when b reports
// none yet.
func (c *Cluster) meta(ctx context.Context, b *Broker) (*metaCluster, error) {
	code, body, err := c.monitor.get(ctx, b.MonitorAddr(), jszPath)
	if err != nil {
		return nil, err
	}
	var r struct {
		Meta *metaCluster `json:"meta_cluster"`
	}
	if code != http.StatusOK || json.Unmarshal(body, &r) != nil {
		return nil, ErrMalformedReply
	}
	return r.Meta, nil
}

// WaitFormed waits until every running node that is not paused follows
// one JetStream meta leader (/jsz "meta_cluster.leader" on each), that
// leader reports each of the others as a current peer that is not offline,
// and every such node has its whole mesh of routes to each of the others
// (/routez: the pooled routes and the system account's), and returns the
// leader. The routes matter: the meta group may be formed before the
// pooled route that carries a tenant account's traffic between two nodes
// is, and a reply published on one of them to a client of the other is
// dropped until it is (seen as a stream create of an R3 stream that was
// created and never answered). Killed, stopped and paused nodes are left out,
// so after a node's loss it returns the meta leader of the rest. It is
// bounded by ctx and MaxClusterWait; at the bound the error wraps
// ErrNotFormed and the context's error. No running node at all is
// ErrNotRunning at once.
func (c *Cluster) WaitFormed(ctx context.Context) (*Broker, error) {
	return poll(ctx, ErrNotFormed, c.formed)
}

// formed is one check of WaitFormed.
func (c *Cluster) formed(ctx context.Context) (*Broker, bool, error) {
	live := c.running()
	if len(live) == 0 {
		return nil, true, ErrNotRunning
	}
	var leader string
	views := make(map[*Broker]*metaCluster, len(live))
	for _, b := range live {
		m, err := c.meta(ctx, b)
		if err != nil || m == nil || m.Leader == "" {
			return nil, false, err
		}
		if leader != "" && m.Leader != leader {
			return nil, false, nil
		}
		leader = m.Leader
		views[b] = m
	}
	lb := c.NodeNamed(leader)
	lm, ok := views[lb]
	if !ok {
		return nil, false, nil // the leader named is not running, or not a node
	}
	for _, b := range live {
		if b == lb {
			continue
		}
		current := false
		for _, r := range lm.Replicas {
			if r.Name == b.Name() {
				current = r.Current && !r.Offline
			}
		}
		if !current {
			return nil, false, nil
		}
	}
	for _, b := range live {
		if ok, err := c.meshed(ctx, b, live); !ok || err != nil {
			return nil, false, err
		}
	}
	return lb, true, nil
}

// meshed reports whether node b has its whole mesh of routes to every
// other node of live: routePoolSize pooled routes and the system
// account's pinned route to each.
func (c *Cluster) meshed(ctx context.Context, b *Broker, live []*Broker) (bool, error) {
	code, body, err := c.monitor.get(ctx, b.MonitorAddr(), routezPath)
	if err != nil {
		return false, err
	}
	var r struct {
		Routes []struct {
			RemoteName string `json:"remote_name"`
			Account    string `json:"account"`
		} `json:"routes"`
	}
	if code != http.StatusOK || json.Unmarshal(body, &r) != nil {
		return false, ErrMalformedReply
	}
	sys := c.SystemAccountKey()
	for _, o := range live {
		if o == b {
			continue
		}
		pooled, pinned := 0, 0
		for _, rt := range r.Routes {
			switch {
			case rt.RemoteName != o.Name():
			case rt.Account == "":
				pooled++
			case rt.Account == sys:
				pinned++
			}
		}
		if pooled < routePoolSize || pinned < 1 {
			return false, nil
		}
	}
	return true, nil
}

// WaitHealthy waits until node b's health check passes (/healthz answers
// 200: JetStream enabled, b's view of the meta group current, and every
// stream and consumer b holds a replica of caught up), as after a
// Restart once b has rejoined. It is bounded by ctx and MaxClusterWait; at
// the bound the error wraps ErrNotHealthy and the context's error. A node
// that is not running is ErrNotRunning at once; a node of another cluster,
// ErrUnknownNode.
func (c *Cluster) WaitHealthy(ctx context.Context, b *Broker) error {
	if c.Index(b) < 0 {
		return ErrUnknownNode
	}
	_, err := poll(ctx, ErrNotHealthy, func(ctx context.Context) (struct{}, bool, error) {
		if !b.Running() {
			return struct{}{}, true, ErrNotRunning
		}
		code, _, err := c.monitor.get(ctx, b.MonitorAddr(), healthzPath)
		return struct{}{}, err == nil && code == http.StatusOK, err
	})
	return err
}

// poll runs check until it reports done, ClusterPoll apart, bounded by ctx
// and MaxClusterWait. check's error is final when it reports done, and
// otherwise remembered: at the bound the error wraps fail, the context's
// error and the last error check gave, if any.
func poll[T any](ctx context.Context, fail error, check func(context.Context) (T, bool, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, MaxClusterWait)
	defer cancel()
	tick := time.NewTicker(ClusterPoll)
	defer tick.Stop()
	var last error
	for {
		v, done, err := check(ctx)
		if done {
			return v, err
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			var zero T
			if last != nil {
				return zero, fmt.Errorf("%w: %w (last: %w)", fail, ctx.Err(), last)
			}
			return zero, fmt.Errorf("%w: %w", fail, ctx.Err())
		case <-tick.C:
		}
	}
}
