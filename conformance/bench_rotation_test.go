package conformance_test

import (
	"fmt"
	"testing"

	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/tools/broker"
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
			o := newBusyOwner(b)
			files := rotationUsers(b, o.br, o.cfg)
			host := newTrigHost()
			host.activated = make(chan struct{}, b.N+1)
			o.run(b, host, func(i int) {
				if every == 0 || i == 0 || i%every != 0 {
					return
				}
				secret, err := credential.ParseCreds(files[(i/every)%2])
				if err != nil {
					b.Fatal(err)
				}
				c := o.creds[0]
				c.Secret = secret
				if err := o.trig.Rotate(c); err != nil {
					b.Fatalf("Rotate: %v", err)
				}
			})
			b.ReportMetric(float64(o.mon.Snapshot().Dials)/float64(b.N), "dials/op")
		})
	}
}

// rotationUsers mints two more runtime users of the tenant with the
// binding's grants and returns their credentials files.
func rotationUsers(b *testing.B, br *broker.Broker, cfg trigger.Config) [2][]byte {
	b.Helper()
	bc := cfg.Bindings[0]
	perms, err := jspull.DerivePermissions(trigger.InboxPrefix(trigTenant), jspull.Binding{
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
