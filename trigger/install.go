package trigger

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/latent-systems/latent-nats/internal/jspull"
)

// Triggers is one installed configuration: its metadata, its tenant
// clients and its rotation. It starts nothing: the owner drives it with
// Run (one goroutine, one timer) or Step. Nothing is allocated per dormant
// binding: no goroutine, socket, timer or subscription.
type Triggers struct {
	pools     *Pools
	logicalID string
	epoch     uint64
	entry     *registryEntry
	charge    int64
	cfg       Config
	poll      time.Duration
	now       func() time.Time
	rand      io.Reader
	mon       *Monitor
	// log is PoolConfig.Logger with the installation's identity.
	log       logger
	tenantIDs []string
	provIDs   []string

	// stopMu guards stop: the cancel of the context of the Run or Step
	// that drives the installation (see claim), so that Close can end a
	// step waiting on the broker without waiting for it. It is never held
	// with mu waited for.
	stopMu sync.Mutex
	stop   context.CancelCauseFunc

	// mu guards the installation's state. A step holds it while it runs
	// the runtime's own code and releases it around every call into host
	// code (see the contract in host.go); Close and CloseIdle take it for
	// their own work. Everything below is owned by its holder.
	mu     sync.Mutex
	closed bool
	// driven: a Run or a Step call drives the installation (see claim).
	driven bool
	// stepping: a step is in progress; idleAfterStep is a CloseIdle asked
	// for during it, done when it ends.
	stepping      bool
	idleAfterStep bool
	// request is the binding whose ingress request the step in progress
	// holds in the pools, nil when none: the step returns it when its
	// visit ends, Close when it closes the installation first.
	request *bindingState
	// held are the log records written under mu, emitted by unlock once
	// mu is released (a slog handler is host code too).
	held []heldRecord

	tenants  []tenantState
	bindings []bindingState
	rot      rotation
	hot      int
	steps    uint64
	// dial opens a tenant's link; tests replace it before the first step.
	dial dialFunc
}

// tenantState is one tenant client's metadata and its lazily created
// client.
type tenantState struct {
	index int
	cfg   *Tenant
	// cred is the tenant's secret, shared with Rotate (see rotate.go).
	cred       *credSlot
	roots      *x509.CertPool
	pin        [sha256.Size]byte
	maxPayload int
	bindings   []int
	cursor     int
	usage      *keyUsage
	provider   *keyUsage
	client     client
	// scratch is the working memory the pull consumers of the tenant's
	// bindings share, made with its first link and kept for the
	// installation's life. One step at a time visits one binding (see
	// claim), so no two of those consumers are ever used at the same time; a
	// delivery is acknowledged in the step that pulled it, before the
	// next pull of any of them.
	scratch *jspull.Scratch
	// credExpired and exhausted are the logged states of the tenant's
	// credential and pool reservations (see logStep).
	credExpired bool
	exhausted   bool
}

// bindingState is one binding's metadata. The pull consumer is made at the
// binding's first visit that needs the broker and holds no socket,
// goroutine or buffer (the buffers are its tenant's scratch).
type bindingState struct {
	index    int
	tenant   int
	cfg      *Binding
	consumer *jspull.Consumer
	charge   int64
	// revisit is the number of steps until the rotation visits this
	// binding again.
	revisit int
	// mismatch and missing are the logged profile and consumer states
	// (see logStep).
	mismatch bool
	missing  bool
	// redeliverAfter is the earliest time the broker can redeliver the
	// binding's last delivery while it is still pending (see
	// visit.inspect): the pull's send time plus the ack wait, or the NAK's
	// send time plus its delay. Zero once a verified ACK or TERM ended it.
	redeliverAfter time.Time
	// backoff is the binding's backoff after unanswered visits (see
	// bindbackoff.go).
	backoff bindingBackoff
}

// Installation is what Install installs: a configuration and its
// credentials under a logical ID, at an epoch. The fields are named so
// that the two epochs cannot be swapped unnoticed.
type Installation struct {
	// LogicalID names the installation in the pools' registry: 1-64
	// bytes of printable ASCII.
	LogicalID string
	// Epoch is this installation's epoch; it must exceed ExpectedEpoch.
	Epoch uint64
	// ExpectedEpoch is the registry's current epoch of LogicalID, 0 for a
	// first installation (Pools.Epoch reads it).
	ExpectedEpoch uint64
	// Config is the configuration, validated and copied.
	Config Config
	// Credentials are one per tenant of Config (MatchCredentials).
	Credentials []Credential
}

// Install validates in's configuration and credentials, charges the
// installation to pools and records the checked epoch transition of its
// logical ID: the registry's current epoch must equal in.ExpectedEpoch (0
// for a first installation) and in.Epoch must exceed it. An installation
// of an older epoch of the same ID is superseded: its Run and Step return
// ErrSuperseded from their next step, and its owner still closes it
// (Pools.Close closes it too). Installation retains metadata only; it
// opens no connection and reads no credential secret. The secrets stay the
// caller's, to wipe after Close; only a secret Triggers.Rotate replaced
// becomes the installation's (see Rotate).
//
// Errors: the *ConfigError of Config.Validate, the *CredentialsError of
// MatchCredentials, ErrInvalidLogicalID, *EpochError, a *ReservationError
// (installations, metadata bytes or bytes), ErrClosed for closed pools.
func Install(pools *Pools, in Installation) (*Triggers, *Monitor, error) {
	logicalID, epoch, expectedEpoch, cfg, creds := in.LogicalID, in.Epoch, in.ExpectedEpoch, in.Config, in.Credentials
	if !validLogicalID(logicalID) {
		return nil, nil, ErrInvalidLogicalID
	}
	matched, err := MatchCredentials(cfg, creds)
	if err != nil {
		return nil, nil, err
	}
	cfg = cfg.Clone()
	t := &Triggers{
		pools:     pools,
		logicalID: logicalID,
		epoch:     epoch,
		cfg:       cfg,
		poll:      cfg.PollInterval(),
		now:       pools.now,
		rand:      pools.rand,
		charge:    installCharge(cfg),
		mon:       newMonitor(logicalID, epoch, len(cfg.Bindings)),
		log:       logger{l: pools.log, logicalID: logicalID, epoch: epoch},
	}
	if t.rand == nil {
		t.rand = rand.Reader
	}
	t.log.held = &t.held
	t.dial = t.dialConn
	t.tenants = make([]tenantState, len(cfg.Tenants))
	t.tenantIDs = make([]string, len(cfg.Tenants))
	t.provIDs = make([]string, len(cfg.Tenants))
	for i := range cfg.Tenants {
		tc := &t.cfg.Tenants[i]
		roots, err := tc.Destination.CertPool()
		if err != nil {
			return nil, nil, err
		}
		ts := &t.tenants[i]
		ts.index = i
		ts.cfg = tc
		ts.client.log = &t.log
		ts.cred = newCredSlot(matched[i].Secret)
		ts.roots = roots
		if tc.Destination.SPKISHA256 != "" {
			if _, err := hex.Decode(ts.pin[:], []byte(tc.Destination.SPKISHA256)); err != nil {
				return nil, nil, err
			}
		}
		ts.maxPayload = jspull.MaxInfoSize
		t.tenantIDs[i] = tc.ID
		t.provIDs[i] = tc.ProviderID
	}
	t.bindings = make([]bindingState, len(cfg.Bindings))
	for i := range cfg.Bindings {
		bc := &t.cfg.Bindings[i]
		ti := t.cfg.TenantIndex(bc.Tenant)
		ts := &t.tenants[ti]
		ts.bindings = append(ts.bindings, i)
		ts.maxPayload = max(ts.maxPayload, bc.MaxPayloadBytes)
		t.bindings[i] = bindingState{
			index:  i,
			tenant: ti,
			cfg:    bc,
			charge: requestCharge(bc.MaxPayloadBytes),
		}
	}
	for i := range t.bindings {
		b := &t.bindings[i]
		b.revisit = len(t.tenants) * len(t.tenants[b.tenant].bindings)
	}
	t.rot = newRotation(len(t.tenants))
	entry, tu, pu, superseded, err := pools.install(t, logicalID, epoch, expectedEpoch, t.charge, t.tenantIDs, t.provIDs)
	if err != nil {
		return nil, nil, err
	}
	d := t.log.direct()
	d.installed(superseded)
	t.entry = entry
	for i := range t.tenants {
		t.tenants[i].usage = tu[i]
		t.tenants[i].provider = pu[i]
	}
	return t, t.mon, nil
}

// ref returns the host's view of binding b; it shares the configuration's
// strings and allocates nothing.
func (t *Triggers) ref(b *bindingState) BindingRef {
	c := b.cfg
	return BindingRef{
		LogicalID: t.logicalID,
		Epoch:     t.epoch,
		Index:     b.index,
		ID:        c.ID,
		Tenant:    c.Tenant,
		Principal: c.Principal,
		Service:   c.Service,
		Contract:  c.Contract,
		Function:  c.Function,
		Route:     c.Route,
	}
}

// pullBinding returns the part of binding b the pull operations need.
func (b *bindingState) pullBinding() jspull.Binding {
	c := b.cfg
	return jspull.Binding{
		Stream:         c.Stream,
		Consumer:       c.Consumer,
		FilterSubject:  c.FilterSubject,
		PayloadCeiling: c.MaxPayloadBytes,
		AckWait:        c.AckWait(),
		MaxDeliver:     c.MaxDeliver,
	}
}

// validLogicalID: 1-maxIDLen bytes of printable ASCII.
func validLogicalID(id string) bool {
	if len(id) == 0 || len(id) > maxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// LogicalID returns the installation's logical ID.
func (t *Triggers) LogicalID() string { return t.logicalID }

// Epoch returns the installation's epoch.
func (t *Triggers) Epoch() uint64 { return t.epoch }

// Monitor returns the installation's monitor (the one Install returned).
func (t *Triggers) Monitor() *Monitor { return t.mon }

// PollInterval returns the configured poll interval.
func (t *Triggers) PollInterval() time.Duration { return t.poll }

// Close closes every connection, releases every client and the
// installation's charge, and makes later Run and Step return ErrClosed. A
// Run or Step in progress is stopped as if its context were cancelled (a
// wait on the broker is interrupted at once; the host's activation sees
// its context done; nothing more is acknowledged) and returns ErrClosed.
// Close waits for the runtime's own work of that step, never for host
// code: when it returns, the installation holds no connection, client or
// pool reservation, from whatever goroutine it was called, a host
// callback of the step included (see "Host code and the installation" in
// host.go). The registry keeps the epoch, so the next installation of the
// logical ID expects it. Close is idempotent.
func (t *Triggers) Close() {
	t.stopMu.Lock()
	if t.stop != nil {
		t.stop(ErrClosed)
	}
	t.stopMu.Unlock()
	t.mu.Lock()
	t.closeLocked()
	t.unlock()
}

func (t *Triggers) closeLocked() {
	if t.closed {
		return
	}
	t.closed = true
	t.closeClientsLocked()
	t.releaseRequestLocked()
	for i := range t.tenants {
		t.tenants[i].cred.close()
	}
	t.pools.uninstall(t, t.entry, t.charge, t.tenantIDs, t.provIDs)
}

// CloseIdle closes every tenant connection and releases every tenant client;
// the next step that needs one dials again. Explicit Step drivers call it
// when they stop; Run calls it before it returns. Called during a step
// (from its host callbacks or from another goroutine), it returns at once
// and the step closes them when it ends.
func (t *Triggers) CloseIdle() {
	t.mu.Lock()
	if t.stepping {
		t.idleAfterStep = true
	} else {
		t.closeClientsLocked()
	}
	t.unlock()
}

func (t *Triggers) closeClientsLocked() {
	for i := range t.tenants {
		t.tenants[i].client.release(t.pools, &t.tenants[i])
	}
}

// releaseRequestLocked returns the ingress request the step in progress
// holds in the pools, if any.
func (t *Triggers) releaseRequestLocked() {
	if b := t.request; b != nil {
		t.request = nil
		ts := &t.tenants[b.tenant]
		t.pools.releaseRequest(ts.usage, ts.provider, b.charge)
	}
}

// unlock releases mu, then emits the log records written under it.
func (t *Triggers) unlock() {
	held := t.held
	t.held = nil
	t.mu.Unlock()
	t.log.emit(held)
}

// driverKey is the context key of the installation a Run or Step drives:
// the context of every host callback that is given one carries it.
type driverKey struct{}

// claim makes the caller the installation's one driver, a Run or a Step
// call, or refuses: ErrReentrant when ctx comes from one of the
// installation's own host callbacks (it carries the driver's key),
// ErrRunning when another Run or Step drives it. It returns ctx made
// cancellable by Close (see stop); the driver gives the claim back with
// unclaim.
func (t *Triggers) claim(ctx context.Context) (context.Context, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.driven {
		if ctx.Value(driverKey{}) == t {
			return nil, ErrReentrant
		}
		return nil, ErrRunning
	}
	t.driven = true
	ctx, cancel := context.WithCancelCause(context.WithValue(ctx, driverKey{}, t))
	t.stopMu.Lock()
	t.stop = cancel
	t.stopMu.Unlock()
	return ctx, nil
}

// unclaimLocked ends the driver's claim and cancels its context (mu held).
func (t *Triggers) unclaimLocked() {
	t.driven = false
	t.stopMu.Lock()
	cancel := t.stop
	t.stop = nil
	t.stopMu.Unlock()
	cancel(nil)
}

// stopped maps the error of a Run or Step under a context from claim:
// a stop by Close is ErrClosed.
func stopped(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), ErrClosed) && (errors.Is(err, context.Canceled) || err == nil) {
		return ErrClosed
	}
	return err
}
