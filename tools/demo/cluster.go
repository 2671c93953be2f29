package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/trigger"
)

const (
	// provisionReplicas is the replica count on one broker.
	provisionReplicas = 1
	// clusterReplicas is the most replicas of the streams and consumers
	// the demo provisions on a cluster: R3, or one per node on a smaller
	// cluster.
	clusterReplicas = 3
	// provisionAttempts bounds the provisioning attempts on a cluster: a
	// cluster just formed may still refuse an R3 placement (a peer it
	// counts as offline); provisioning again creates what is missing and
	// checks what exists.
	provisionAttempts = 5
	// provisionPause separates two provisioning attempts.
	provisionPause = time.Second
)

// startCluster starts a cluster of n nodes for the tenants and describes
// it to w.
func startCluster(ctx context.Context, w io.Writer, tenants []string, opts options) (*broker.Cluster, error) {
	fmt.Fprintf(w, "starting a cluster of %d pinned nats-server v%s nodes (built first if missing: about 30 s cold)\n", opts.Cluster, broker.ServerVersion)
	sctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	c, err := broker.StartCluster(sctx, broker.Options{Tenants: tenants, Dir: opts.Dir, Binary: opts.Binary}, opts.Cluster)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "cluster %s: TLS %s, server name %s on every node, operator mode, accounts %s\n",
		c.Name(), c.Handshake(), c.ServerName(), strings.Join(c.Tenants(), ", "))
	for _, b := range c.Nodes() {
		fmt.Fprintf(w, "  %s (pid %d) on %s\n", b.Name(), b.PID(), b.Addr())
	}
	return c, nil
}

// pinTenants gives tenant i of cfg node i mod n as its destination: each
// tenant's one connection goes to its own node, which forwards its
// requests to whichever node leads its stream and consumer.
func pinTenants(w io.Writer, c *broker.Cluster, cfg *trigger.Config) {
	fmt.Fprintln(w, "each tenant's runtime connection is pinned to one node (no reconnect elsewhere; its node forwards to the leaders):")
	for i := range cfg.Tenants {
		b := c.Node(i % c.Size())
		cfg.Tenants[i].Destination = trigger.Destination{
			Address:        b.Addr(),
			ServerName:     c.ServerName(),
			RootCAsPEM:     string(c.CAPEM()),
			AllowNonPublic: true,
		}
		fmt.Fprintf(w, "  %s -> %s (%s)\n", cfg.Tenants[i].ID, b.Name(), b.Addr())
	}
}

// provisionCluster provisions cfg with min(nodes, clusterReplicas)
// replicas, again while the cluster refuses, at most provisionAttempts
// times.
func provisionCluster(ctx context.Context, w io.Writer, c *broker.Cluster, cfg trigger.Config, admins []trigger.Credential) error {
	replicas := min(c.Size(), clusterReplicas)
	var err error
	for attempt := 1; attempt <= provisionAttempts; attempt++ {
		if err = provisionAll(ctx, w, cfg, admins, replicas); err == nil {
			return nil
		}
		if ctx.Err() != nil || attempt == provisionAttempts {
			break
		}
		fmt.Fprintf(w, "  provisioning R%d not complete (%v); again in %v\n", replicas, err, provisionPause)
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(provisionPause):
		}
	}
	return err
}
