package trigger

import (
	"log/slog"
	"sync"

	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/jsontree"
)

// Rotate hands the installation a tenant's new credential: same Tenant,
// ProviderID and exact Destination as the configuration's, with a secret
// that is present, not wiped and not the one in use, checked as
// MatchCredentials checks one at Install. From its return on:
//
//   - no new dial of the tenant uses the old secret, and every credential
//     check (the secret's own expiry, before any network, before the pull
//     and before the acknowledgement) reads the new one;
//   - the tenant's pooled connection authenticated with the old secret
//     carries the rest of a step in progress and is closed at its next
//     checkout, before that step writes anything, never in an exchange;
//     the step dials once with the new secret instead (counted in
//     Snapshot.Replaced, logged as msgReplaced);
//   - the old secret is wiped by the installation once no connection and no
//     dial in progress uses it: at once when none does, else when that
//     connection is closed (at its next checkout, by CloseIdle, Close, the
//     broker or idleness).
//
// Ownership: a secret passed to Install or Rotate stays the caller's while
// it is current, and the caller wipes it after Close as before; a secret
// that Rotate replaced becomes the installation's, which wipes it as
// above. The caller must therefore not use a replaced secret elsewhere
// (another installation included) after Rotate returns.
//
// Rotate may be called from any goroutine, Run or a step in progress
// included, and from the installation's own host callbacks: it never waits
// for a step. It counts the rotation (Snapshot.Rotations) and logs
// msgRotated once. Errors change nothing: a *CredentialsError (paths
// "credential.tenant", "credential.provider_id", "credential.destination",
// "credential.secret"), ErrClosed after Close.
func (t *Triggers) Rotate(c Credential) error {
	ti := t.cfg.TenantIndex(c.Tenant)
	if err := checkRotation(t.cfg, ti, c); err != nil {
		return err
	}
	ts := &t.tenants[ti]
	old, err := ts.cred.rotate(c.Secret)
	if err != nil {
		return err
	}
	if old != nil {
		old.Wipe()
	}
	t.mon.rotated()
	if g := t.log.direct(); g.on() {
		g.tenant(slog.LevelInfo, msgRotated, ts)
	}
	return nil
}

// checkRotation checks c as MatchCredentials checks one credential, for the
// tenant at index ti of cfg (-1: not configured).
func checkRotation(cfg Config, ti int, c Credential) error {
	var vs violationList
	const p = "credential"
	var t *Tenant
	if ti < 0 {
		vs.add(jsontree.Field(p, "tenant"), RuleCredentialUnknownTenant)
	} else {
		t = &cfg.Tenants[ti]
	}
	matchTenant(&vs, p, t, c)
	if len(vs.list) > 0 || vs.truncated {
		return &CredentialsError{Violations: vs.list, Truncated: vs.truncated}
	}
	return nil
}

// credSlot is one tenant's credential secret as Rotate and the steps share
// it. Its lock is held only for a few assignments: never while a dial, an
// exchange or a callback runs, so Rotate never waits for a step.
type credSlot struct {
	mu sync.Mutex
	// cur is the current secret: every check and every new dial uses it.
	cur *credential.Secret
	// used is the secret the tenant's connection, or the dial in progress,
	// authenticated with; nil when there is neither. A tenant has at most
	// one of them (acquire drops a connection before it dials).
	used *credential.Secret
	// closed: the installation was closed; Rotate refuses.
	closed bool
}

func newCredSlot(s *credential.Secret) *credSlot { return &credSlot{cur: s} }

// current returns the current secret.
func (s *credSlot) current() *credential.Secret {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// checkout marks the current secret as used by a dial about to start and
// returns it.
func (s *credSlot) checkout() *credential.Secret {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used = s.cur
	return s.used
}

// dialling returns the secret of the dial in progress (checkout's), or
// the current one when no dial or connection uses one.
func (s *credSlot) dialling() *credential.Secret {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used != nil {
		return s.used
	}
	return s.cur
}

// stale reports whether the tenant's connection authenticated with a
// secret Rotate has since replaced.
func (s *credSlot) stale() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used != nil && s.used != s.cur
}

// release records that the connection or the dial using a secret ended,
// and wipes that secret when Rotate replaced it.
func (s *credSlot) release() {
	s.mu.Lock()
	used := s.used
	s.used = nil
	replaced := used != nil && used != s.cur
	s.mu.Unlock()
	if replaced {
		used.Wipe()
	}
}

// rotate makes next current and returns the old secret when nothing uses
// it (the caller wipes it), nil when a connection or dial still does
// (release wipes it). next equal to the current secret is refused.
func (s *credSlot) rotate(next *credential.Secret) (*credential.Secret, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if next == s.cur {
		return nil, &CredentialsError{Violations: []Violation{{Path: "credential.secret", Rule: RuleCredentialSecret}}}
	}
	old := s.cur
	s.cur = next
	if old == s.used {
		return nil, nil
	}
	return old, nil
}

// close makes later rotations fail with ErrClosed.
func (s *credSlot) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
}
