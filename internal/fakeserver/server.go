package fakeserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Limits. Each configurable one has a default used for zero and a maximum.
const (
	// DefaultServerName is the certificate's DNS name when
	// Config.ServerName is empty.
	DefaultServerName = "fake.latent.test"
	// DefaultMaxConns is the number of connections served when
	// Config.MaxConns is zero; later ones are accepted, counted and closed.
	DefaultMaxConns = 8
	// MaxConns is the largest Config.MaxConns.
	MaxConns = 64
	// DefaultMaxRecord is the number of bytes recorded per connection and
	// layer (Record.Plain, Record.TLS) when Config.MaxRecord is zero.
	DefaultMaxRecord = 64 << 10
	// MaxRecordLimit is the largest Config.MaxRecord.
	MaxRecordLimit = 16 << 20
	// DefaultMaxLine is the longest line an expect step reads, LF
	// included, when Config.MaxLine is zero.
	DefaultMaxLine = 64 << 10
	// MaxLineLimit is the largest Config.MaxLine.
	MaxLineLimit = 16 << 20
	// MaxSteps is the longest script.
	MaxSteps = 1 << 16
	// MaxClientHello bounds the TLS record ReadClientHello accepts (the
	// TLS record limit plus expansion room).
	MaxClientHello = 16<<10 + 2048
)

// Config configures Start.
type Config struct {
	// Script is played on every served connection.
	Script []Step
	// ServerName is the DNS name of the certificate; empty means
	// DefaultServerName.
	ServerName string
	// MaxConns, MaxRecord and MaxLine: zero means the default.
	MaxConns  int
	MaxRecord int
	MaxLine   int
	// MinTLSVersion and MaxTLSVersion bound the TLS versions the server
	// accepts; zero means crypto/tls's defaults.
	MinTLSVersion uint16
	MaxTLSVersion uint16
}

// Record is what one connection's script did and received.
type Record struct {
	// Plain holds the bytes read on the socket outside TLS (before the
	// handshake, including a ClientHello read by ReadClientHello).
	Plain []byte
	// TLS holds the application bytes read inside TLS.
	TLS []byte
	// Truncated reports that Plain or TLS reached MaxRecord and later
	// bytes were dropped.
	Truncated bool
	// SNI is the server name the client sent in its ClientHello during
	// Handshake or HandshakeCut ("" if none).
	SNI string
	// TLSVersion is the negotiated version after a completed Handshake
	// (tls.VersionTLS12, tls.VersionTLS13), otherwise zero.
	TLSVersion uint16
	// Steps is the number of steps completed.
	Steps int
	// Err is nil when every step completed, otherwise a *StepError (or
	// ErrStopped when the connection was never accepted).
	Err error
}

type slot struct {
	done chan struct{} // closed when rec is final
	rec  Record
}

// Server is a running fake server. Its methods are safe for concurrent use.
type Server struct {
	cfg      Config
	ln       net.Listener
	addr     netip.AddrPort
	caPEM    []byte
	tlsCfg   *tls.Config
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	accepted atomic.Int64
	slots    []*slot

	stalled     chan struct{} // closed when a connection first reaches Stall
	stalledOnce sync.Once

	closeOnce sync.Once
}

// Start validates cfg, listens on 127.0.0.1 on a free port and serves until
// Close or the end of ctx (which also ends every step, Stall included).
// Close must be called in either case.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if err := normalise(&cfg); err != nil {
		return nil, err
	}
	caPEM, cert, err := newCert(cfg.ServerName, time.Now())
	if err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakeserver: listen: %w", err)
	}
	ap, err := netip.ParseAddrPort(ln.Addr().String())
	if err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("fakeserver: listen address: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Server{
		cfg:   cfg,
		ln:    ln,
		addr:  ap,
		caPEM: caPEM,
		tlsCfg: &tls.Config{
			Certificates: []tls.Certificate{cert},
			MinVersion:   cfg.MinTLSVersion,
			MaxVersion:   cfg.MaxTLSVersion,
		},
		cancel:  cancel,
		slots:   make([]*slot, cfg.MaxConns),
		stalled: make(chan struct{}),
	}
	for i := range s.slots {
		s.slots[i] = &slot{done: make(chan struct{})}
	}
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer stop()
		s.acceptLoop(ctx)
	}()
	return s, nil
}

func normalise(cfg *Config) error {
	if cfg.ServerName == "" {
		cfg.ServerName = DefaultServerName
	}
	if _, err := netip.ParseAddr(cfg.ServerName); err == nil {
		return fmt.Errorf("%w: server name must be a DNS name", ErrBadConfig)
	}
	def := func(v *int, d, max int, name string) error {
		if *v == 0 {
			*v = d
		}
		if *v < 1 || *v > max {
			return fmt.Errorf("%w: %s out of range", ErrBadConfig, name)
		}
		return nil
	}
	if err := def(&cfg.MaxConns, DefaultMaxConns, MaxConns, "MaxConns"); err != nil {
		return err
	}
	if err := def(&cfg.MaxRecord, DefaultMaxRecord, MaxRecordLimit, "MaxRecord"); err != nil {
		return err
	}
	if err := def(&cfg.MaxLine, DefaultMaxLine, MaxLineLimit, "MaxLine"); err != nil {
		return err
	}
	return validateScript(cfg.Script)
}

// acceptLoop serves the first MaxConns connections and closes the rest,
// until the listener is closed.
func (s *Server) acceptLoop(ctx context.Context) {
	defer func() {
		// Slots never reached end as "stopped".
		for i := int(min(s.accepted.Load(), int64(len(s.slots)))); i < len(s.slots); i++ {
			s.slots[i].rec.Err = ErrStopped
			close(s.slots[i].done)
		}
	}()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		n := s.accepted.Add(1) - 1
		if n >= int64(len(s.slots)) {
			_ = c.Close()
			continue
		}
		sl := s.slots[n]
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer close(sl.done)
			sl.rec = s.play(ctx, c)
		}()
	}
}

// Addr returns the listener's address (127.0.0.1 and a free port).
func (s *Server) Addr() netip.AddrPort { return s.addr }

// ServerName returns the DNS name of the certificate.
func (s *Server) ServerName() string { return s.cfg.ServerName }

// RootCAs returns a new pool holding only the server's CA.
func (s *Server) RootCAs() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.caPEM)
	return pool
}

// CAPEM returns a copy of the CA certificate in PEM.
func (s *Server) CAPEM() []byte { return append([]byte(nil), s.caPEM...) }

// Stalled returns a channel closed once a connection's script has reached
// a Stall step: every step before it is done (what it sent was written,
// what it expected was read), so a client is waiting in the phase the
// script stalls.
func (s *Server) Stalled() <-chan struct{} { return s.stalled }

// Accepted returns the number of connections accepted so far, served or
// not.
func (s *Server) Accepted() int { return int(s.accepted.Load()) }

// Session waits until the script of the i-th accepted connection (from 0)
// has ended, or the server stopped before accepting it, and returns its
// record. The returned error is ErrNoSession for i outside MaxConns or
// ctx's error; script failures are in Record.Err.
func (s *Server) Session(ctx context.Context, i int) (Record, error) {
	if i < 0 || i >= len(s.slots) {
		return Record{}, ErrNoSession
	}
	sl := s.slots[i]
	select {
	case <-sl.done:
		return sl.rec, nil
	case <-ctx.Done():
		return Record{}, fmt.Errorf("fakeserver: waiting for session %d: %w", i, ctx.Err())
	}
}

// Close stops the listener and every script and waits for all of the
// server's goroutines. It is idempotent.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		_ = s.ln.Close()
	})
	s.wg.Wait()
	return nil
}
