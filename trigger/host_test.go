package trigger

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
)

func TestHostValueStrings(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{Principal{Subject: "svc:orders", Tenant: "acme", Binding: "b0"}.String(), "trigger:acme/b0/svc:orders"},
		{ActivationID{0x01, 0x23, 0xab, 0xff}.String(), "0123abff000000000000000000000000"},
		{TraceID{15: 0x0f}.String(), "0000000000000000000000000000000f"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("String() = %q, want %q", tc.got, tc.want)
		}
	}
}

// nilInboundHost returns neither an Inbound nor an error.
type nilInboundHost struct{ *fakeHost }

func (nilInboundHost) ReserveInbound(context.Context, InboundRequest) (Inbound, error) {
	return nil, nil
}

// TestNilInbound: a host returning no Inbound and no error is a host error:
// no network.
func TestNilInbound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		rep, err := r.trig.Step(t.Context(), nilInboundHost{r.host})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Result != ResultSkipped || rep.Error != ClassHost || r.net.dialCount() != 0 {
			t.Errorf("report %+v, dials %d", rep, r.net.dialCount())
		}
	})
}

// inboundAndErrorHost returns an Inbound together with an error.
type inboundAndErrorHost struct {
	*fakeHost
	err error
}

func (h inboundAndErrorHost) ReserveInbound(ctx context.Context, r InboundRequest) (Inbound, error) {
	in, err := h.fakeHost.ReserveInbound(ctx, r)
	if err != nil {
		return nil, err
	}
	return in, h.err
}

// TestInboundWithError: an Inbound returned with an error is refused (no
// network) and released, once. Regression: it was never released, and the
// host's admission and input stayed reserved.
func TestInboundWithError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want ErrorClass
	}{
		{"unavailable", ErrUnavailable, ClassUnavailable},
		{"other", errTest, ClassHost},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rtConfig(t, 1), PoolLimits{})
				rep, err := r.trig.Step(t.Context(), inboundAndErrorHost{r.host, tc.err})
				if err != nil {
					t.Fatal(err)
				}
				if rep.Result != ResultSkipped || rep.Error != tc.want || r.net.dialCount() != 0 {
					t.Errorf("report %+v, dials %d", rep, r.net.dialCount())
				}
				if n := r.host.held(); n != 0 {
					t.Errorf("%d reservations held after the step, want 0", n)
				}
				want := []string{"eligible b0", "credential t0", "reserve b0", "release b0"}
				if diff := cmp.Diff(want, r.ev.take()); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
			})
		})
	}
}
