package soak

import (
	"errors"
	"strings"
	"testing"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/tools/faultproxy"
)

// TestHealed: the check before settling tells the harness's leftovers
// apart: a paused broker, a link holding a fault, a broker not running;
// nothing once every fault is gone.
func TestHealed(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{"t0"}})
	p, err := faultproxy.Start(b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	check := func(stage, want string) {
		t.Helper()
		err := healed(b, p)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: healed = %v, want nil", stage, err)
		case want != "" && (!errors.Is(err, ErrHarness) || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: healed = %v, want ErrHarness naming %q", stage, err, want)
		}
	}
	check("every fault healed", "")
	if err := b.Pause(); err != nil {
		t.Fatal(err)
	}
	check("paused", "the broker is paused")
	if err := b.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := p.Set(faultproxy.Up, faultproxy.Fault{Kind: faultproxy.Blackhole}); err != nil {
		t.Fatal(err)
	}
	check("blackhole", "holds")
	if err := p.Clear(faultproxy.Up); err != nil {
		t.Fatal(err)
	}
	check("cleared", "")
	if err := b.Kill(); err != nil {
		t.Fatal(err)
	}
	check("killed", "the broker is not running")
}
