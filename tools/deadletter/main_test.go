package deadletter

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/tools/provision"
	"github.com/latent-systems/latent-nats/trigger"
)

// testBinding returns a valid binding of the profile.
func testBinding(id, consumer, subject string) trigger.Binding {
	return trigger.Binding{
		ID: id, Tenant: "acme", Principal: "svc:orders", Service: "orders",
		Contract: "latent:orders/handler@1.0.0", Function: "handle",
		Stream: "ORDERS", Consumer: consumer, FilterSubject: subject,
		MaxPayloadBytes: 4096, OperationTimeoutMS: 2000, RootBudgetMS: 1500,
		MaxDeliver: 2, AckWaitMS: 30_000, NakDelayMS: 500,
	}
}

// TestMainAgainstBroker runs the command end to end on streams provision
// created with copies: list, show and replay, and their failures.
func TestMainAgainstBroker(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{"acme"}})
	cfg := trigger.Config{
		Profile: trigger.ProfileName, PollIntervalMS: 100, MaxControlLineBytes: 4096, MaxHeaderBytes: 4096,
		Tenants:  []trigger.Tenant{{ID: "acme", ProviderID: "local", Destination: destination(b)}},
		Bindings: []trigger.Binding{testBinding("b0", "c0", "acme.orders.created"), testBinding("b1", "c1", "acme.orders.paid")},
	}
	cfgPath, credsPath := brokertest.WriteInputs(t, b, cfg, t.TempDir())
	var stdout, stderr bytes.Buffer
	args := []string{"-config", cfgPath, "-credentials", credsPath, "-copies", "-permissions", "none"}
	if code := provision.Main(t.Context(), args, &stdout, &stderr); code != provision.ExitOK {
		t.Fatalf("provision: exit %d\n%s", code, stderr.String())
	}
	c := adminClient(t, b, "acme")
	seq := publish(t, c, "acme.orders.created", []byte("NATS/1.0\r\nX-A: 1\r\n\r\n"), []byte(`{"id":7}`))
	settle(t, c, pullOne(t, c, "ORDERS", "c0"), "+TERM declared failure")
	e := listAll(t, c, "ORDERS", "c0", 1)[0]

	common := []string{"-config", cfgPath, "-credentials", credsPath}
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
	}{
		{"list every binding", append([]string{"list"}, common...), ExitOK,
			fmt.Sprintf("b0 seq=%d deliveries=1 kind=\"terminated\" reason=\"declared failure\" time=%s capture_seq=%d\n",
				seq, e.Time.Format(time.RFC3339Nano), e.CaptureSeq)},
		{"list one binding, after its give-up", append([]string{"list", "-binding", "b0", "-after", fmt.Sprint(e.CaptureSeq)}, common...), ExitOK, ""},
		{"replay", append([]string{"replay", "-binding", "b0", "-seq", fmt.Sprint(seq)}, common...), ExitOK,
			fmt.Sprintf("b0: replayed stream ORDERS seq %d to acme.orders.created as ORDERS seq %d, a new message (delivery count 1)\n", seq, seq+1)},
		{"replay again", append([]string{"replay", "-binding", "b0", "-seq", fmt.Sprint(seq)}, common...), ExitOK,
			fmt.Sprintf("b0: stream ORDERS seq %d was already replayed as ORDERS seq %d within the duplicate window; nothing new stored\n", seq, seq+1)},
		{"show a message never stored", append([]string{"show", "-binding", "b0", "-seq", "99"}, common...), ExitFailed, ""},
		{"an unknown binding", append([]string{"show", "-binding", "b9", "-seq", "1"}, common...), ExitFailed, ""},
		{"a configuration that does not validate", []string{"list", "-config", credsPath, "-credentials", credsPath}, ExitFailed, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(t.Context(), tc.args, &stdout, &stderr)
			if diff := cmp.Diff(tc.stdout, stdout.String()); diff != "" || code != tc.code {
				t.Errorf("exit %d, want %d; stdout (-want +got):\n%s\nstderr: %s", code, tc.code, diff, stderr.String())
			}
		})
	}

	// show prints where the message was found, its subject, time, the
	// producer's fields and the payload quoted, or its bytes alone with
	// -raw.
	m, err := c.Message(t.Context(), "ORDERS", seq)
	if err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	want := fmt.Sprintf("b0: stream ORDERS seq %d, held by the copy capture LATENT_COPIES (seq 1)\nsubject acme.orders.created\n"+
		"stored %s\nheader \"X-A\": \"1\"\npayload 8 bytes\n\"{\\\"id\\\":7}\"\n", seq, m.Time.Format(time.RFC3339Nano))
	if code := Main(t.Context(), append([]string{"show", "-binding", "b0", "-seq", fmt.Sprint(seq)}, common...), &stdout, &stderr); code != ExitOK {
		t.Errorf("show: exit %d\n%s", code, stderr.String())
	}
	if diff := cmp.Diff(want, stdout.String()); diff != "" {
		t.Errorf("show (-want +got):\n%s", diff)
	}
	stdout.Reset()
	stderr.Reset()
	if code := Main(t.Context(), append([]string{"show", "-binding", "b0", "-seq", fmt.Sprint(seq), "-raw"}, common...), &stdout, &stderr); code != ExitOK ||
		stdout.String() != `{"id":7}` || !bytes.Contains(stderr.Bytes(), []byte("header \"X-A\": \"1\"\npayload 8 bytes\n")) {
		t.Errorf("show -raw: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}
