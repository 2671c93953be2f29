package trigger

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/conn"
)

// TestClassifyFraming: a connection's framing failure (conn.ErrFraming,
// which conn reports beside the parser's sentinel) is a protocol failure,
// however it is wrapped; the runtime needs no parser sentinel to say so.
// The memory tests' attack servers check the same through real
// connections (oversized line, header block and payload).
func TestClassifyFraming(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"closed", &conn.ClosedError{Err: conn.ErrFraming}},
		{"wrapped", fmt.Errorf("consumer info: %w", &conn.ClosedError{Err: conn.ErrFraming})},
		{"bare", conn.ErrFraming},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classify(tt.err); got != ClassProtocol {
				t.Errorf("classify(%v) = %v, want %v", tt.err, got, ClassProtocol)
			}
		})
	}
}

// TestDialFailure: a failed dial says why, by conn's typed errors (issue
// 20: every dial failure was one class): refused, TLS, authorization or
// other. Every value is listed.
func TestDialFailure(t *testing.T) {
	hs := func(s conn.Step, err error) error { return &conn.HandshakeError{Step: s, Err: err} }
	tests := []struct {
		name string
		err  error
		want DialFailure
	}{
		{"refused", hs(conn.StepDial, conn.ErrRefused), DialRefused},
		{"certificate", hs(conn.StepTLS, conn.ErrCertificate), DialTLS},
		{"client certificate", hs(conn.StepTLS, conn.ErrClientCertificate), DialTLS},
		{"plaintext", hs(conn.StepTLS, conn.ErrPlaintext), DialTLS},
		{"tls alert", hs(conn.StepTLS, conn.ErrTLS), DialTLS},
		{"authorization violation", hs(conn.StepConnect, &conn.ServerError{Kind: conn.KindAuthorization}), DialAuthorization},
		{"authentication expired", hs(conn.StepConnect, &conn.ServerError{Kind: conn.KindAuthenticationExpired}), DialAuthorization},
		{"authentication revoked", hs(conn.StepConnect, &conn.ServerError{Kind: conn.KindAuthenticationRevoked}), DialAuthorization},
		{"authentication timeout", hs(conn.StepConnect, &conn.ServerError{Kind: conn.KindAuthenticationTimeout}), DialOther},
		{"maximum connections", hs(conn.StepInfo, &conn.ServerError{Kind: conn.KindMaxConnections}), DialOther},
		{"lost", hs(conn.StepTLS, conn.ErrServerClosed), DialOther},
		{"timeout", hs(conn.StepDial, context.DeadlineExceeded), DialOther},
		{"address policy", &conn.AddressError{Err: conn.ErrNonPublicAddress}, DialOther},
	}
	seen := map[DialFailure]bool{}
	for _, tt := range tests {
		seen[tt.want] = true
		t.Run(tt.name, func(t *testing.T) {
			if got := dialFailure(tt.err); got != tt.want {
				t.Errorf("dialFailure(%v) = %v, want %v", tt.err, got, tt.want)
			}
			if got := classify(&dialError{err: tt.err}); got != ClassDial {
				t.Errorf("classify = %v, want %v", got, ClassDial)
			}
		})
	}
	for f := DialFailure(1); int(f) <= numDialFailures; f++ {
		if !seen[f] {
			t.Errorf("dial failure %v missing from the table", f)
		}
	}
}

// TestDialFailureReported: the failure reaches the step's report, the
// monitor's counts and its last step; a step that dialled nothing has
// none.
func TestDialFailureReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.net.dialErr = func(string) error {
			return &conn.HandshakeError{Step: conn.StepConnect, Err: &conn.ServerError{Kind: conn.KindAuthorization}}
		}
		rep := r.step(t)
		if rep.Result != ResultFailed || rep.Error != ClassDial || rep.Dial != DialAuthorization {
			t.Fatalf("report %+v, want a dial failure for authorization", rep)
		}
		if rep := r.step(t); rep.Dial != 0 {
			t.Errorf("step in backoff: Dial = %v, want none", rep.Dial)
		}
		s := r.mon.Snapshot()
		got := []uint64{s.Totals.DialFailure(DialRefused), s.Totals.DialFailure(DialTLS), s.Totals.DialFailure(DialAuthorization), s.Totals.DialFailure(DialOther), s.Totals.DialFailure(0)}
		if diff := cmp.Diff([]uint64{0, 0, 1, 0, 0}, got); diff != "" {
			t.Errorf("dial failure counts (-want +got):\n%s", diff)
		}
		if last, ok := r.mon.LastStep(); !ok || last.Dial != DialAuthorization {
			t.Errorf("LastStep = %+v, %v; want the authorization failure", last, ok)
		}
	})
}
