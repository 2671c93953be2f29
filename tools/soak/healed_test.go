package soak

import (
	"errors"
	"os"
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

// TestDumpStacks: after a failed settle phase the broker's goroutines go
// to a file the output names, and each JetStream API worker's stack in it
// is printed.
func TestDumpStacks(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{"t0"}})
	var out strings.Builder
	dumpStacks(t.Context(), &out, b)
	text := out.String()
	_, after, ok := strings.Cut(text, "stacks (")
	_, after, ok2 := strings.Cut(after, " are in ")
	path, _, ok3 := strings.Cut(after, "\n")
	if !ok || !ok2 || !ok3 {
		t.Fatalf("output names no file:\n%s", text)
	}
	defer os.Remove(path)
	stacks, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(stacks), "SIGQUIT") || !strings.Contains(string(stacks), "nats-server/v2/server.") {
		t.Errorf("the file holds no stacks of the server (%d bytes)", len(stacks))
	}
	// Every stanza of an API worker in the file is printed, and nothing
	// else is (whether the workers have started yet is the server's
	// timing: broker's TestStacks finds one after an API request).
	workers := 0
	for g := range strings.SplitSeq(string(stacks), "\n\n") {
		if strings.Contains(g, apiWorker) {
			workers++
			if !strings.Contains(text, "a JetStream API worker of the broker:\n"+g+"\n") {
				t.Errorf("output lacks the worker's stanza:\n%s", g)
			}
		}
	}
	if got := strings.Count(text, "a JetStream API worker of the broker:"); got != workers {
		t.Errorf("%d workers printed, %d in the stacks", got, workers)
	}
	if b.Running() {
		t.Error("the broker runs after its stacks were taken")
	}
}

// TestProbes: against a broker that answers, each probe of a failed
// settle phase is answered: the core request by the server's 503, the
// account's JetStream information and the binding's consumer info by
// their JSON.
func TestProbes(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{"t0"}})
	cfg := config(b, Options{Bindings: 1})
	admins, creds, err := credentials(b, cfg)
	defer wipe(admins)
	defer wipe(creds)
	if err != nil {
		t.Fatal(err)
	}
	if err := provisionAll(t.Context(), cfg, admins); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	p := &publisher{cfg: cfg, admins: admins}
	p.probes(t.Context(), &out, "a test")
	text := out.String()
	for _, want := range []string{
		"soak: probe (a test), a core request nothing listens to: status 503 in ",
		"soak: probe (a test), the account's JetStream information: ",
		"soak: probe (a test), binding t0.b0's consumer info: ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "no answer") || strings.Count(text, " bytes in ") != 2 {
		t.Errorf("a probe unanswered or not a reply:\n%s", text)
	}
	if p.conns[0] != nil || p.clients[0] != nil {
		t.Error("the probes' connection is left open")
	}
}
