package trigger

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestChargeHeldThroughCancellation: the owner stops while the pull
// waits on the broker. The connection closes itself on the cancellation,
// and at that moment, sampled in the close, the pools still charge its
// connection, its client and the ingress request: a charge is released
// only once the socket it pays for is closed. After Run returned, nothing
// is charged.
func TestChargeHeldThroughCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 1), PoolLimits{})
		r.net.publish(0, `[]`)
		r.net.rtt = time.Second
		var atClose []Usage
		r.net.onClose = func() { atClose = append(atClose, r.pools.Usage()) }
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- r.trig.Run(ctx, r.host) }()
		time.Sleep(1500 * time.Millisecond) // dial, inspect, inside the pull
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		if len(atClose) == 0 {
			t.Fatal("the connection was never closed")
		}
		if u := atClose[0]; u.Connections != 1 || u.Clients != 1 || u.Requests != 1 {
			t.Errorf("usage when the socket closed: %+v, want its connection, client and request still charged", u)
		}
		if u := r.pools.Usage(); u.Connections != 0 || u.Requests != 0 {
			t.Errorf("usage after Run returned: %+v, want nothing", u)
		}
	})
}
