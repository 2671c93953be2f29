package trigger

import (
	"context"
	"testing"
	"testing/synctest"
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
