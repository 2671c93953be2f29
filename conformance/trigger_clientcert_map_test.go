package conformance_test

import (
	"bufio"
	"context"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/testpki"
	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// mapServerName is the server certificate's name of the verify_and_map
// broker.
const mapServerName = "mtls-map.latent.test"

// TestTriggerClientCertificateAlone runs the runtime with a credential
// that is a client certificate alone (credential.FromClientCertificate)
// against the pinned nats-server configured with verify_and_map and no
// operator: the broker maps the certificate's subject to a user, CONNECT
// carries no credential field, and an event is delivered and
// acknowledged. tools/broker always runs operator mode, where the server
// refuses verify_and_map, so this case writes its own configuration.
func TestTriggerClientCertificateAlone(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	bin, err := broker.ServerBinary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	now := time.Now()
	serverCA, err := testpki.NewCA("map server CA", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	clientCA, err := testpki.NewCA("map client CA", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	srvCert, srvKey, err := serverCA.IssueServer(mapServerName, now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	conf := strings.Join([]string{
		`host: "127.0.0.1"`,
		`port: -1`,
		`tls {`,
		`  cert_file: "` + write("server.crt", srvCert) + `"`,
		`  key_file: "` + write("server.key", srvKey) + `"`,
		`  ca_file: "` + write("client-ca.pem", clientCA.PEM) + `"`,
		`  verify_and_map: true`,
		`  handshake_first: true`,
		`}`,
		`jetstream { store_dir: "` + filepath.Join(dir, "js") + `", max_memory_store: 67108864, max_file_store: 67108864 }`,
		`authorization { users = [ {user: "CN=acme-admin"}, {user: "CN=acme-runtime"} ] }`,
	}, "\n")
	addr := mapStart(t, bin, write("nats.conf", []byte(conf)))

	secretOf := func(cn string) *credential.Secret {
		certPEM, keyPEM, err := clientCA.IssueClient(cn, now.Add(-time.Minute), now.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		s, err := credential.FromClientCertificate(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Wipe)
		return s
	}
	dest := trigger.Destination{Address: addr, ServerName: mapServerName, RootCAsPEM: string(serverCA.PEM), AllowNonPublic: true}
	roots, err := dest.CertPool()
	if err != nil {
		t.Fatal(err)
	}
	dctx, dcancel := context.WithTimeout(ctx, pullTimeout)
	defer dcancel()
	ac, err := conn.Dial(dctx, conn.Config{Addr: addr, AllowNonPublic: addr.Addr(), ServerName: mapServerName, Roots: roots, Credential: secretOf("acme-admin")})
	if err != nil {
		t.Fatalf("admin dial: %v", err)
	}
	t.Cleanup(func() { _ = ac.Close() })
	adm := &trigAdmin{t: t, c: ac}

	// The certificate is the credential: one the broker maps to no user
	// passes TLS and is refused at CONNECT.
	sctx, scancel := context.WithTimeout(ctx, pullTimeout)
	defer scancel()
	_, err = conn.Dial(sctx, conn.Config{Addr: addr, AllowNonPublic: addr.Addr(), ServerName: mapServerName, Roots: roots, Credential: secretOf("stranger")})
	var se *conn.ServerError
	var he *conn.HandshakeError
	if !errors.As(err, &he) || he.Step != conn.StepConnect || !errors.As(err, &se) || se.Kind != conn.KindAuthorization {
		t.Fatalf("dial with an unmapped certificate: %v, want an authorization violation at connect", err)
	}

	spec := trigSpec{tenants: []string{"acme"}, perTenant: []int{1}}
	bc := spec.bindingOf(0, 0)
	adm.api("$JS.API.STREAM.CREATE."+trigStream, map[string]any{"name": trigStream, "subjects": []string{bc.FilterSubject}, "storage": "memory"})
	pb := trigPullBinding(bc)
	adm.api("$JS.API.CONSUMER.CREATE."+trigStream+"."+pb.Consumer, map[string]any{
		"stream_name": trigStream, "config": profileConfig(pb), "action": "create",
	})
	adm.publish(bc.FilterSubject, trigPayload(argOK))

	cfg := trigger.Config{
		Profile: trigger.ProfileName, PollIntervalMS: trigger.MinPollIntervalMS,
		MaxControlLineBytes: 4096, MaxHeaderBytes: 4096,
		Tenants:  []trigger.Tenant{{ID: "acme", ProviderID: "local", Destination: dest}},
		Bindings: []trigger.Binding{bc},
	}
	pools, err := trigger.NewPools(trigger.PoolConfig{Limits: trigger.DefaultPoolLimits()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pools.Close)
	trig, mon, err := trigger.Install(pools, trigger.Installation{LogicalID: "map", Epoch: 1, Config: cfg, Credentials: []trigger.Credential{{
		Tenant: "acme", ProviderID: "local", Destination: dest, Secret: secretOf("acme-runtime"),
	}}})

	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(trig.Close)
	host, err := refhost.New(refhost.Config{MaxActivations: 1, MaxInputBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan string, 1)
	err = host.Register(refhost.Function{
		Service: trigService, Revision: "r1", Contract: trigContract, Name: trigFunction,
		Params: []refhost.Type{refhost.String()},
		Func: func(_ context.Context, c refhost.Call) error {
			ran <- c.Args[0].(string)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Publish(refhost.PublicationKey{Service: trigService, Contract: trigContract, Function: trigFunction}); err != nil {
		t.Fatal(err)
	}
	if _, err := host.SetRoute(trigService, "", "r1"); err != nil {
		t.Fatal(err)
	}

	var r trigger.StepReport
	trigEventually(t, "the event delivered", trigWait, func() bool {
		if r, err = trig.Step(ctx, host); err != nil {
			t.Fatalf("Step: %v", err)
		}
		return r.Result == trigger.ResultDelivered
	})
	if r.StreamSeq != 1 || r.Ack != pull.AckVerified || <-ran != argOK {
		t.Errorf("delivered seq %d ack %v, want 1 verified", r.StreamSeq, r.Ack)
	}
	if s := mon.Snapshot(); s.Totals.Acked != 1 || s.Totals.DialFailure(trigger.DialTLS) != 0 {
		t.Errorf("acked %d, tls dial failures %d", s.Totals.Acked, s.Totals.DialFailure(trigger.DialTLS))
	}
}

// mapStart runs bin with the configuration at conf until the test ends and
// returns the client address it listens on, read from its log.
func mapStart(t *testing.T, bin, conf string) netip.AddrPort {
	t.Helper()
	cmd := exec.Command(bin, "-c", conf)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrs := make(chan netip.AddrPort, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		const marker = "Listening for client connections on "
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), marker); ok {
				if ap, err := netip.ParseAddrPort(strings.TrimSpace(rest)); err == nil {
					select {
					case addrs <- ap:
					default:
					}
				}
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done // the log ends with the process
		_ = cmd.Wait()
	})
	timer := time.NewTimer(trigWait)
	defer timer.Stop()
	select {
	case ap := <-addrs:
		return ap
	case <-done:
		t.Fatal("nats-server exited before it listened")
	case <-timer.C:
		t.Fatal("nats-server did not listen in time")
	}
	return netip.AddrPort{}
}
