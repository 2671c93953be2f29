package trigger

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/pull"
)

// TestConnConfig: a tenant's connection gets its exact destination, its own
// credential, the installation's read caps and a payload cap that holds
// both the largest binding's payload and a consumer-info reply.
// Regression: the read caps of the configuration never reached the
// connection, which always read with 8 KiB caps.
func TestConnConfig(t *testing.T) {
	cfg := rtConfig(t, 2, 1)
	cfg.MaxControlLineBytes = 2048
	cfg.MaxHeaderBytes = 1536
	cfg.Bindings[1].MaxPayloadBytes = MaxPayloadBytes
	r := newRig(t, cfg, PoolLimits{})

	type view struct {
		Addr, ServerName, Name                string
		MaxPayload, MaxControlLine, MaxHeader int
		SameCredential, AllowNonPublic        bool
	}
	for i, tn := range cfg.Tenants {
		ts := &r.trig.tenants[i]
		got := r.trig.connConfig(ts)
		want := view{
			Addr: tn.Destination.Address.String(), ServerName: tn.Destination.ServerName, Name: ClientName,
			MaxPayload:     max(pull.MaxInfoSize, maxCeiling(cfg, tn.ID)),
			MaxControlLine: 2048, MaxHeader: 1536,
			SameCredential: true, AllowNonPublic: tn.Destination.AllowNonPublic,
		}
		seen := view{
			Addr: got.Addr.String(), ServerName: got.ServerName, Name: got.Name,
			MaxPayload: got.MaxPayload, MaxControlLine: got.MaxControlLine, MaxHeader: got.MaxHeader,
			SameCredential: got.Credential == r.creds[i].Secret,
			AllowNonPublic: got.AllowNonPublic.IsValid() && got.AllowNonPublic == tn.Destination.Address.Addr(),
		}
		if diff := cmp.Diff(want, seen); diff != "" {
			t.Errorf("tenant %s: connection config (-want +got):\n%s", tn.ID, diff)
		}
	}
}

func maxCeiling(cfg Config, tenant string) int {
	m := 0
	for _, b := range cfg.Bindings {
		if b.Tenant == tenant {
			m = max(m, b.MaxPayloadBytes)
		}
	}
	return m
}
