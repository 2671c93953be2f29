package conformance_test

import (
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/trigger"
)

// busyOwner is the rig of the busy-owner benchmarks: the pinned broker
// with one tenant and one binding, the runtime installed on pools of its
// own, and b.N events published before the clock starts.
type busyOwner struct {
	br    *broker.Broker
	cfg   trigger.Config
	creds []trigger.Credential
	trig  *trigger.Triggers
	mon   *trigger.Monitor
}

// newBusyOwner starts the rig; the broker, pools and installation end
// with b.
func newBusyOwner(b *testing.B) *busyOwner {
	b.Helper()
	br := brokertest.Start(b, broker.Options{Tenants: []string{trigTenant}})
	adm, cfg, creds := trigSetup(b, br, 1)
	pools, err := trigger.NewPools(trigger.PoolConfig{Limits: trigger.DefaultPoolLimits()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pools.Close)
	trig, mon, err := trigger.Install(pools, trigger.Installation{LogicalID: "bench", Epoch: 1, Config: cfg, Credentials: creds})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(trig.Close)
	for range b.N {
		adm.publish("trig.in.0", []byte(`["ok"]`))
	}
	return &busyOwner{br: br, cfg: cfg, creds: creds, trig: trig, mon: mon}
}

// run makes b.N explicit Steps with host, each a delivery that succeeded
// and whose acknowledgement has a verified receipt, calling before(i)
// first when set; it reports msgs/s around the steps alone and checks
// that the monitor counted b.N acknowledgements.
func (o *busyOwner) run(b *testing.B, host trigger.Host, before func(i int)) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if before != nil {
			before(i)
		}
		rep, err := o.trig.Step(b.Context(), host)
		if err != nil {
			b.Fatal(err)
		}
		if rep.Result != trigger.ResultDelivered || rep.Outcome != trigger.OutcomeSuccess || rep.Ack != pull.AckVerified {
			b.Fatalf("step %d: %+v", i, rep)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
	if got := o.mon.Snapshot().Totals.Acked; got != uint64(b.N) {
		b.Fatalf("acked %d, want %d", got, b.N)
	}
	o.trig.CloseIdle()
}
