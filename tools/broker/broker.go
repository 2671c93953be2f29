package broker

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Broker is one nats-server process with its directory. Its methods are
// safe for concurrent use; lifecycle calls (Stop, Kill, Restart, Pause,
// Resume, LameDuck, Close) are serialised, and the state queries (Addr,
// PID, Running, Paused) answer at once, also while a lifecycle call waits
// for the process.
type Broker struct {
	opts      Options
	bin       string
	ver       string // what the binary reports, see Version
	dir       string
	pki       *pki
	*identity // the operator, accounts and users: Tenants, AccountKey, User, Admin, System
	ring      *logRing
	// node is set for a node of a [Cluster], nil for a single broker.
	node *nodeConfig

	// life is held for the whole of a lifecycle call. The fields under mu
	// are written holding both, and read holding either.
	life    sync.Mutex
	mu      sync.Mutex
	proc    *process // nil when not running
	addr    netip.AddrPort
	monitor netip.AddrPort // a cluster node's HTTP monitor
	closed  bool
}

// Start creates the broker's directory, certificates, operator and
// accounts, starts nats-server and returns once it is ready to accept
// clients. ctx bounds finding or building the binary and the start; on any
// error nothing is left behind.
func Start(ctx context.Context, opts Options) (*Broker, error) {
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
	ver, err := BinaryVersion(ctx, bin)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(opts.Dir, "latent-broker-")
	if err != nil {
		return nil, fmt.Errorf("broker: temporary directory: %w", err)
	}
	b := &Broker{opts: opts, bin: bin, ver: ver, dir: dir, ring: &logRing{}}
	if err := b.prepare(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := b.launch(ctx, -1); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return b, nil
}

// prepare generates the certificates and identities unless they were
// given (a cluster's nodes share them) and writes the files.
func (b *Broker) prepare() error {
	var err error
	if b.pki == nil {
		if b.pki, err = newPKI(b.opts.serverName(), time.Now()); err != nil {
			return err
		}
	}
	if b.identity == nil {
		if b.identity, err = newIdentity(b.opts.Tenants, b.opts.accountLimits(), b.opts.SigningKeys...); err != nil {
			return err
		}
	}
	files := []struct {
		name string
		data []byte
	}{
		{caFile, b.pki.caPEM},
		{certFile, b.pki.certPEM},
		{keyFile, b.pki.keyPEM},
		{clientCAFile, b.pki.client.PEM},
		{operatorFile, []byte(b.identity.operatorJWT)},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(b.dir, f.name), f.data, 0o600); err != nil {
			return fmt.Errorf("broker: writing %s: %w", f.name, err)
		}
	}
	return nil
}

// launch writes the configuration for port (-1: any free port), starts the
// process and waits for it; a port the server chose is then written into
// the configuration in place of -1 (and so is a cluster node's monitor
// port). The caller holds b.life or owns b exclusively.
//
// A cluster node also listens for routes on its fixed port and serves its
// HTTP monitor (on a free port the first time, the same one afterwards);
// launch returns once both listeners are logged.
func (b *Broker) launch(ctx context.Context, port int) error {
	in := configInput{dir: b.dir, port: port, opts: b.opts, identity: b.identity, node: b.node, monitorPort: -1}
	if b.monitor.IsValid() {
		in.monitorPort = int(b.monitor.Port())
	}
	if err := os.WriteFile(filepath.Join(b.dir, configFile), renderConfig(in), 0o600); err != nil {
		return fmt.Errorf("broker: writing configuration: %w", err)
	}
	p, err := spawn(b.bin, b.dir, newLogSink(b.ring, b.opts.Log))
	if err != nil {
		return err
	}
	if err := p.waitReady(ctx); err != nil {
		return err
	}
	addr, monitor := p.sink.listenAddr(), p.sink.monitorAddr()
	if port > 0 && int(addr.Port()) != port {
		p.kill()
		return ErrNotReady
	}
	if b.node != nil {
		if err := p.waitRoutes(ctx); err != nil {
			return err
		}
		routeOK := int(p.sink.routeAddr().Port()) == b.node.routePort
		monitorOK := monitor.IsValid() && (in.monitorPort < 0 || int(monitor.Port()) == in.monitorPort)
		if !routeOK || !monitorOK {
			p.kill()
			return ErrNotReady
		}
	}
	if port < 0 {
		// The ports the server chose, written into its configuration, so
		// that the same file (a restart by hand included) listens on them
		// again.
		in.port, in.monitorPort = int(addr.Port()), int(monitor.Port())
		if err := os.WriteFile(filepath.Join(b.dir, configFile), renderConfig(in), 0o600); err != nil {
			p.kill()
			return fmt.Errorf("broker: writing configuration: %w", err)
		}
	}
	b.mu.Lock()
	b.proc, b.addr, b.monitor = p, addr, monitor
	b.mu.Unlock()
	return nil
}

// setProc records the running process (nil: none). The caller holds b.life.
func (b *Broker) setProc(p *process) {
	b.mu.Lock()
	b.proc = p
	b.mu.Unlock()
}

// Wait blocks until the server process running now exits or ctx ends. A
// process that exited, whoever ended it (a crash, a signal from outside,
// Stop, Kill, LameDuck or Close), is an error matching [ErrServerExited]
// with its exit status; the end of ctx is ctx's error; a broker not running
// is [ErrNotRunning]. After Restart, Wait watches the new process.
func (b *Broker) Wait(ctx context.Context) error {
	b.mu.Lock()
	p := b.proc
	b.mu.Unlock()
	if p == nil {
		return ErrNotRunning
	}
	select {
	case <-p.done:
		if p.err == nil {
			return ErrServerExited // exit status 0
		}
		return fmt.Errorf("%w: %w", ErrServerExited, p.err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Addr returns the client listener's address, 127.0.0.1 and the port
// chosen at Start (kept by Restart).
func (b *Broker) Addr() netip.AddrPort {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.addr
}

// Version returns the version the broker's binary reports without the "v":
// [ServerVersion], or another one under the [EnvServerVersion] opt-in or
// an Options.Binary of another release.
func (b *Broker) Version() string { return b.ver }

// ServerName returns the DNS name in the server certificate, the name a
// client verifies and sends as SNI.
func (b *Broker) ServerName() string { return b.opts.serverName() }

// Name returns the server's own name (its server_name), the name JetStream
// reports for a stream's or consumer's leader and replicas: "latent-broker"
// for a single broker, [NodeName] of its index for a cluster node.
func (b *Broker) Name() string {
	if b.node != nil {
		return b.node.name
	}
	return natsServerName
}

// MonitorAddr returns the HTTP monitor's address (127.0.0.1, kept by
// Restart) of a cluster node; a single broker has none unless
// [Options.Extra] enables it, and then it is the address the server
// logged, or the zero value.
func (b *Broker) MonitorAddr() netip.AddrPort {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.monitor
}

// Handshake returns the listener's TLS mode.
func (b *Broker) Handshake() HandshakeMode { return b.opts.handshake() }

// RootCAs returns a new pool holding only the broker's CA.
func (b *Broker) RootCAs() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(b.pki.caPEM)
	return pool
}

// CAPEM returns a copy of the CA certificate in PEM.
func (b *Broker) CAPEM() []byte { return append([]byte(nil), b.pki.caPEM...) }

// CAFile returns the path of the CA certificate in PEM (inside Dir).
func (b *Broker) CAFile() string { return filepath.Join(b.dir, caFile) }

// ClientCertificates reports whether the broker requires client
// certificates (Options.ClientCertificates).
func (b *Broker) ClientCertificates() bool { return b.opts.ClientCertificates }

// ClientCAPEM returns a copy of the client CA certificate in PEM: the one
// authority a broker with Options.ClientCertificates trusts for client
// certificates.
func (b *Broker) ClientCAPEM() []byte { return append([]byte(nil), b.pki.client.PEM...) }

// IssueClientCert returns a new client certificate signed by the broker's
// client CA, with common name cn, valid from notBefore to notAfter (either
// may be in the past: an expired certificate is a test case), and its
// ECDSA P-256 private key (PKCS #8), both in PEM.
func (b *Broker) IssueClientCert(cn string, notBefore, notAfter time.Time) (certPEM, keyPEM []byte, err error) {
	return b.pki.client.IssueClient(cn, notBefore, notAfter)
}

// ConfigFile returns the path of the server's configuration (inside Dir).
// Once the broker is ready it names the port the server listens on (and a
// cluster node's route and monitor ports), so `nats-server -c` with it
// starts the server again on the same port, with the same store and
// accounts.
func (b *Broker) ConfigFile() string { return filepath.Join(b.dir, configFile) }

// Binary returns the path of the nats-server binary the broker runs.
func (b *Broker) Binary() string { return b.bin }

// Dir returns the broker's directory; Close removes it.
func (b *Broker) Dir() string { return b.dir }

// StoreDir returns the JetStream store directory (inside Dir).
func (b *Broker) StoreDir() string { return filepath.Join(b.dir, storeDir) }

// PID returns the server's process id, or 0 when it is not running.
func (b *Broker) PID() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.proc == nil {
		return 0
	}
	return b.proc.pid()
}

// Running reports whether the server process is running (a paused one
// included).
func (b *Broker) Running() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.proc != nil && !b.proc.exited()
}

// Paused reports whether the server process is running and paused by
// [Broker.Pause].
func (b *Broker) Paused() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.proc != nil && !b.proc.exited() && b.proc.paused.Load()
}

// Logs returns a copy of the last MaxLogBytes bytes of the server's log,
// across restarts.
func (b *Broker) Logs() []byte { return b.ring.bytes() }

// UnknownAccountUser mints a user signed by a freshly generated account
// the server does not know, so the server refuses it.
func (b *Broker) UnknownAccountUser(spec UserSpec) (Creds, error) {
	acc, err := newAccount(nil, "unknown", nil)
	if err != nil {
		return Creds{}, err
	}
	defer acc.kp.Wipe()
	return mint(acc, "", spec)
}

// WriteCreds writes c in the .creds layout to a file called name (no path
// separators) inside Dir, mode 0600, and returns its path. Close removes it.
func (b *Broker) WriteCreds(name string, c Creds) (string, error) {
	return writeCreds(b.dir, name, c)
}

// Stop shuts the server down gracefully (SIGTERM, after SIGCONT in case it
// is paused) and waits for it; if ctx ends first the process is killed.
// The store is kept for Restart. Stopping a broker that is not running
// does nothing.
func (b *Broker) Stop(ctx context.Context) error {
	b.life.Lock()
	defer b.life.Unlock()
	if b.closed {
		return ErrClosed
	}
	return b.stopLocked(ctx)
}

// stopLocked stops the process, if any. The caller holds b.life.
func (b *Broker) stopLocked(ctx context.Context) error {
	p := b.proc
	if p == nil {
		return nil
	}
	graceful := p.terminate(ctx.Done())
	b.setProc(nil)
	if !graceful {
		return fmt.Errorf("broker: graceful stop: %w", ctx.Err())
	}
	return nil
}

// Stacks ends the server with SIGQUIT and returns every goroutine's stack
// as the Go runtime writes it on that signal (at most [MaxStacksBytes]):
// the diagnosis of a server that runs but stopped answering. The broker
// is then not running; the store is kept for Restart. If ctx ends before
// the process does, it is killed and the error is ctx's. A broker that is
// not running is [ErrNotRunning].
func (b *Broker) Stacks(ctx context.Context) ([]byte, error) {
	b.life.Lock()
	defer b.life.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	p := b.proc
	if p == nil {
		return nil, ErrNotRunning
	}
	out, ended := p.stacks(ctx.Done())
	b.setProc(nil)
	if !ended {
		return out, fmt.Errorf("broker: waiting for the stacks: %w", ctx.Err())
	}
	return out, nil
}

// Kill kills the server with SIGKILL, as a crash would, and waits until
// the process is gone; a paused server is killed as it is. The store is
// kept for Restart. Killing a broker that is not running does nothing.
func (b *Broker) Kill() error {
	b.life.Lock()
	defer b.life.Unlock()
	if b.closed {
		return ErrClosed
	}
	if b.proc != nil {
		b.proc.kill()
		b.setProc(nil)
	}
	return nil
}

// Restart stops the server if it runs (gracefully, bounded by ctx, as
// Stop does; a paused one too) and starts it again on the same port with
// the same store, accounts and certificates. It also brings back a broker
// that was stopped, killed or ended by LameDuck. A file store left by a
// crash is recovered by the server as it starts.
func (b *Broker) Restart(ctx context.Context) error {
	b.life.Lock()
	defer b.life.Unlock()
	if b.closed {
		return ErrClosed
	}
	if err := b.stopLocked(ctx); err != nil {
		return err
	}
	return b.launch(ctx, int(b.addr.Port()))
}

// Pause stops the server process with SIGSTOP, as a stalled host or a
// long garbage collection would, and returns once every thread of it has
// stopped (on Linux; elsewhere once the signal is sent). While it is
// paused the kernel still completes TCP connections to its port, but
// nothing is read or answered: no TLS handshake, no PONG, no message.
// Pausing a paused broker does nothing; pausing a broker that is not
// running is [ErrNotRunning]. If the threads have not all stopped within
// [PauseWait] the error is [ErrPauseTimeout] and the broker counts as
// paused. Kill, Stop, Restart, LameDuck and Close work on a paused broker.
func (b *Broker) Pause() error {
	b.life.Lock()
	defer b.life.Unlock()
	if b.closed {
		return ErrClosed
	}
	if b.proc == nil || b.proc.exited() {
		return ErrNotRunning
	}
	return b.proc.pause()
}

// Resume continues a paused server with SIGCONT; it serves again as soon
// as the scheduler runs it, with every connection and timer where the
// pause left them. It sends SIGCONT to a running server whether or not
// Pause stopped it; on a broker that is not running it does nothing.
func (b *Broker) Resume() error {
	b.life.Lock()
	defer b.life.Unlock()
	if b.closed {
		return ErrClosed
	}
	if b.proc == nil {
		return nil
	}
	if err := b.proc.resume(); err != nil && !errors.Is(err, ErrNotRunning) {
		return err
	}
	return nil
}

// LameDuck puts the server into lame duck mode (SIGUSR2, after SIGCONT in
// case it is paused) and waits until the process has exited. In lame duck
// mode nats-server v2.14.6 (server.go, lameDuckMode) closes its client
// listener, shuts JetStream down (the store is kept), sends every
// connected client (past its CONNECT and first PING) an INFO with
// "ldm":true, waits
// [Options.LameDuckGracePeriod], closes the clients one by one spread over
// the rest of [Options.LameDuckDuration] (at most a second apart) and
// exits; without clients it exits as soon as JetStream is down. If ctx
// ends first the process is killed and the error wraps ctx's. Either way
// the broker is not running afterwards; Restart brings it back on the same
// port with the same store. A broker that is not running is
// [ErrNotRunning].
func (b *Broker) LameDuck(ctx context.Context) error {
	b.life.Lock()
	defer b.life.Unlock()
	if b.closed {
		return ErrClosed
	}
	p := b.proc
	if p == nil || p.exited() {
		return ErrNotRunning
	}
	exited := p.end(syscall.SIGUSR2, ctx.Done())
	b.setProc(nil)
	if !exited {
		return fmt.Errorf("broker: lame duck: %w", ctx.Err())
	}
	return nil
}

// Close stops the server (gracefully within StopGrace, after SIGCONT in
// case it is paused, then SIGKILL) and removes the broker's directory with
// everything in it. It is idempotent.
func (b *Broker) Close() error {
	b.life.Lock()
	defer b.life.Unlock()
	if b.closed {
		return nil
	}
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	if b.proc != nil {
		expire := make(chan struct{})
		t := time.AfterFunc(StopGrace, func() { close(expire) })
		b.proc.terminate(expire) // killed after the grace period; nothing is left
		t.Stop()
		b.setProc(nil)
	}
	return os.RemoveAll(b.dir)
}
