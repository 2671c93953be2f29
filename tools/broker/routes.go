package broker

import (
	"fmt"
	"net/netip"

	"github.com/latent-systems/latent-nats/tools/faultproxy"
)

// gossipAdvertise is the route address every node of a cluster with
// proxied routes advertises (`cluster { advertise }`). A node that
// accepts a new route forwards the remote's route INFO to its other
// routes, and a node not connected to that remote dials the address in
// it, an implicit route (nats-server v2.14.6 route.go,
// forwardNewRouteInfoToKnownServers, processImplicitRoute). The address
// would be the remote's own route port, a direct route no proxy cuts.
// With every node advertising this same address, each counts it as one of
// its own (routesToSelf, built from the advertised port), and
// connectToRoute skips any route to it without dialling (getRandomIP,
// errNoIPAvail): the implicit route, and the URL an accepted route
// records for a reconnection (processRouteInfo). A node dials only its
// configured routes, the proxies. Port 9 (discard) is below the ephemeral
// range, so no proxy listens on it and no configured route names it.
func gossipAdvertise() netip.AddrPort {
	return netip.AddrPortFrom(loopback(), gossipAdvertisePort)
}

// gossipAdvertisePort is the port of gossipAdvertise.
const gossipAdvertisePort = 9

// loopback is 127.0.0.1.
func loopback() netip.Addr { return netip.AddrFrom4([4]byte{127, 0, 0, 1}) }

// startRouteProxies starts one fault proxy per ordered pair of nodes: the
// proxy [i][j] forwards node i's route connections to node j's route
// port. On error it closes the proxies it started.
func startRouteProxies(ports []int) ([][]*faultproxy.Proxy, error) {
	proxies := make([][]*faultproxy.Proxy, len(ports))
	for i := range ports {
		proxies[i] = make([]*faultproxy.Proxy, len(ports))
		for j, port := range ports {
			if i == j {
				continue
			}
			p, err := faultproxy.Start(netip.AddrPortFrom(loopback(), uint16(port)))
			if err != nil {
				closeProxies(proxies)
				return nil, fmt.Errorf("broker: route proxy: %w", err)
			}
			proxies[i][j] = p
		}
	}
	return proxies, nil
}

// closeProxies closes every proxy of the matrix (nil entries skipped).
func closeProxies(proxies [][]*faultproxy.Proxy) {
	for _, row := range proxies {
		for _, p := range row {
			if p != nil {
				_ = p.Close()
			}
		}
	}
}

// routeAddrs returns the route addresses of node i: its proxy to each
// other node.
func routeAddrs(proxies [][]*faultproxy.Proxy, i int) []netip.AddrPort {
	var out []netip.AddrPort
	for _, p := range proxies[i] {
		if p != nil {
			out = append(out, p.Addr())
		}
	}
	return out
}

// RouteProxy returns the fault proxy node from's route connections to
// node to go through, or nil when the routes are direct or from == to. It
// panics when an index is out of range, as an index into a slice does.
// The proxy's Up direction carries what node from sends. Nodes dial each
// other both ways and keep one of each pair of routes, so a fault on one
// proxy of a pair affects the routes node from opened; [Cluster.SetLink]
// sets both.
func (c *Cluster) RouteProxy(from, to int) *faultproxy.Proxy {
	_ = c.nodes[from]
	_ = c.nodes[to]
	if c.proxies == nil {
		return nil
	}
	return c.proxies[from][to]
}

// SetLink sets f on both directions of both route proxies between nodes i
// and j (i's routes to j and j's to i), for the route connections open
// now and later ones (see package faultproxy). A cut (CutRST or CutFIN,
// After 0) ends the routes at once and every reconnection as soon as it
// is made; Stall holds their bytes, as a link dropping packets under TCP
// would, until the fault changes; Latency delays them; Pass heals. It
// returns [ErrDirectRoutes] without proxies, [ErrUnknownNode] for an
// index out of range or i == j, and the proxy's error for an invalid
// fault.
func (c *Cluster) SetLink(i, j int, f faultproxy.Fault) error {
	if c.proxies == nil {
		return ErrDirectRoutes
	}
	if i == j || i < 0 || j < 0 || i >= len(c.nodes) || j >= len(c.nodes) {
		return ErrUnknownNode
	}
	for _, p := range []*faultproxy.Proxy{c.proxies[i][j], c.proxies[j][i]} {
		for _, d := range []faultproxy.Direction{faultproxy.Up, faultproxy.Down} {
			if err := p.Set(d, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// Partition sets f (a cut, a stall) on every link between two nodes on
// different sides and leaves the links inside a side as they are. Each
// side lists node indexes; a node may appear on one side at most, and a
// node on no side keeps its links (a bridge between the sides, as in a
// partial partition). It returns [ErrDirectRoutes] without proxies and
// [ErrUnknownNode] for an index out of range or on two sides.
func (c *Cluster) Partition(f faultproxy.Fault, sides ...[]int) error {
	if c.proxies == nil {
		return ErrDirectRoutes
	}
	side := make([]int, len(c.nodes))
	for s, nodes := range sides {
		for _, i := range nodes {
			if i < 0 || i >= len(c.nodes) || side[i] != 0 {
				return ErrUnknownNode
			}
			side[i] = s + 1
		}
	}
	for i := range c.nodes {
		for j := i + 1; j < len(c.nodes); j++ {
			if side[i] == 0 || side[j] == 0 || side[i] == side[j] {
				continue
			}
			if err := c.SetLink(i, j, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// Heal sets every route proxy back to Pass: what a stall held is
// delivered, cut routes reconnect at the nodes' next attempt (about a
// second). It returns [ErrDirectRoutes] without proxies.
func (c *Cluster) Heal() error {
	if c.proxies == nil {
		return ErrDirectRoutes
	}
	for i := range c.nodes {
		for j := i + 1; j < len(c.nodes); j++ {
			if err := c.SetLink(i, j, faultproxy.Fault{Kind: faultproxy.Pass}); err != nil {
				return err
			}
		}
	}
	return nil
}
