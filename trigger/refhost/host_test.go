package refhost_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// The fixture: service "orders" offers contract "orders-v1" with function
// "place(u32, string)", declared failure "out-of-stock", in revision r1.

func testBinding() trigger.BindingRef {
	return trigger.BindingRef{
		LogicalID: "node-1", Epoch: 1, Index: 0, ID: "b-orders", Tenant: "t1",
		Principal: "svc-orders", Service: "orders", Contract: "orders-v1", Function: "place",
	}
}

func testPublication() refhost.PublicationKey {
	return refhost.PublicationKey{Service: "orders", Contract: "orders-v1", Function: "place"}
}

func testFunction(revision string, fn refhost.Func) refhost.Function {
	return refhost.Function{
		Service: "orders", Revision: revision, Contract: "orders-v1", Name: "place",
		Params:   []refhost.Type{refhost.U32(), refhost.String()},
		Failures: []string{"out-of-stock"},
		Func:     fn,
	}
}

// newHost returns a host with the fixture registered in r1, published and
// routed.
func newHost(t *testing.T, cfg refhost.Config, fn refhost.Func) *refhost.Host {
	t.Helper()
	h, err := refhost.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Register(testFunction("r1", fn)); err != nil {
		t.Fatal(err)
	}
	if err := h.Publish(testPublication()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.SetRoute("orders", "", "r1"); err != nil {
		t.Fatal(err)
	}
	return h
}

func defaultConfig() refhost.Config {
	return refhost.Config{MaxActivations: 4, MaxInputBytes: 4 * refhost.MaxPayloadBytes, MaxMemoryBytes: 1 << 20}
}

// reserve reserves for the fixture binding with max input bytes.
func reserve(t *testing.T, h *refhost.Host, max int) trigger.Inbound {
	t.Helper()
	in, err := h.ReserveInbound(context.Background(), trigger.InboundRequest{Binding: testBinding(), MaxInputBytes: max, Deadline: time.Now().Add(time.Second)})
	if err != nil {
		t.Fatalf("ReserveInbound: %v", err)
	}
	return in
}

// activation returns an activation of in with payload, due in d.
func activation(in trigger.Inbound, payload string, d time.Duration) trigger.Activation {
	b := testBinding()
	return trigger.Activation{
		Principal:       trigger.Principal{Subject: b.Principal, Tenant: b.Tenant, Binding: b.ID},
		ActivationID:    trigger.ActivationID{1, 2, 3},
		Trace:           trigger.TraceID{4, 5, 6},
		Binding:         b,
		RouteGeneration: in.RouteGeneration(),
		Deadline:        time.Now().Add(d),
		Budget:          d,
		StreamSeq:       42,
		Delivered:       1,
		MaxDeliver:      3,
		Payload:         []byte(payload),
	}
}

// checkDrained requires every slot, input byte and function returned.
func checkDrained(t *testing.T, h *refhost.Host) {
	t.Helper()
	s := h.Stats()
	if s.Slots != 0 || s.InputBytes != 0 || s.MemoryBytes != 0 || s.Running != 0 {
		t.Errorf("after release: %d slots, %d input bytes, %d memory bytes, %d running; want all 0", s.Slots, s.InputBytes, s.MemoryBytes, s.Running)
	}
}

func TestNewBounds(t *testing.T) {
	cases := []struct {
		name string
		cfg  refhost.Config
		ok   bool
	}{
		{"minimum", refhost.Config{MaxActivations: 1, MaxInputBytes: 1}, true},
		{"maximum", refhost.Config{MaxActivations: refhost.MaxAdmission, MaxInputBytes: refhost.MaxInputAllocation, MaxMemoryBytes: refhost.MaxMemoryAllocation}, true},
		{"memory past max", refhost.Config{MaxActivations: 1, MaxInputBytes: 1, MaxMemoryBytes: refhost.MaxMemoryAllocation + 1}, false},
		{"negative memory", refhost.Config{MaxActivations: 1, MaxInputBytes: 1, MaxMemoryBytes: -1}, false},
		{"no activations", refhost.Config{MaxActivations: 0, MaxInputBytes: 1}, false},
		{"activations past max", refhost.Config{MaxActivations: refhost.MaxAdmission + 1, MaxInputBytes: 1}, false},
		{"no input", refhost.Config{MaxActivations: 1, MaxInputBytes: 0}, false},
		{"input past max", refhost.Config{MaxActivations: 1, MaxInputBytes: refhost.MaxInputAllocation + 1}, false},
		{"negative", refhost.Config{MaxActivations: -1, MaxInputBytes: -1}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := refhost.New(tc.cfg)
			if got := err == nil; got != tc.ok || !tc.ok && !errors.Is(err, refhost.ErrInvalidConfig) {
				t.Errorf("New(%+v) = %v, want ok %v", tc.cfg, err, tc.ok)
			}
		})
	}
}

func TestRegister(t *testing.T) {
	nop := func(context.Context, refhost.Call) error { return nil }
	long := strings.Repeat("x", refhost.MaxIdentifierLen)
	codes := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "code" + strings.Repeat("a", i%50) + "-" + strings.Repeat("b", i/50+1)
		}
		return out
	}
	with := func(edit func(*refhost.Function)) refhost.Function {
		f := testFunction("r1", nop)
		edit(&f)
		return f
	}
	cases := []struct {
		name string
		f    refhost.Function
		want error // nil: accepted
	}{
		{"valid", with(func(*refhost.Function) {}), nil},
		{"no params", with(func(f *refhost.Function) { f.Params = nil }), nil},
		{"name at the limit", with(func(f *refhost.Function) { f.Service = long }), nil},
		{"failures at the limit", with(func(f *refhost.Function) { f.Failures = codes(refhost.MaxDeclaredFailures) }), nil},
		{"empty service", with(func(f *refhost.Function) { f.Service = "" }), refhost.ErrInvalidName},
		{"space in contract", with(func(f *refhost.Function) { f.Contract = "a b" }), refhost.ErrInvalidName},
		{"control in revision", with(func(f *refhost.Function) { f.Revision = "r\n1" }), refhost.ErrInvalidName},
		{"name past the limit", with(func(f *refhost.Function) { f.Name = long + "x" }), refhost.ErrInvalidName},
		{"no func", with(func(f *refhost.Function) { f.Func = nil }), refhost.ErrInvalidFunction},
		{"bad params", with(func(f *refhost.Function) { f.Params = []refhost.Type{{}} }), refhost.ErrInvalidType},
		{"bad failure code", with(func(f *refhost.Function) { f.Failures = []string{"Not_A_Name"} }), refhost.ErrInvalidFunction},
		{"repeated failure code", with(func(f *refhost.Function) { f.Failures = []string{"a", "a"} }), refhost.ErrInvalidFunction},
		{"result", with(func(f *refhost.Function) {
			r := refhost.Result(nil, &[]refhost.Type{refhost.String()}[0])
			f.Result = &r
		}), nil},
		{"bad result", with(func(f *refhost.Function) { f.Result = &refhost.Type{} }), refhost.ErrInvalidType},
		{"memory at the host's limit", with(func(f *refhost.Function) { f.Memory = defaultConfig().MaxMemoryBytes }), nil},
		{"memory past the host's limit", with(func(f *refhost.Function) { f.Memory = defaultConfig().MaxMemoryBytes + 1 }), refhost.ErrInvalidFunction},
		{"negative memory", with(func(f *refhost.Function) { f.Memory = -1 }), refhost.ErrInvalidFunction},
		{"failures past the limit", with(func(f *refhost.Function) { f.Failures = codes(refhost.MaxDeclaredFailures + 1) }), refhost.ErrInvalidFunction},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := refhost.New(defaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			err = h.Register(tc.f)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("Register = %v, want %v", err, tc.want)
			}
		})
	}
	t.Run("duplicate", func(t *testing.T) {
		h := newHost(t, defaultConfig(), nop)
		if err := h.Register(testFunction("r1", nop)); !errors.Is(err, refhost.ErrDuplicateFunction) {
			t.Errorf("second Register = %v, want ErrDuplicateFunction", err)
		}
		if err := h.Register(testFunction("r2", nop)); err != nil {
			t.Errorf("Register in another revision = %v", err)
		}
	})
}

func TestPublicationEligible(t *testing.T) {
	nop := func(context.Context, refhost.Call) error { return nil }
	h := newHost(t, defaultConfig(), nop)
	other := testBinding()
	other.Function = "cancel"
	if err := h.Publish(refhost.PublicationKey{Service: "orders", Contract: "orders-v1", Function: "cancel"}); err != nil {
		t.Fatal(err)
	}
	if err := h.PublicationEligible(testBinding()); err != nil {
		t.Fatalf("published: %v", err)
	}
	h.RevokePublication(testPublication())
	err := h.PublicationEligible(testBinding())
	if !errors.Is(err, refhost.ErrNotPublished) || !errors.Is(err, trigger.ErrNotEligible) {
		t.Errorf("revoked: %v, want ErrNotPublished and trigger.ErrNotEligible", err)
	}
	if err := h.PublicationEligible(other); err != nil {
		t.Errorf("revocation reached another publication: %v", err)
	}
	if err := h.Publish(testPublication()); err != nil {
		t.Fatal(err)
	}
	if err := h.PublicationEligible(testBinding()); err != nil {
		t.Errorf("published again: %v", err)
	}
	unknown := testBinding()
	unknown.Contract = "orders-v2"
	if err := h.PublicationEligible(unknown); !errors.Is(err, refhost.ErrNotPublished) {
		t.Errorf("never published: %v, want ErrNotPublished", err)
	}
	if err := h.Publish(refhost.PublicationKey{Service: "orders", Contract: "", Function: "x"}); !errors.Is(err, refhost.ErrInvalidName) {
		t.Errorf("Publish with an empty contract = %v, want ErrInvalidName", err)
	}
}

func TestCredentialCurrent(t *testing.T) {
	h, err := refhost.New(defaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	h.RevokeCredential("t1")
	err = h.CredentialCurrent("t1")
	if !errors.Is(err, refhost.ErrCredentialRevoked) || !errors.Is(err, trigger.ErrCredentialRevoked) {
		t.Errorf("revoked: %v, want ErrCredentialRevoked and trigger.ErrCredentialRevoked", err)
	}
	if err := h.CredentialCurrent("t2"); err != nil {
		t.Errorf("revocation reached another tenant: %v", err)
	}
	h.RestoreCredential("t1")
	if err := h.CredentialCurrent("t1"); err != nil {
		t.Errorf("restored: %v", err)
	}
}

func TestReserveInboundRefusals(t *testing.T) {
	nop := func(context.Context, refhost.Call) error { return nil }
	h := newHost(t, defaultConfig(), nop)
	req := func(max int) trigger.InboundRequest {
		return trigger.InboundRequest{Binding: testBinding(), MaxInputBytes: max}
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	noRoute := testBinding()
	noRoute.Route = "canary"
	cases := []struct {
		name string
		ctx  context.Context
		req  trigger.InboundRequest
		want error
	}{
		{"cancelled", cancelled, req(1), context.Canceled},
		{"no input", context.Background(), req(0), refhost.ErrInvalidRequest},
		{"input past the payload limit", context.Background(), req(refhost.MaxPayloadBytes + 1), refhost.ErrInvalidRequest},
		{"no route", context.Background(), trigger.InboundRequest{Binding: noRoute, MaxInputBytes: 1}, refhost.ErrNoRoute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, err := h.ReserveInbound(tc.ctx, tc.req)
			if !errors.Is(err, tc.want) || in != nil {
				t.Errorf("ReserveInbound = %v, %v; want nil, %v", in, err, tc.want)
			}
			if errors.Is(err, trigger.ErrUnavailable) {
				t.Errorf("%v must not read as unavailable", err)
			}
		})
	}
	t.Run("input at the payload limit", func(t *testing.T) {
		reserve(t, h, refhost.MaxPayloadBytes).Release()
	})
	t.Run("removed route", func(t *testing.T) {
		h.RemoveRoute("orders", "")
		if _, err := h.ReserveInbound(context.Background(), req(1)); !errors.Is(err, refhost.ErrNoRoute) {
			t.Errorf("ReserveInbound = %v, want ErrNoRoute", err)
		}
	})
	checkDrained(t, h)
	if got := h.Stats().NoRoute; got != 2 {
		t.Errorf("NoRoute = %d, want 2", got)
	}
}

// TestAdmissionLimit fills the slots and checks the next reservation is
// unavailable (and takes nothing), then frees one.
func TestAdmissionLimit(t *testing.T) {
	nop := func(context.Context, refhost.Call) error { return nil }
	h := newHost(t, refhost.Config{MaxActivations: 2, MaxInputBytes: 1 << 20}, nop)
	a, b := reserve(t, h, 10), reserve(t, h, 20)
	_, err := h.ReserveInbound(context.Background(), trigger.InboundRequest{Binding: testBinding(), MaxInputBytes: 1})
	var ue *refhost.UnavailableError
	if !errors.Is(err, trigger.ErrUnavailable) || !errors.As(err, &ue) || ue.Resource != refhost.ResourceAdmission {
		t.Fatalf("third ReserveInbound = %v, want admission unavailable", err)
	}
	if s := h.Stats(); s.Slots != 2 || s.InputBytes != 30 || s.Unavailable != 1 {
		t.Errorf("Stats = %+v, want 2 slots, 30 bytes, 1 unavailable", s)
	}
	a.Release()
	c := reserve(t, h, 1)
	b.Release()
	c.Release()
	checkDrained(t, h)
}

// TestInputAllocationLimit checks the shared input allocation at its
// limit and one byte past it.
func TestInputAllocationLimit(t *testing.T) {
	nop := func(context.Context, refhost.Call) error { return nil }
	h := newHost(t, refhost.Config{MaxActivations: 8, MaxInputBytes: 100}, nop)
	a, b := reserve(t, h, 60), reserve(t, h, 40)
	_, err := h.ReserveInbound(context.Background(), trigger.InboundRequest{Binding: testBinding(), MaxInputBytes: 1})
	var ue *refhost.UnavailableError
	if !errors.Is(err, trigger.ErrUnavailable) || !errors.As(err, &ue) || ue.Resource != refhost.ResourceInput {
		t.Fatalf("ReserveInbound past the allocation = %v, want input unavailable", err)
	}
	b.Release()
	c := reserve(t, h, 40)
	a.Release()
	c.Release()
	checkDrained(t, h)
	if s := h.Stats(); s.Reservations != 3 || s.Releases != 3 || s.Unavailable != 1 {
		t.Errorf("Stats = %+v, want 3 reservations, 3 releases, 1 unavailable", s)
	}
}

// TestRoutePinning replaces the route between reservation and activation:
// the reserved input keeps its revision and generation; the next
// reservation resolves the new route.
func TestRoutePinning(t *testing.T) {
	var got []string
	record := func(_ context.Context, c refhost.Call) error {
		got = append(got, c.Revision+"@"+strconv.FormatUint(c.RouteGeneration, 10))
		return nil
	}
	h := newHost(t, defaultConfig(), record)
	if err := h.Register(testFunction("r2", record)); err != nil {
		t.Fatal(err)
	}
	first := reserve(t, h, 64)
	gen, err := h.SetRoute("orders", "", "r2")
	if err != nil || gen != 2 {
		t.Fatalf("SetRoute = %d, %v; want generation 2", gen, err)
	}
	second := reserve(t, h, 64)
	if first.RouteGeneration() != 1 || second.RouteGeneration() != 2 {
		t.Errorf("generations %d, %d; want 1, 2", first.RouteGeneration(), second.RouteGeneration())
	}
	for _, in := range []trigger.Inbound{first, second} {
		if r := in.Activate(context.Background(), activation(in, `[1,"x"]`, time.Minute)); r.Outcome != trigger.OutcomeSuccess {
			t.Errorf("Activate = %v, want success", r.Outcome)
		}
		in.Release()
	}
	if diff := cmp.Diff([]string{"r1@1", "r2@2"}, got); diff != "" {
		t.Errorf("revisions run (-want +got):\n%s", diff)
	}
	checkDrained(t, h)
}

func TestSetRoute(t *testing.T) {
	h, err := refhost.New(defaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var gens []uint64
	for _, rev := range []string{"r1", "r2", "r1"} {
		g, err := h.SetRoute("orders", "canary", rev)
		if err != nil {
			t.Fatal(err)
		}
		gens = append(gens, g)
	}
	h.RemoveRoute("orders", "canary")
	g, err := h.SetRoute("orders", "canary", "r3")
	if err != nil {
		t.Fatal(err)
	}
	gens = append(gens, g)
	other, err := h.SetRoute("billing", "canary", "r1")
	if err != nil {
		t.Fatal(err)
	}
	gens = append(gens, other)
	if diff := cmp.Diff([]uint64{1, 2, 3, 5, 1}, gens); diff != "" {
		t.Errorf("generations (-want +got):\n%s", diff)
	}
	for _, bad := range [][3]string{{"", "", "r1"}, {"orders", "", ""}, {"orders", "a b", "r1"}} {
		if _, err := h.SetRoute(bad[0], bad[1], bad[2]); !errors.Is(err, refhost.ErrInvalidName) {
			t.Errorf("SetRoute(%q) = %v, want ErrInvalidName", bad, err)
		}
	}
}
