package conformance_test

import (
	"errors"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/testpki"
	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/trigger"
)

// TestTriggerClientCertificates runs the runtime against a broker that
// requires client certificates (verify: true, beside the operator's user
// JWTs). A tenant whose credential carries a certificate of the broker's
// client CA has its event delivered and acknowledged. Then the tenant's
// credential is rotated, in turn, to one with no certificate, one from
// another CA and an expired one: the broker refuses each at the TLS step,
// which conn.Dial reports as a *HandshakeError at StepTLS matching
// ErrClientCertificate and the runtime counts as a DialTLS failure (the
// expired one the runtime refuses before dialling, as any expired
// credential). A last rotation to a new good certificate redials and
// delivers the next event.
func TestTriggerClientCertificates(t *testing.T) {
	t.Parallel()
	const tenant = "mtls"
	b := brokertest.Start(t, broker.Options{Tenants: []string{tenant}, ClientCertificates: true})
	e := trigInstall(t, b, trigSpec{tenants: []string{tenant}, perTenant: []int{1}, clientCerts: true})

	deliver := func(what string) {
		t.Helper()
		seq := e.publish(0, 0, argOK)
		// Polled: a refused dial before it leaves the tenant in its dial
		// backoff for up to 50 ms.
		var r trigger.StepReport
		trigEventually(t, what, trigWait, func() bool {
			r = e.step(t)
			return r.Result == trigger.ResultDelivered
		})
		if r.StreamSeq != seq || r.Ack != pull.AckVerified {
			t.Fatalf("%s: delivered %d (ack %v), want %d acknowledged", what, r.StreamSeq, r.Ack, seq)
		}
		if c := e.nextCall(t); c.StreamSeq != seq || c.Arg != argOK {
			t.Fatalf("%s: function saw %+v, want stream sequence %d", what, c, seq)
		}
	}
	deliver("good certificate")

	now := time.Now()
	other, err := testpki.NewCA("another CA", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		// cert returns the certificate and key, nil for none.
		cert func() ([]byte, []byte, error)
		// runtime is what the runtime's step reports.
		runtime trigger.ErrorClass
	}{
		{"none", func() ([]byte, []byte, error) { return nil, nil, nil }, trigger.ClassDial},
		{"another CA", func() ([]byte, []byte, error) {
			return other.IssueClient(tenant, now.Add(-time.Minute), now.Add(time.Hour))
		}, trigger.ClassDial},
		{"expired", func() ([]byte, []byte, error) {
			return b.IssueClientCert(tenant, now.Add(-2*time.Hour), now.Add(-time.Hour))
		}, trigger.ClassCredential},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cred := e.runtimeCredential(t, 0, broker.UserSpec{Name: "trigger-" + tc.name})
			certPEM, keyPEM, err := tc.cert()
			if err != nil {
				t.Fatal(err)
			}
			if certPEM != nil {
				if err := cred.Secret.AddClientCertificate(certPEM, keyPEM); err != nil {
					t.Fatal(err)
				}
			}

			_, err = pullDialSecret(t, b, cred.Secret)
			var he *conn.HandshakeError
			if !errors.As(err, &he) || he.Step != conn.StepTLS || !errors.Is(err, conn.ErrClientCertificate) {
				t.Fatalf("Dial error = %v, want ErrClientCertificate at StepTLS", err)
			}

			before := e.mon.Snapshot().Totals.DialFailure(trigger.DialTLS)
			if err := e.trig.Rotate(cred); err != nil {
				t.Fatalf("Rotate: %v", err)
			}
			var r trigger.StepReport
			trigEventually(t, "a step that reaches the credential or the dial", trigWait, func() bool {
				r = e.step(t)
				return r.Error == trigger.ClassDial || r.Error == trigger.ClassCredential
			})
			if r.Error != tc.runtime {
				t.Fatalf("step error %v (dial %v), want %v", r.Error, r.Dial, tc.runtime)
			}
			after := e.mon.Snapshot().Totals.DialFailure(trigger.DialTLS)
			if tc.runtime == trigger.ClassDial && (r.Dial != trigger.DialTLS || after != before+1) {
				t.Errorf("dial failure %v, DialTLS count %d -> %d, want tls counted once", r.Dial, before, after)
			}
			if tc.runtime == trigger.ClassCredential && (after != before || !errors.Is(cred.Secret.CheckCurrent(time.Now()), credential.ErrCertificateExpired)) {
				t.Errorf("expired certificate: DialTLS count %d -> %d, want no dial", before, after)
			}
		})
	}

	good := e.runtimeCredential(t, 0, broker.UserSpec{Name: "trigger-renewed"})
	trigAddCert(t, b, good.Secret, tenant)
	if err := e.trig.Rotate(good); err != nil {
		t.Fatalf("Rotate: %v", err)
	}
	deliver("renewed certificate")
	if s := e.mon.Snapshot(); s.Rotations != 4 {
		t.Errorf("%d rotations counted, want 4", s.Rotations)
	}
}
