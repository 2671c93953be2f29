package conformance_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/clustertest"
	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/trigger"
)

// rotTenantCounts fails the case unless every binding of tenant k
// delivered and acknowledged everything it pulled, with no skip, failure,
// lost connection, failed dial or credential refusal.
func rotTenantCounts(t *testing.T, e *trigEnv, s trigger.Snapshot, k int) {
	t.Helper()
	for i, bc := range e.cfg.Bindings {
		if bc.Tenant != e.tenants[k].id {
			continue
		}
		c := s.Bindings[i]
		if c.Skipped != 0 || c.Failed != 0 || c.Uncertain != 0 || c.Unacknowledged != 0 || c.Acked != c.Delivered ||
			c.Error(trigger.ClassConnection) != 0 || c.Error(trigger.ClassDial) != 0 || c.Error(trigger.ClassCredential) != 0 {
			t.Errorf("binding %s: %+v, want every delivery acknowledged and no failed visit", bc.ID, c)
		}
	}
}

// rotDial dials b as the runtime user creds of tenant, with the
// tenant's inbox prefix (the only one its permissions allow).
func rotDial(t *testing.T, b *broker.Broker, tenant string, creds broker.Creds) (*conn.Conn, error) {
	t.Helper()
	file, err := creds.File()
	if err != nil {
		t.Fatal(err)
	}
	secret, err := credential.ParseCreds(file)
	clear(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(secret.Wipe)
	ctx, cancel := context.WithTimeout(t.Context(), pullTimeout)
	defer cancel()
	c, err := conn.Dial(ctx, conn.Config{
		Addr:           b.Addr(),
		AllowNonPublic: b.Addr().Addr(),
		ServerName:     b.ServerName(),
		Roots:          b.RootCAs(),
		Credential:     secret,
		Name:           "rotation-witness",
		InboxPrefix:    trigger.InboxPrefix(tenant),
	})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, nil
}

// publishAll publishes n argOK events to tenant k's bindings in turn,
// calling mid (if set) after the first half, and returns them by binding.
func (e *trigEnv) publishAll(k, per, n int, mid func()) map[string][]uint64 {
	out := map[string][]uint64{}
	for j := range n {
		if j == n/2 && mid != nil {
			mid()
		}
		i := j % per
		id := e.bindingID(k, i)
		out[id] = append(out[id], e.publish(k, i, argOK))
	}
	return out
}

// TestFaultCredentialRotation replaces tenant A's broker user while A's
// events flow, then revokes the old user in A's account JWT. The rotation
// (Triggers.Rotate from the test's goroutine while Run runs) lets the
// pooled connection finish its step; A's next visit closes it and dials
// once with the new user, and the old secret is wiped. The revocation
// then makes the broker refuse and drop the old user (a witness connection
// of it is closed) while the runtime, already on the new user, loses
// nothing: no connection lost, no failed dial, no credential skip, one
// redial in all. Tenant B is untouched. Ledger: nothing lost, no
// re-execution.
func TestFaultCredentialRotation(t *testing.T) {
	t.Parallel()
	const burst = 40 // A's events per phase
	e := trigStart(t, trigSpec{tenants: []string{"rot-a", "rot-b"}, perTenant: []int{2, 1}})
	oldUser, oldCred := e.runtimeUser(t, 0, broker.UserSpec{Name: "trigger-old"})
	creds := slices.Clone(e.creds)
	creds[0] = oldCred
	e.reinstall(t, e.pools, 2, 1, creds)
	sysCreds, err := e.b.System()
	if err != nil {
		t.Fatal(err)
	}
	req := clustertest.NodeRequester(e.b, sysCreds)
	sys := newTrigSys(t, e.b)
	health := ledger.NewHealth(e.pools)
	ta := e.tenant(0)
	aIDs := []string{e.bindingID(0, 0), e.bindingID(0, 1)}
	bIDs := []string{e.bindingID(1, 0)}

	run := e.run(t)
	e.publishBurst(t, 0, burst)
	e.publishBurst(t, 1, burst/4)
	if s := e.mon.Snapshot(); s.Dials != 2 {
		t.Fatalf("dials %d before the rotation, want one per tenant", s.Dials)
	}
	// A witness connection of the old user, for the revocation.
	witness, err := rotDial(t, e.b, ta.id, oldUser)
	if err != nil {
		t.Fatalf("the old user's witness connection: %v", err)
	}

	// The rotation, half-way through a burst of A's events.
	newUser, newCred := e.runtimeUser(t, 0, broker.UserSpec{Name: "trigger-new"})
	var rotatedAt time.Time
	during := e.publishAll(0, 2, burst, func() {
		if err := e.trig.Rotate(newCred); err != nil {
			t.Fatalf("Rotate: %v", err)
		}
		rotatedAt = time.Now()
	})
	for id, seqs := range during {
		e.waitRan(t, id, seqs...)
	}
	trigEventually(t, "A redialled with the new user", trigWait, func() bool {
		s := e.mon.Snapshot()
		return s.Dials == 3 && s.Replaced == 1 && oldCred.Secret.Wiped()
	})
	redialled := time.Since(rotatedAt)
	if n := len(sys.runtimeConns(ta.account)); n != 1 {
		t.Errorf("A has %d runtime connections after the rotation, want 1", n)
	}

	// The revocation of the old user in A's account JWT.
	ctx, cancel := context.WithTimeout(t.Context(), trigWait)
	defer cancel()
	if err := e.b.RevokeUser(ctx, req, ta.id, oldUser.User, time.Now()); err != nil {
		t.Fatalf("RevokeUser: %v", err)
	}
	trigEventually(t, "the broker dropped the old user's witness", trigWait, func() bool {
		cctx, ccancel := context.WithTimeout(t.Context(), pullTimeout)
		defer ccancel()
		return witness.Check(cctx) != nil && witness.Closed()
	})
	if _, err := rotDial(t, e.b, ta.id, oldUser); err == nil {
		t.Error("the revoked user connected")
	}
	if c, err := rotDial(t, e.b, ta.id, newUser); err != nil {
		t.Errorf("the new user: %v", err)
	} else {
		_ = c.Close()
	}
	_ = witness.Close()

	// After the revocation both tenants go on.
	e.publishBurst(t, 0, burst)
	e.publishBurst(t, 1, burst/4)
	settledA := e.settleBindings(t, aIDs...)
	e.settleBindings(t, bIDs...)
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}

	s := e.mon.Snapshot()
	if s.Rotations != 1 || s.Dials != 3 || s.Replaced != 1 {
		t.Errorf("rotations %d, dials %d, replaced %d: want 1, 3 (one per tenant and one redial), 1", s.Rotations, s.Dials, s.Replaced)
	}
	rotTenantCounts(t, e, s, 0)
	rotTenantCounts(t, e, s, 1)
	if newCred.Secret.Wiped() {
		t.Error("the runtime wiped the current secret")
	}

	v, _ := e.settle(t)
	checkVerdict(t, v, true)
	if len(v.Reexecutions) != 0 || len(v.Foreign) != 0 || v.BadReports != 0 {
		t.Errorf("verdict %s", v)
	}
	t.Logf("figures: %d events of A, %d of B; A redialled %v after the rotation; A settled %v after its last burst; %d visits",
		3*burst, burst/2, redialled, settledA, s.Steps)
	t.Logf("verdict: %s", v)

	hctx, hcancel := context.WithTimeout(t.Context(), trigWait)
	defer hcancel()
	if err := health.Wait(hctx, faultTick); err != nil {
		t.Errorf("after the scenario: %v", err)
	}
}

// TestFaultCredentialRotateBeforeExpiry rotates tenant A's user JWT a few
// seconds before it expires, to a new user, while A's events flow, and
// goes on past the old JWT's expiry. A's next visit dials with the new
// user before the expiry, so the broker's expiry of the old JWT closes
// nothing of the runtime's and no visit of A fails or is skipped: every
// event runs once and is acknowledged. Ledger: nothing lost, no
// re-execution.
func TestFaultCredentialRotateBeforeExpiry(t *testing.T) {
	t.Parallel()
	const burst = 10
	e := trigStart(t, trigSpec{tenants: []string{"rexp-a", "rexp-b"}, perTenant: []int{1, 1}})
	creds := slices.Clone(e.creds)
	creds[0] = e.runtimeCredential(t, 0, broker.UserSpec{Name: "trigger-old", Expires: time.Now().Add(6 * time.Second)})
	old := creds[0].Secret
	expires := old.Expires()
	e.reinstall(t, e.pools, 2, 1, creds)
	sys := newTrigSys(t, e.b)
	health := ledger.NewHealth(e.pools)
	ta := e.tenant(0)

	run := e.run(t)
	e.publishBurst(t, 0, burst)
	e.publishBurst(t, 1, burst)
	next := e.runtimeCredential(t, 0, broker.UserSpec{Name: "trigger-new", Expires: time.Now().Add(time.Hour)})
	var rotatedLeft time.Duration
	during := e.publishAll(0, 1, burst, func() {
		if err := e.trig.Rotate(next); err != nil {
			t.Fatalf("Rotate: %v", err)
		}
		rotatedLeft = time.Until(expires)
	})
	if rotatedLeft < 2*time.Second {
		t.Fatalf("rotated %v before the expiry, want the redial well before it", rotatedLeft)
	}
	for id, seqs := range during {
		e.waitRan(t, id, seqs...)
	}
	trigEventually(t, "A redialled with the new user", time.Until(expires), func() bool {
		s := e.mon.Snapshot()
		return s.Dials == 3 && s.Replaced == 1 && old.Wiped()
	})
	redialledLeft := time.Until(expires)

	// Events across the old JWT's expiry and past the second the broker
	// may take to act on it.
	bursts := 0
	for time.Now().Before(expires.Add(2 * time.Second)) {
		e.publishBurst(t, 0, burst)
		e.publishBurst(t, 1, 2)
		bursts++
	}
	if n := len(sys.runtimeConns(ta.account)); n != 1 {
		t.Errorf("A has %d runtime connections after the old JWT's expiry, want its one", n)
	}
	e.settleBindings(t, e.bindingID(0, 0))
	e.settleBindings(t, e.bindingID(1, 0))
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}

	s := e.mon.Snapshot()
	if s.Rotations != 1 || s.Dials != 3 || s.Replaced != 1 {
		t.Errorf("rotations %d, dials %d, replaced %d: want 1, 3 (one per tenant and one redial), 1", s.Rotations, s.Dials, s.Replaced)
	}
	rotTenantCounts(t, e, s, 0)
	rotTenantCounts(t, e, s, 1)
	if _, ok := e.mon.LastSkip(); ok {
		t.Error("a visit was skipped")
	}

	v, _ := e.settle(t)
	checkVerdict(t, v, true)
	if len(v.Reexecutions) != 0 || len(v.Foreign) != 0 || v.BadReports != 0 {
		t.Errorf("verdict %s", v)
	}
	t.Logf("figures: rotated %v before the expiry, redialled %v before it; %d bursts of %d events of A across it; %d visits, 0 failed",
		rotatedLeft, redialledLeft, bursts, burst, s.Steps)
	t.Logf("verdict: %s", v)

	hctx, hcancel := context.WithTimeout(t.Context(), trigWait)
	defer hcancel()
	if err := health.Wait(hctx, faultTick); err != nil {
		t.Errorf("after the scenario: %v", err)
	}
}
