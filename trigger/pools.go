package trigger

import (
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/latent-systems/latent-nats/conn"
)

// Accounting charges of the profile. They are accounting bounds, not
// measurements of process memory.
const (
	// installBaseBytes is charged once per installation.
	installBaseBytes = 64 << 10
	// installBindingBytes is charged per binding of an installation.
	installBindingBytes = 2 << 10
	// installRootFactor multiplies the DER bytes of the retained root
	// certificates of all tenants.
	installRootFactor = 6
	// requestBaseBytes plus requestPayloadFactor times the binding's payload
	// ceiling is charged per ingress request (one step past the host's
	// reservation), released when the step ends.
	requestBaseBytes     = 64 << 10
	requestPayloadFactor = 2
	// connectionBytes is charged per physical TLS connection while it is
	// open, from before its dial until it is closed.
	connectionBytes = 256 << 10
)

// installCharge returns the metadata bytes an installation of cfg is
// charged: installBaseBytes + installBindingBytes per binding +
// installRootFactor times the retained root-certificate bytes.
func installCharge(cfg Config) int64 {
	roots := 0
	for _, t := range cfg.Tenants {
		roots += t.Destination.RetainedRootBytes()
	}
	return installBaseBytes + int64(installBindingBytes)*int64(len(cfg.Bindings)) + installRootFactor*int64(roots)
}

// requestCharge returns the bytes one ingress request of a binding with the
// given payload ceiling is charged.
func requestCharge(payloadCeiling int) int64 {
	return requestBaseBytes + requestPayloadFactor*int64(payloadCeiling)
}

// Bounds of PoolLimits. Every field is required: none accepts 0 as
// unlimited.
const (
	// maxPoolBytes bounds PoolLimits.MaxBytes and MaxMetadataBytes (1 TiB).
	maxPoolBytes = 1 << 40
	// maxPoolCount bounds the count limits of PoolLimits.
	maxPoolCount = 1 << 20
	// minIdleAge and maxIdleAge bound PoolLimits.MaxIdleAge.
	minIdleAge = time.Second
	maxIdleAge = time.Hour
	// MinDialBackoff and maxDialBackoffLimit bound PoolLimits.DialBackoff
	// and PoolLimits.MaxDialBackoff.
	MinDialBackoff      = 10 * time.Millisecond
	maxDialBackoffLimit = 10 * time.Minute
)

// PoolLimits bound everything all installations of one Pools hold together.
// Tenant ceilings count by tenant ID, provider ceilings by provider ID,
// across installations.
type PoolLimits struct {
	// MaxBytes bounds all accounted bytes: installation metadata, ingress
	// requests and connections.
	MaxBytes int64
	// MaxMetadataBytes bounds the installation charges alone.
	MaxMetadataBytes int64
	// MaxInstallations bounds the installations alive at once.
	MaxInstallations int
	// MaxRequests bounds the ingress requests in flight.
	MaxRequests int
	// MaxClients bounds the tenant clients created (lazily, at a tenant's
	// first visit that gets past the host's checks; released by CloseIdle
	// and Close).
	MaxClients int
	// MaxConnections bounds the physical TLS connections.
	MaxConnections int
	// MaxTenantRequests and MaxTenantConnections are the per-tenant
	// ceilings.
	MaxTenantRequests    int
	MaxTenantConnections int
	// MaxProviderRequests and MaxProviderConnections are the per-provider
	// ceilings.
	MaxProviderRequests    int
	MaxProviderConnections int
	// MaxIdleAge: a connection idle for longer is closed rather than used
	// again.
	MaxIdleAge time.Duration
	// DialBackoff is the wait after a failed dial before the tenant client
	// dials again; it doubles with each further failure up to
	// MaxDialBackoff (both from MinDialBackoff, DialBackoff <=
	// MaxDialBackoff). Each wait is drawn uniformly between
	// half of it and all of it (PoolConfig.Rand).
	DialBackoff    time.Duration
	MaxDialBackoff time.Duration
}

// DefaultPoolLimits returns limits for one process hosting a few
// installations.
func DefaultPoolLimits() PoolLimits {
	return PoolLimits{
		MaxBytes:               256 << 20,
		MaxMetadataBytes:       64 << 20,
		MaxInstallations:       64,
		MaxRequests:            64,
		MaxClients:             64,
		MaxConnections:         64,
		MaxTenantRequests:      8,
		MaxTenantConnections:   8,
		MaxProviderRequests:    32,
		MaxProviderConnections: 32,
		MaxIdleAge:             60 * time.Second,
		DialBackoff:            500 * time.Millisecond,
		MaxDialBackoff:         30 * time.Second,
	}
}

// Validate checks every field against its bounds and returns a
// *PoolLimitsError naming the first one out of them.
func (l PoolLimits) Validate() error {
	bytes := []struct {
		name string
		v    int64
	}{
		{"max_bytes", l.MaxBytes},
		{"max_metadata_bytes", l.MaxMetadataBytes},
	}
	for _, f := range bytes {
		if f.v < 1 || f.v > maxPoolBytes {
			return &PoolLimitsError{Field: f.name}
		}
	}
	counts := []struct {
		name string
		v    int
	}{
		{"max_installations", l.MaxInstallations},
		{"max_requests", l.MaxRequests},
		{"max_clients", l.MaxClients},
		{"max_connections", l.MaxConnections},
		{"max_tenant_requests", l.MaxTenantRequests},
		{"max_tenant_connections", l.MaxTenantConnections},
		{"max_provider_requests", l.MaxProviderRequests},
		{"max_provider_connections", l.MaxProviderConnections},
	}
	for _, f := range counts {
		if f.v < 1 || f.v > maxPoolCount {
			return &PoolLimitsError{Field: f.name}
		}
	}
	switch {
	case l.MaxIdleAge < minIdleAge || l.MaxIdleAge > maxIdleAge:
		return &PoolLimitsError{Field: "max_idle_age"}
	case l.DialBackoff < MinDialBackoff || l.DialBackoff > maxDialBackoffLimit:
		return &PoolLimitsError{Field: "dial_backoff"}
	case l.MaxDialBackoff < l.DialBackoff || l.MaxDialBackoff > maxDialBackoffLimit:
		return &PoolLimitsError{Field: "max_dial_backoff"}
	}
	return nil
}

// PoolConfig configures NewPools.
type PoolConfig struct {
	Limits PoolLimits
	// Rand is the source of activation and trace IDs and of the dial
	// backoff's jitter; nil means crypto/rand.
	Rand io.Reader
	// Dialer opens broker sockets; nil means a zero net.Dialer.
	Dialer conn.Dialer
	// ThreadSocket serves broker sockets from the stepping goroutine's
	// thread on Linux instead of the Go runtime's network poller
	// (conn.Config.ThreadSocket): less client CPU per visit, but the end of
	// Run's context no longer interrupts a wait for the broker, which then
	// lasts up to its deadline (the operation timeout, or the pull's own
	// bound), and Close and Pools.Close wait for it.
	ThreadSocket bool
	// Logger receives the runtime's state changes (installations,
	// connections, dial backoff, profile mismatches, credentials,
	// exhaustion, uncertain and late acknowledgements), each once per
	// transition, with the fixed messages and attributes listed in the
	// package documentation; never payloads, subjects, broker text or
	// secrets. nil means silent.
	Logger *slog.Logger
}

// Usage is what the pools hold now.
type Usage struct {
	Bytes         int64
	MetadataBytes int64
	Installations int
	Requests      int
	Clients       int
	Connections   int
}

// Pools are the shared provider pools: the limits and accounting of every
// installation made with them, and the registry of installed epochs. They
// are safe for concurrent use.
type Pools struct {
	// now is time.Now: the runtime's deadlines are contexts and timers on
	// the same clock (tests run under testing/synctest).
	now    func() time.Time
	rand   io.Reader
	dialer conn.Dialer
	thread bool // PoolConfig.ThreadSocket
	log    *slog.Logger
	lim    PoolLimits

	mu        sync.Mutex
	closed    bool
	use       Usage
	tenants   map[string]*keyUsage
	providers map[string]*keyUsage
	registry  map[string]*registryEntry
	// installs holds every installation not yet closed, superseded ones
	// included, for Close.
	installs map[*Triggers]struct{}
}

// keyUsage counts one tenant's or provider's requests and connections. An
// entry lives while an installation refers to it.
type keyUsage struct {
	refs        int
	requests    int
	connections int
}

// registryEntry is the epoch record of one logical ID. It outlives its
// installation so that epochs never move backwards.
type registryEntry struct {
	epoch uint64
	live  *Triggers
}

// NewPools returns empty pools with the given limits.
func NewPools(cfg PoolConfig) (*Pools, error) {
	if err := cfg.Limits.Validate(); err != nil {
		return nil, err
	}
	return &Pools{
		now:       time.Now,
		rand:      cfg.Rand,
		dialer:    cfg.Dialer,
		thread:    cfg.ThreadSocket,
		log:       cfg.Logger,
		lim:       cfg.Limits,
		tenants:   make(map[string]*keyUsage),
		providers: make(map[string]*keyUsage),
		registry:  make(map[string]*registryEntry),
		installs:  make(map[*Triggers]struct{}),
	}, nil
}

// Limits returns the pools' limits.
func (p *Pools) Limits() PoolLimits { return p.lim }

// Usage returns what the pools hold now.
func (p *Pools) Usage() Usage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.use
}

// Epoch returns the registry's epoch of a logical ID and whether an
// installation of it is alive. Epoch 0 means never installed.
func (p *Pools) Epoch(logicalID string) (epoch uint64, live bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.registry[logicalID]
	if e == nil {
		return 0, false
	}
	return e.epoch, e.live != nil
}

// Close closes every installation not yet closed, live or superseded (as
// Triggers.Close, which stops a step in progress), and
// refuses further installations: the final reclamation of the shared
// pools.
func (p *Pools) Close() {
	p.mu.Lock()
	p.closed = true
	open := make([]*Triggers, 0, len(p.installs))
	for t := range p.installs {
		open = append(open, t)
	}
	p.mu.Unlock()
	for _, t := range open {
		t.Close()
	}
}

// install records the epoch transition of logicalID and charges the
// installation, atomically. It returns the registry entry and the tenant
// and provider usage entries of the installation (in the order given), and
// the epoch of the live installation it supersedes (0 if none).
func (p *Pools) install(t *Triggers, logicalID string, epoch, expected uint64, charge int64, tenants, providers []string) (*registryEntry, []*keyUsage, []*keyUsage, uint64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, nil, nil, 0, ErrClosed
	}
	e := p.registry[logicalID]
	var current uint64
	if e != nil {
		current = e.epoch
	}
	if current != expected || epoch <= current {
		return nil, nil, nil, 0, &EpochError{LogicalID: logicalID, Current: current, Expected: expected, Epoch: epoch}
	}
	switch {
	case p.use.Installations+1 > p.lim.MaxInstallations:
		return nil, nil, nil, 0, reservationError(ResourceInstallations)
	case p.use.MetadataBytes+charge > p.lim.MaxMetadataBytes:
		return nil, nil, nil, 0, reservationError(ResourceMetadataBytes)
	case p.use.Bytes+charge > p.lim.MaxBytes:
		return nil, nil, nil, 0, reservationError(ResourceBytes)
	}
	var superseded uint64
	if e == nil {
		e = &registryEntry{}
		p.registry[logicalID] = e
	} else if e.live != nil {
		superseded = e.epoch
	}
	e.epoch = epoch
	e.live = t
	p.installs[t] = struct{}{}
	p.use.Installations++
	p.use.MetadataBytes += charge
	p.use.Bytes += charge
	tu := make([]*keyUsage, len(tenants))
	for i, id := range tenants {
		tu[i] = ref(p.tenants, id)
	}
	pu := make([]*keyUsage, len(providers))
	for i, id := range providers {
		pu[i] = ref(p.providers, id)
	}
	return e, tu, pu, superseded, nil
}

func ref(m map[string]*keyUsage, id string) *keyUsage {
	k := m[id]
	if k == nil {
		k = &keyUsage{}
		m[id] = k
	}
	k.refs++
	return k
}

func unref(m map[string]*keyUsage, id string) {
	k := m[id]
	if k == nil {
		return
	}
	k.refs--
	if k.refs <= 0 {
		delete(m, id)
	}
}

// uninstall returns an installation's charge and its usage entries. The
// registry keeps the epoch.
func (p *Pools) uninstall(t *Triggers, e *registryEntry, charge int64, tenants, providers []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.live == t {
		e.live = nil
	}
	delete(p.installs, t)
	p.use.Installations--
	p.use.MetadataBytes -= charge
	p.use.Bytes -= charge
	for _, id := range tenants {
		unref(p.tenants, id)
	}
	for _, id := range providers {
		unref(p.providers, id)
	}
}

// current reports whether e still records epoch.
func (p *Pools) current(e *registryEntry, epoch uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return e.epoch == epoch
}

// reserveRequest charges one ingress request.
func (p *Pools) reserveRequest(tenant, provider *keyUsage, bytes int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.use.Requests+1 > p.lim.MaxRequests:
		return reservationError(ResourceRequests)
	case tenant.requests+1 > p.lim.MaxTenantRequests:
		return reservationError(ResourceTenantRequests)
	case provider.requests+1 > p.lim.MaxProviderRequests:
		return reservationError(ResourceProviderRequests)
	case p.use.Bytes+bytes > p.lim.MaxBytes:
		return reservationError(ResourceBytes)
	}
	p.use.Requests++
	p.use.Bytes += bytes
	tenant.requests++
	provider.requests++
	return nil
}

func (p *Pools) releaseRequest(tenant, provider *keyUsage, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.use.Requests--
	p.use.Bytes -= bytes
	tenant.requests--
	provider.requests--
}

// reserveClient charges one tenant client.
func (p *Pools) reserveClient() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.use.Clients+1 > p.lim.MaxClients {
		return reservationError(ResourceClients)
	}
	p.use.Clients++
	return nil
}

func (p *Pools) releaseClient() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.use.Clients--
}

// reserveConnection charges one physical connection.
func (p *Pools) reserveConnection(tenant, provider *keyUsage) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.use.Connections+1 > p.lim.MaxConnections:
		return reservationError(ResourceConnections)
	case tenant.connections+1 > p.lim.MaxTenantConnections:
		return reservationError(ResourceTenantConnections)
	case provider.connections+1 > p.lim.MaxProviderConnections:
		return reservationError(ResourceProviderConnections)
	case p.use.Bytes+connectionBytes > p.lim.MaxBytes:
		return reservationError(ResourceBytes)
	}
	p.use.Connections++
	p.use.Bytes += connectionBytes
	tenant.connections++
	provider.connections++
	return nil
}

func (p *Pools) releaseConnection(tenant, provider *keyUsage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.use.Connections--
	p.use.Bytes -= connectionBytes
	tenant.connections--
	provider.connections--
}
