package conformance_test

import (
	"testing"

	"github.com/latent-systems/latent-nats/trigger"
)

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
