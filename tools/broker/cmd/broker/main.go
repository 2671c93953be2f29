package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/latent-systems/latent-nats/tools/broker"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// startTimeout bounds building (about 30 s cold) and starting the broker.
const startTimeout = 3 * time.Minute

func run(args []string, stdout, stderr io.Writer) error {
	opts, nodes, err := parseOptions(args, stderr)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	startCtx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if nodes > 0 {
		c, err := broker.StartCluster(startCtx, opts, nodes)
		if err != nil {
			return err
		}
		defer c.Close()
		if err := describeCluster(startCtx, stdout, c); err != nil {
			return err
		}
		<-ctx.Done()
		fmt.Fprintln(stdout, "stopping the cluster and removing", c.Dir())
		return c.Close()
	}
	b, err := broker.Start(startCtx, opts)
	if err != nil {
		return err
	}
	defer b.Close()

	if err := describe(stdout, b); err != nil {
		return err
	}
	<-ctx.Done()
	fmt.Fprintln(stdout, "stopping the broker and removing", b.Dir())
	return b.Close()
}

// parseOptions turns the command line into broker options and the number
// of cluster nodes (0: one broker); the broker validates them when it
// starts. Usage and flag errors go to stderr, and with -v so does the
// server log.
func parseOptions(args []string, stderr io.Writer) (broker.Options, int, error) {
	fs := flag.NewFlagSet("broker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nodes := fs.Int("cluster", 0, fmt.Sprintf("start a cluster of this many nodes (%d to %d, such as %d) instead of one broker",
		broker.MinClusterSize, broker.MaxClusterSize, broker.DefaultClusterSize))
	tenants := fs.String("tenants", "demo", "comma-separated tenant account names")
	handshake := fs.String("handshake", "first", `TLS mode: "first", "after-info", "auto" or a fallback delay such as "300ms"`)
	serverName := fs.String("server-name", broker.DefaultServerName, "DNS name in the server certificate (its only SAN)")
	ackV2 := fs.Bool("ack-v2", false, "enable feature_flags { js_ack_fc_v2: true }")
	syncInterval := fs.String("sync", "", `JetStream sync_interval: "always" (fsync every write) or a duration such as "2m"; empty keeps the server's default`)
	lameDuckGrace := fs.Duration("lame-duck-grace", 0, "lame_duck_grace_period: how long lame duck mode (kill -USR2 <pid>) waits before it closes clients; 0 keeps the server's default")
	extra := fs.String("extra", "", "extra nats-server configuration, appended verbatim")
	verbose := fs.Bool("v", false, "copy the server log to stderr")
	if err := fs.Parse(args); err != nil {
		return broker.Options{}, 0, err
	}
	opts := broker.Options{
		Tenants:             strings.Split(*tenants, ","),
		ServerName:          *serverName,
		SyncInterval:        *syncInterval,
		LameDuckGracePeriod: *lameDuckGrace,
		Extra:               *extra,
	}
	if *ackV2 {
		opts.Extra += "\nfeature_flags { js_ack_fc_v2: true }\n"
	}
	var err error
	if opts.Handshake, opts.FallbackDelay, err = parseHandshake(*handshake); err != nil {
		return broker.Options{}, 0, err
	}
	if *verbose {
		opts.Log = stderr
	}
	return opts, *nodes, nil
}

func parseHandshake(s string) (broker.HandshakeMode, time.Duration, error) {
	switch s {
	case "first":
		return broker.HandshakeFirst, 0, nil
	case "after-info":
		return broker.HandshakeAfterInfo, 0, nil
	case "auto":
		return broker.HandshakeAuto, 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, 0, errors.New("broker: -handshake must be first, after-info, auto or a duration")
	}
	return broker.HandshakeFallback, d, nil
}

// describe writes credential files and prints how to reach the broker.
func describe(w io.Writer, b *broker.Broker) error {
	addr := b.Addr()
	fmt.Fprintf(w, "nats-server v%s (pid %d) listening on %s, TLS %s\n", b.Version(), b.PID(), addr, b.Handshake())
	fmt.Fprintf(w, "  server name (the certificate's only SAN, send it as SNI): %s\n", b.ServerName())
	fmt.Fprintf(w, "  CA certificate: %s\n", b.CAFile())
	fmt.Fprintf(w, "  JetStream store: %s\n", b.StoreDir())
	for _, tenant := range b.Tenants() {
		admin, err := b.Admin(tenant)
		if err != nil {
			return err
		}
		path, err := b.WriteCreds(tenant+"-admin.creds", admin)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  tenant %s: account %s, admin creds %s\n", tenant, admin.Account, path)
	}
	sys, err := b.System()
	if err != nil {
		return err
	}
	path, err := b.WriteCreds("system.creds", sys)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  system account %s, creds %s\n", sys.Account, path)
	fmt.Fprintf(w, "try (TLS first, then type CONNECT/PING by hand):\n")
	fmt.Fprintf(w, "  openssl s_client -quiet -connect %s -servername %s -verify_hostname %s -CAfile %s\n",
		addr, b.ServerName(), b.ServerName(), b.CAFile())
	fmt.Fprintf(w, "Ctrl-C stops the broker and removes every file above.\n")
	return nil
}

// describeCluster writes credential files and prints how to reach each
// node of the cluster.
func describeCluster(ctx context.Context, w io.Writer, c *broker.Cluster) error {
	leader, err := c.WaitFormed(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "cluster %s: %d nodes of nats-server v%s, TLS %s, JetStream meta leader %s\n",
		c.Name(), c.Size(), broker.ServerVersion, c.Handshake(), leader.Name())
	for i, b := range c.Nodes() {
		fmt.Fprintf(w, "  node %d %s (pid %d): client %s, monitor http://%s, store %s\n",
			i, b.Name(), b.PID(), b.Addr(), b.MonitorAddr(), b.StoreDir())
	}
	fmt.Fprintf(w, "  server name of every node (the certificate's only SAN, send it as SNI): %s\n", c.ServerName())
	fmt.Fprintf(w, "  CA certificate: %s\n", c.CAFile())
	for _, tenant := range c.Tenants() {
		admin, err := c.Admin(tenant)
		if err != nil {
			return err
		}
		path, err := c.WriteCreds(tenant+"-admin.creds", admin)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  tenant %s: account %s, admin creds %s\n", tenant, admin.Account, path)
	}
	sys, err := c.System()
	if err != nil {
		return err
	}
	path, err := c.WriteCreds("system.creds", sys)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  system account %s, creds %s\n", sys.Account, path)
	fmt.Fprintf(w, "each node stops with kill -9 <pid>, pauses with kill -STOP <pid> (kill -CONT resumes), drains with kill -USR2 <pid>\n")
	fmt.Fprintf(w, "Ctrl-C stops every node and removes every file above.\n")
	return nil
}
