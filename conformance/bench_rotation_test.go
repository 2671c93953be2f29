package conformance_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/trigger"
)

// BenchmarkTriggerDeliveryRotation is the busy owner (one binding, one
// Step per message) with the tenant's credential rotated every `every`
// steps (0: never), alternating between two users of the tenant with the
// same grants: each rotation makes the next step replace the connection
// (a new TLS dial and CONNECT), so msgs/s shows what rotation costs
// throughput. dials/op counts the runtime's dials per message.
func BenchmarkTriggerDeliveryRotation(b *testing.B) {
	for _, every := range []int{0, 100, 10} {
		b.Run(fmt.Sprintf("every=%d", every), func(b *testing.B) {
			br := brokertest.Start(b, broker.Options{Tenants: []string{trigTenant}})
			adm, cfg, creds := trigSetup(b, br, 1)
			files := rotationUsers(b, br, cfg)
			pools, err := trigger.NewPools(trigger.PoolConfig{Limits: trigger.DefaultPoolLimits()})
			if err != nil {
				b.Fatal(err)
			}
			defer pools.Close()
			trig, mon, err := trigger.Install(pools, "bench", 1, 0, cfg, creds)
			if err != nil {
				b.Fatal(err)
			}
			defer trig.Close()
			for range b.N {
				adm.publish("trig.in.0", []byte(`["ok"]`))
			}
			host := newTrigHost()
			host.activated = make(chan struct{}, b.N+1)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if every > 0 && i > 0 && i%every == 0 {
					secret, err := credential.ParseCreds(files[(i/every)%2])
					if err != nil {
						b.Fatal(err)
					}
					c := creds[0]
					c.Secret = secret
					if err := trig.Rotate(c); err != nil {
						b.Fatalf("Rotate: %v", err)
					}
				}
				rep, err := trig.Step(b.Context(), host)
				if err != nil {
					b.Fatal(err)
				}
				if rep.Result != trigger.ResultDelivered || rep.Ack != trigger.AckVerified {
					b.Fatalf("step %d: %+v", i, rep)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
			s := mon.Snapshot()
			if s.Totals.Acked != uint64(b.N) {
				b.Fatalf("acked %d, want %d", s.Totals.Acked, b.N)
			}
			b.ReportMetric(float64(s.Dials)/float64(b.N), "dials/op")
			trig.CloseIdle()
		})
	}
}

// rotationUsers mints two more runtime users of the tenant with the
// binding's grants and returns their credentials files.
func rotationUsers(b *testing.B, br *broker.Broker, cfg trigger.Config) [2][]byte {
	b.Helper()
	bc := cfg.Bindings[0]
	perms, err := pull.DerivePermissions(trigger.InboxPrefix(trigTenant), pull.Binding{
		Stream: bc.Stream, Consumer: bc.Consumer, FilterSubject: bc.FilterSubject,
		PayloadCeiling: bc.MaxPayloadBytes, AckWait: bc.AckWait(), MaxDeliver: bc.MaxDeliver,
	})
	if err != nil {
		b.Fatal(err)
	}
	var out [2][]byte
	for i := range out {
		u, err := br.User(trigTenant, broker.UserSpec{Name: fmt.Sprintf("rotated-%d", i), PubAllow: perms.Publish, SubAllow: perms.Subscribe})
		if err != nil {
			b.Fatal(err)
		}
		if out[i], err = u.File(); err != nil {
			b.Fatal(err)
		}
	}
	return out
}
