package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
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

// Bounds of the command's waits.
const (
	// startTimeout bounds building (about 30 s cold) and starting the
	// broker.
	startTimeout = 3 * time.Minute
	// stopTimeout bounds stopping the nodes a cluster keeps running when
	// another node's server exited.
	stopTimeout = broker.StopGrace
	// logTailLines is how many of the server log's last lines are printed
	// when the server exited.
	logTailLines = 20
)

// command is what the command line asks for.
type command struct {
	opts broker.Options
	// nodes is the cluster size, 0 for one broker.
	nodes int
	// runtime names the configuration whose runtime credentials to write,
	// and where; its config is empty when none is asked for.
	runtime runtimeCreds
}

func run(args []string, stdout, stderr io.Writer) error {
	cmd, err := parseOptions(args, stderr)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	if cmd.runtime.config != "" {
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
	}
	startCtx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if cmd.nodes > 0 {
		c, err := broker.StartCluster(startCtx, cmd.opts, cmd.nodes)
		if err != nil {
			return err
		}
		if err := describeCluster(startCtx, stdout, c); err != nil {
			_ = c.Close()
			return err
		}
		tg := target{nodes: c.Nodes(), minter: c, dir: c.Dir(),
			endpoint: endpoint{serverName: c.ServerName(), roots: c.RootCAs()}}
		for _, b := range tg.nodes {
			tg.endpoint.addrs = append(tg.endpoint.addrs, b.Addr())
		}
		if err := serve(ctx, stdout, stderr, tg, cmd.runtime, hup); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "stopping the cluster and removing", c.Dir())
		return c.Close()
	}
	b, err := broker.Start(startCtx, cmd.opts)
	if err != nil {
		return err
	}
	if err := describe(stdout, b); err != nil {
		_ = b.Close()
		return err
	}
	tg := target{nodes: []*broker.Broker{b}, minter: b, dir: b.Dir(),
		endpoint: endpoint{addrs: []netip.AddrPort{b.Addr()}, serverName: b.ServerName(), roots: b.RootCAs()}}
	if err := serve(ctx, stdout, stderr, tg, cmd.runtime, hup); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "stopping the broker and removing", b.Dir())
	return b.Close()
}

// target is a running broker or cluster as serve sees it.
type target struct {
	// nodes are the server processes watched: one broker, or every node.
	nodes    []*broker.Broker
	minter   minter
	endpoint endpoint
	// dir holds every file; Close removes it.
	dir string
}

// serve writes the runtime credentials when asked for (into tg.dir unless
// rc names a directory), again at each SIGHUP, and waits until ctx ends
// (nil: the caller closes everything) or a node's server process exits.
// Then it stops the other nodes, keeps every file, prints the end of the
// exited node's log and how to restart it on the same port, and returns
// an error matching broker.ErrServerExited.
func serve(ctx context.Context, stdout, stderr io.Writer, tg target, rc runtimeCreds, hup <-chan os.Signal) error {
	if rc.config != "" {
		if rc.out == "" {
			rc.out = tg.dir
		}
		rc.report(stdout, tg.minter, tg.endpoint)
		fmt.Fprintf(stdout, "kill -HUP %d writes the runtime creds of %s again\n", os.Getpid(), rc.config)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel() // before wg.Wait: it ends every Wait
	exited := make(chan nodeExit, len(tg.nodes))
	for _, b := range tg.nodes {
		pid := b.PID()
		wg.Go(func() { exited <- nodeExit{b, pid, b.Wait(wctx)} })
	}
	// One iteration per SIGHUP; the loop ends with ctx or a server.
	for {
		select {
		case <-ctx.Done():
			return nil
		case e := <-exited:
			if ctx.Err() != nil {
				return nil // Wait saw ctx end, not the server
			}
			cancel()
			return serverExited(stderr, tg, e)
		case <-hup:
			rc.report(stdout, tg.minter, tg.endpoint)
		}
	}
}

// nodeExit is what Wait returned for one node's process.
type nodeExit struct {
	node *broker.Broker
	pid  int
	err  error
}

// serverExited stops the nodes still running, prints why the command
// ends, the end of the server's log and what is kept, and returns the
// exit's error.
func serverExited(w io.Writer, tg target, e nodeExit) error {
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	for _, b := range tg.nodes {
		_ = b.Stop(ctx) // the store and every file are kept
	}
	b := e.node
	fmt.Fprintf(w, "broker: the server %s (pid %d) exited on its own; its log ends with:\n%s", b.Name(), e.pid, logTail(b.Logs(), logTailLines))
	fmt.Fprintf(w, "every file is kept; each server restarts on its own port (the credentials above stay valid) with\n")
	for _, n := range tg.nodes {
		fmt.Fprintf(w, "  %s -c %s    # %s\n", n.Binary(), n.ConfigFile(), n.Addr())
	}
	fmt.Fprintf(w, "remove the directory when done: rm -r %s\n", tg.dir)
	return fmt.Errorf("broker: server %s exited: %w", b.Name(), e.err)
}

// logTail returns the last n lines of log, each ending in a newline.
func logTail(log []byte, n int) []byte {
	log = bytes.TrimRight(log, "\n")
	i := len(log)
	for range n {
		j := bytes.LastIndexByte(log[:i], '\n')
		if j < 0 {
			i = 0
			break
		}
		i = j
	}
	out := bytes.TrimPrefix(log[i:], []byte("\n"))
	if len(out) == 0 {
		return nil
	}
	return append(bytes.Clone(out), '\n')
}

// parseOptions turns the command line into broker options, the number of
// cluster nodes (0: one broker) and the runtime credentials asked for; the
// broker validates the options when it starts. Usage and flag errors go to
// stderr, and with -v so does the server log.
func parseOptions(args []string, stderr io.Writer) (command, error) {
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
	runtimeConfig := fs.String("runtime-creds", "", "trigger configuration JSON: write each tenant's runtime .creds with exactly provision's grants, again at each SIGHUP")
	out := fs.String("out", "", "directory of the -runtime-creds files (default: the broker's directory, removed at Ctrl-C)")
	clientCerts := fs.Bool("client-certs", false, "require client certificates (verify: true) of a generated client CA, and write one per tenant")
	if err := fs.Parse(args); err != nil {
		return command{}, err
	}
	if *out != "" && *runtimeConfig == "" {
		return command{}, errors.New("broker: -out needs -runtime-creds")
	}
	if *clientCerts && *nodes != 0 {
		return command{}, errors.New("broker: -client-certs is for one broker, not -cluster")
	}
	opts := broker.Options{
		Tenants:             strings.Split(*tenants, ","),
		ServerName:          *serverName,
		SyncInterval:        *syncInterval,
		LameDuckGracePeriod: *lameDuckGrace,
		Extra:               *extra,
		ClientCertificates:  *clientCerts,
	}
	if *ackV2 {
		opts.Extra += "\nfeature_flags { js_ack_fc_v2: true }\n"
	}
	var err error
	if opts.Handshake, opts.FallbackDelay, err = parseHandshake(*handshake); err != nil {
		return command{}, err
	}
	if *verbose {
		opts.Log = stderr
	}
	return command{opts: opts, nodes: *nodes, runtime: runtimeCreds{config: *runtimeConfig, out: *out}}, nil
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
	certArgs := ""
	if b.ClientCertificates() {
		cert, key, err := writeClientCerts(w, b)
		if err != nil {
			return err
		}
		certArgs = " -cert " + cert + " -key " + key
	}
	fmt.Fprintf(w, "try (TLS first, then type CONNECT/PING by hand):\n")
	fmt.Fprintf(w, "  openssl s_client -quiet -connect %s -servername %s -verify_hostname %s -CAfile %s%s\n",
		addr, b.ServerName(), b.ServerName(), b.CAFile(), certArgs)
	fmt.Fprintf(w, "Ctrl-C stops the broker and removes every file above.\n")
	return nil
}

// writeClientCerts writes a client certificate of the broker's client CA
// and its key for each tenant (<tenant>-client.crt, .key, mode 0600, in
// the broker's directory, valid for broker.CertValidity), prints them, and
// returns the last pair's paths.
func writeClientCerts(w io.Writer, b *broker.Broker) (cert, key string, err error) {
	now := time.Now()
	for _, tenant := range b.Tenants() {
		certPEM, keyPEM, err := b.IssueClientCert(tenant, now.Add(-time.Hour), now.Add(broker.CertValidity))
		if err != nil {
			return "", "", err
		}
		cert, key = filepath.Join(b.Dir(), tenant+"-client.crt"), filepath.Join(b.Dir(), tenant+"-client.key")
		err = os.WriteFile(cert, certPEM, 0o600)
		if err == nil {
			err = os.WriteFile(key, keyPEM, 0o600)
		}
		clear(keyPEM)
		if err != nil {
			return "", "", fmt.Errorf("broker: writing client certificate: %w", err)
		}
		fmt.Fprintf(w, "  tenant %s: client certificate %s, key %s (the broker requires one: client_cert, client_key in a credentials file)\n", tenant, cert, key)
	}
	return cert, key, nil
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
