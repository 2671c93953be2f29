package conformance_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/trigger"
)

// reinstall replaces the installation trigInstall made, for a case that
// needs pool limits or credentials of its own: it closes the current
// installation and installs the case's configuration with creds on pools
// at epoch, expecting the pools' registry at expected. The ledger, the host
// and the broker's streams and consumers stay; e.pools, e.trig, e.mon and
// e.creds become the new ones.
func (e *trigEnv) reinstall(t *testing.T, pools *trigger.Pools, epoch, expected uint64, creds []trigger.Credential) {
	t.Helper()
	e.trig.Close()
	trig, mon, err := trigger.Install(pools, trigger.Installation{LogicalID: "conformance", Epoch: epoch, ExpectedEpoch: expected, Config: e.cfg, Credentials: creds})
	if err != nil {
		t.Fatalf("Install at epoch %d: %v", epoch, err)
	}
	t.Cleanup(trig.Close)
	e.pools, e.trig, e.mon, e.creds = pools, trig, mon, creds
}

// faultPools makes pools with lim, closed when the case ends.
func faultPools(t *testing.T, lim trigger.PoolLimits) *trigger.Pools {
	t.Helper()
	pools, err := trigger.NewPools(trigger.PoolConfig{Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pools.Close)
	return pools
}

// runtimeCredential mints a runtime user of tenant k with the permissions
// derived from its bindings, as trigInstall does, and spec's other fields
// (an expiry), and returns it as the tenant's credential.
func (e *trigEnv) runtimeCredential(t *testing.T, k int, spec broker.UserSpec) trigger.Credential {
	t.Helper()
	_, c := e.runtimeUser(t, k, spec)
	return c
}

// runtimeUser is runtimeCredential that also returns the broker's user.
func (e *trigEnv) runtimeUser(t *testing.T, k int, spec broker.UserSpec) (broker.Creds, trigger.Credential) {
	t.Helper()
	id := e.tenants[k].id
	var binds []jspull.Binding
	for _, bc := range e.cfg.Bindings {
		if bc.Tenant != id {
			continue
		}
		binds = append(binds, jspull.Binding{
			Stream: bc.Stream, Consumer: bc.Consumer, FilterSubject: bc.FilterSubject,
			PayloadCeiling: bc.MaxPayloadBytes, AckWait: bc.AckWait(), MaxDeliver: bc.MaxDeliver,
		})
	}
	perms, err := jspull.DerivePermissions(trigger.InboxPrefix(id), binds...)
	if err != nil {
		t.Fatal(err)
	}
	spec.PubAllow, spec.SubAllow = perms.Publish, perms.Subscribe
	uc, err := e.b.User(id, spec)
	if err != nil {
		t.Fatal(err)
	}
	file, err := uc.File()
	if err != nil {
		t.Fatal(err)
	}
	secret, err := credential.ParseCreds(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(secret.Wipe)
	tc := e.cfg.Tenants[k]
	return uc, trigger.Credential{Tenant: id, ProviderID: tc.ProviderID, Destination: tc.Destination, Secret: secret}
}

// bindingID returns the ID of binding i of tenant k.
func (e *trigEnv) bindingID(k, i int) string { return e.cfg.Bindings[e.bindingIndex(k, i)].ID }

// callsOf returns the calls so far of binding id's events, in call order.
func (e *trigEnv) callsOf(id string) []trigCall {
	var out []trigCall
	for _, c := range e.callLog() {
		if c.Binding == id {
			out = append(out, c)
		}
	}
	return out
}

// publishBurst publishes n argOK events to tenant k's bindings in turn
// and waits for the function to run on each; it returns the time from the
// first publish to the last of those runs.
func (e *trigEnv) publishBurst(t *testing.T, k, n int) time.Duration {
	t.Helper()
	per := 0
	for _, bc := range e.cfg.Bindings {
		if bc.Tenant == e.tenants[k].id {
			per++
		}
	}
	start := time.Now()
	want := make(map[ledger.Key]bool, n)
	for j := range n {
		i := j % per
		want[ledger.Key{Binding: e.bindingID(k, i), Seq: e.publish(k, i, argOK)}] = true
	}
	var last time.Time
	trigEventually(t, fmt.Sprintf("%d events of tenant %s run", n, e.tenants[k].id), faultSettle, func() bool {
		seen := 0
		for _, c := range e.callLog() {
			if want[ledger.Key{Binding: c.Binding, Seq: c.StreamSeq}] && c.Delivered == 1 {
				seen++
				if c.At.After(last) {
					last = c.At
				}
			}
		}
		return seen == n
	})
	return last.Sub(start)
}

// waitRan waits for the function to have run on each of binding id's
// events seqs.
func (e *trigEnv) waitRan(t *testing.T, id string, seqs ...uint64) {
	t.Helper()
	trigEventually(t, fmt.Sprintf("binding %s ran %v", id, seqs), faultSettle, func() bool {
		for _, seq := range seqs {
			if !slices.ContainsFunc(e.led.Deliveries(ledger.Key{Binding: id, Seq: seq}), func(d ledger.Delivery) bool { return d.Ran }) {
				return false
			}
		}
		return true
	})
}

// settleBindings waits, within faultSettle, until the consumers of the
// given bindings are settled (ledger.ConsumerView.Settled),
// for a case where other bindings are expected to stay unsettled; it
// returns how long that took.
func (e *trigEnv) settleBindings(t *testing.T, ids ...string) time.Duration {
	t.Helper()
	start := time.Now()
	trigEventually(t, fmt.Sprintf("consumers of %v settled", ids), faultSettle, func() bool {
		for _, id := range ids {
			cv, err := e.consumerView(t, t.Context(), id)
			if err != nil || !cv.Settled() {
				return false
			}
		}
		return true
	})
	return time.Since(start)
}

// consumerViews reads every binding's consumer as its administrator.
func (e *trigEnv) consumerViews(t *testing.T) []ledger.ConsumerView {
	t.Helper()
	var out []ledger.ConsumerView
	for _, bc := range e.cfg.Bindings {
		cv, err := e.consumerView(t, t.Context(), bc.ID)
		if err != nil {
			t.Fatalf("consumer of %s: %v", bc.ID, err)
		}
		out = append(out, cv)
	}
	return out
}

// faultHost is the suite's host that also notes when each step that
// reported an error class reported it.
type faultHost struct {
	*trigHookHost
	mu     sync.Mutex
	failed map[trigger.ErrorClass][]time.Time
}

func (h *faultHost) ObserveStep(r trigger.StepReport) {
	if r.Error != 0 {
		h.mu.Lock()
		if h.failed == nil {
			h.failed = map[trigger.ErrorClass][]time.Time{}
		}
		h.failed[r.Error] = append(h.failed[r.Error], time.Now())
		h.mu.Unlock()
	}
	h.trigHookHost.ObserveStep(r)
}

// failures returns the times of the steps that reported class c so far.
func (h *faultHost) failures(c trigger.ErrorClass) []time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.failed[c])
}
