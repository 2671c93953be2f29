package trigger

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/latent-systems/latent-nats/pull"
)

// The fixed messages of the runtime's log (PoolConfig.Logger). Each is a
// state change, logged once per transition, never per visit or per
// message; see the package documentation for the table of levels and
// attributes.
const (
	msgInstalled          = "trigger configuration installed"
	msgSuperseded         = "trigger configuration superseded"
	msgDialled            = "trigger broker connection dialled"
	msgReplaced           = "trigger broker connection replaced"
	msgLost               = "trigger broker connection lost"
	msgBackoffStarted     = "trigger dial backoff started"
	msgBackoffEnded       = "trigger dial backoff ended"
	msgProfileMismatch    = "trigger consumer profile mismatch"
	msgProfileCleared     = "trigger consumer profile mismatch cleared"
	msgConsumerMissing    = "trigger consumer missing"
	msgConsumerFound      = "trigger consumer missing cleared"
	msgAckUncertain       = "trigger acknowledgement uncertain"
	msgAckLate            = "trigger acknowledgement late"
	msgExhausted          = "trigger delivery exhausted"
	msgPoolExhausted      = "trigger pool exhausted"
	msgPoolCleared        = "trigger pool exhaustion cleared"
	msgCredentialExpired  = "trigger credential not current"
	msgCredentialRestored = "trigger credential current again"
	msgRotated            = "trigger credential rotated"
)

// The fixed attribute keys of the runtime's log.
const (
	keyLogicalID = "logical_id"
	keyEpoch     = "epoch"
	keyTenant    = "tenant"
	keyBinding   = "binding"
	keyStream    = "stream"
	keyConsumer  = "consumer"
	keyClass     = "class"
	keyResource  = "resource"
	keyStreamSeq = "stream_seq"
	keyDelivered = "delivered"
	keyBackoff   = "backoff"
	keyDial      = "dial_failure"
)

// logger is an installation's view of PoolConfig.Logger: nil l is
// silent. Every record carries the installation's logical ID and epoch.
// A handler is host code, never run under the installation's lock: with
// held set (the installation's logger, used under that lock) records are
// kept there for Triggers.unlock to emit.
type logger struct {
	l         *slog.Logger
	logicalID string
	epoch     uint64
	held      *[]heldRecord
}

// heldRecord is a record written under the installation's lock.
type heldRecord struct {
	level slog.Level
	msg   string
	attrs []slog.Attr
}

// direct returns g writing its records at once, for use outside the
// installation's lock.
func (g logger) direct() logger {
	g.held = nil
	return g
}

// emit writes records kept by a logger with held set.
func (g *logger) emit(records []heldRecord) {
	for _, r := range records {
		g.l.LogAttrs(context.Background(), r.level, r.msg, r.attrs...)
	}
}

// on reports whether records are written; callers test it before building
// attributes, so that a nil logger costs no allocation.
func (g *logger) on() bool { return g != nil && g.l != nil }

func (g *logger) log(level slog.Level, msg string, attrs ...slog.Attr) {
	all := make([]slog.Attr, 0, 2+len(attrs))
	all = append(all, slog.String(keyLogicalID, g.logicalID), slog.Uint64(keyEpoch, g.epoch))
	all = append(all, attrs...)
	if g.held != nil {
		*g.held = append(*g.held, heldRecord{level: level, msg: msg, attrs: all})
		return
	}
	g.l.LogAttrs(context.Background(), level, msg, all...)
}

// tenant logs a record about tenant ts.
func (g *logger) tenant(level slog.Level, msg string, ts *tenantState, attrs ...slog.Attr) {
	g.log(level, msg, append([]slog.Attr{slog.String(keyTenant, ts.cfg.ID)}, attrs...)...)
}

// binding logs a record about binding b, with the step's delivery when it
// has one.
func (g *logger) binding(level slog.Level, msg string, b *bindingState, r *StepReport, attrs ...slog.Attr) {
	c := b.cfg
	base := []slog.Attr{
		slog.String(keyTenant, c.Tenant),
		slog.String(keyBinding, c.ID),
		slog.String(keyStream, c.Stream),
		slog.String(keyConsumer, c.Consumer),
	}
	if r != nil && r.StreamSeq > 0 {
		base = append(base, slog.Uint64(keyStreamSeq, r.StreamSeq), slog.Uint64(keyDelivered, r.Delivered))
	}
	g.log(level, msg, append(base, attrs...)...)
}

// installed logs an installation and the one it superseded, if any.
func (g *logger) installed(superseded uint64) {
	if !g.on() {
		return
	}
	if superseded > 0 {
		g.l.LogAttrs(context.Background(), slog.LevelInfo, msgSuperseded,
			slog.String(keyLogicalID, g.logicalID), slog.Uint64(keyEpoch, superseded))
	}
	g.log(slog.LevelInfo, msgInstalled)
}

// dialled logs a connection opened by acquire: replacing says a pooled
// one was found unusable in the same call; recovered says failed dials
// came before it (the end of the backoff).
func (g *logger) dialled(ts *tenantState, replacing, recovered bool) {
	if !g.on() {
		return
	}
	if recovered {
		g.tenant(slog.LevelInfo, msgBackoffEnded, ts)
	}
	msg := msgDialled
	if replacing {
		msg = msgReplaced
	}
	g.tenant(slog.LevelInfo, msg, ts)
}

// backoff logs the first failed dial of a run of them, with why it failed
// (err, the dial's error); the later ones of the same run are silent (a
// broker down for an hour writes one line).
func (g *logger) backoff(ts *tenantState, failures int, wait time.Duration, err error) {
	if !g.on() || failures != 1 {
		return
	}
	g.tenant(slog.LevelWarn, msgBackoffStarted, ts,
		slog.String(keyClass, ClassDial.String()), slog.String(keyDial, dialFailure(err).String()),
		slog.Duration(keyBackoff, wait))
}

// lost logs a connection an exchange closed, or a pooled one found closed
// at checkout (err nil when it was closed already), unless the owner's
// stop closed it.
func (g *logger) lost(ts *tenantState, err error) {
	if !g.on() || errors.Is(err, context.Canceled) {
		return
	}
	class := ClassConnection
	if err != nil {
		class = classify(err)
	}
	g.tenant(slog.LevelWarn, msgLost, ts, slog.String(keyClass, class.String()))
}

// logStep logs the transitions a step's report shows for binding b and its
// tenant. A report that changes no state writes nothing and allocates
// nothing.
func (t *Triggers) logStep(b *bindingState, r *StepReport) {
	g := &t.log
	ts := &t.tenants[b.tenant]
	if r.Result == ResultShutdown {
		return
	}

	// Profile mismatch, per binding: found once, cleared once consumer
	// info matched again.
	switch {
	case r.Error == ClassProfile && !b.mismatch:
		b.mismatch = true
		if g.on() {
			g.binding(slog.LevelWarn, msgProfileMismatch, b, nil, slog.String(keyClass, r.Error.String()))
		}
	case b.mismatch && (r.Result == ResultEmpty || r.Result == ResultDelivered || r.Error == ClassPaused):
		b.mismatch = false
		if g.on() {
			g.binding(slog.LevelInfo, msgProfileCleared, b, nil)
		}
	}

	// Consumer missing (stream or consumer deleted, or no JetStream
	// responder), per binding: found once, cleared once the consumer
	// answered again.
	switch {
	case r.Error == ClassConsumerMissing && !b.missing:
		b.missing = true
		if g.on() {
			g.binding(slog.LevelWarn, msgConsumerMissing, b, nil, slog.String(keyClass, r.Error.String()))
		}
	case b.missing && (r.Result == ResultEmpty || r.Result == ResultDelivered || r.Error == ClassPaused || r.Error == ClassProfile):
		b.missing = false
		if g.on() {
			g.binding(slog.LevelInfo, msgConsumerFound, b, nil)
		}
	}

	// Credential, per tenant: every class but ineligible comes after the
	// first credential check.
	switch {
	case r.Error == ClassCredential && !ts.credExpired:
		ts.credExpired = true
		if g.on() {
			g.tenant(slog.LevelWarn, msgCredentialExpired, ts, slog.String(keyClass, r.Error.String()))
		}
	case ts.credExpired && r.Error != ClassCredential && r.Error != ClassIneligible:
		ts.credExpired = false
		if g.on() {
			g.tenant(slog.LevelInfo, msgCredentialRestored, ts)
		}
	}

	// Pool exhaustion, per tenant: cleared by a visit that reached the
	// broker.
	switch {
	case r.Error == ClassPoolExhausted && !ts.exhausted:
		ts.exhausted = true
		if g.on() {
			g.tenant(slog.LevelWarn, msgPoolExhausted, ts,
				slog.String(keyClass, r.Error.String()), slog.String(keyResource, r.Resource.String()))
		}
	case ts.exhausted && (r.Result == ResultEmpty || r.Result == ResultDelivered || r.Result == ResultFailed):
		ts.exhausted = false
		if g.on() {
			g.tenant(slog.LevelInfo, msgPoolCleared, ts)
		}
	}

	// Events of one delivery: each is its own state change of that event.
	if !g.on() || r.Result != ResultDelivered {
		return
	}
	if r.Action == pull.ActionExhausted {
		g.binding(slog.LevelWarn, msgExhausted, b, r)
	}
	switch r.Ack {
	case pull.AckUncertain:
		g.binding(slog.LevelWarn, msgAckUncertain, b, r, slog.String(keyClass, ClassAckUncertain.String()))
	case pull.AckVerifiedLate:
		g.binding(slog.LevelWarn, msgAckLate, b, r)
	}
}
