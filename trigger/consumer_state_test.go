package trigger

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
)

// TestConsumerState: a visit whose consumer info decoded replaces the
// binding's ConsumerState with the broker's counters as of that reply, on
// the installation's clock (an empty visit, a delivery, whose pull comes
// after, a paused consumer, a profile mismatch); a visit stopped before
// consumer info or whose request failed leaves the last one, older by the
// visit.
func TestConsumerState(t *testing.T) {
	const gap = time.Second
	tests := []struct {
		name string
		prep func(r *rig)
		// want is the state after the second visit, At aside; age is
		// how long before that visit At lies.
		want ConsumerState
		age  time.Duration
	}{
		{"empty visit", func(*rig) {}, ConsumerState{Leader: true}, 0},
		{"delivered: counted before its pull", func(r *rig) {
			for range 3 {
				r.net.publish(0, `[]`)
			}
		}, ConsumerState{Pending: 3, Leader: true}, 0},
		{"the broker's figures", func(r *rig) {
			r.net.counters = func(int, jspull.Pending) jspull.Pending {
				return jspull.Pending{NumPending: 5, NumAckPending: 1, NumRedelivered: 2, NumWaiting: 1}
			}
		}, ConsumerState{Pending: 5, AckPending: 1, Redelivered: 2, Waiting: 1}, 0},
		{"paused", func(r *rig) {
			r.net.publish(0, `[]`)
			r.net.inspectErr = func(int) error { return jspull.ErrConsumerPaused }
		}, ConsumerState{Pending: 1, Leader: true}, 0},
		{"profile mismatch", func(r *rig) {
			r.net.publish(0, `[]`)
			r.net.inspectErr = func(int) error { return &jspull.ProfileError{Mismatches: []jspull.Mismatch{{Field: "ack_policy"}}} }
		}, ConsumerState{Pending: 1, Leader: true}, 0},
		{"consumer missing: the last one kept", func(r *rig) {
			r.net.inspectErr = func(int) error { return jspull.ErrConsumerNotFound }
		}, ConsumerState{Leader: true}, gap},
		{"connection lost: the last one kept", func(r *rig) {
			r.net.inspectErr = func(int) error { return &conn.ClosedError{Err: conn.ErrServerClosed} }
		}, ConsumerState{Leader: true}, gap},
		{"ineligible: the last one kept", func(r *rig) {
			r.host.eligible = func(BindingRef, int) error { return ErrNotEligible }
		}, ConsumerState{Leader: true}, gap},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, rtConfig(t, 1), PoolLimits{})
				if diff := cmp.Diff([]ConsumerState{{}}, r.mon.Snapshot().Consumers); diff != "" {
					t.Errorf("before any visit (-want +got):\n%s", diff)
				}
				r.step(t)
				time.Sleep(gap)
				tc.prep(r)
				r.step(t)
				want := tc.want
				want.At = time.Now().Add(-tc.age)
				if diff := cmp.Diff([]ConsumerState{want}, r.mon.Snapshot().Consumers); diff != "" {
					t.Errorf("after the visit (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// TestConsumerStatePerBinding: each binding has its own slot, the
// snapshot is a copy, and a visit to one binding leaves the others' as
// they were.
func TestConsumerStatePerBinding(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, rtConfig(t, 2, 1), PoolLimits{})
		r.net.publish(1, `[]`)
		r.net.publish(1, `[]`)
		t0 := time.Now()
		r.step(t) // t0's binding 0
		time.Sleep(time.Second)
		r.step(t) // t1's binding 2
		time.Sleep(time.Second)
		r.step(t) // t0's binding 1: two pending, one pulled
		want := []ConsumerState{
			{At: t0, Leader: true},
			{At: t0.Add(2 * time.Second), Pending: 2, Leader: true},
			{At: t0.Add(time.Second), Leader: true},
		}
		s := r.mon.Snapshot()
		if diff := cmp.Diff(want, s.Consumers); diff != "" {
			t.Errorf("consumers (-want +got):\n%s", diff)
		}
		s.Consumers[0].Pending = 99
		if got := r.mon.Snapshot().Consumers[0].Pending; got != 0 {
			t.Errorf("a change to a snapshot reached the monitor: pending %d", got)
		}
	})
}

// TestReplicaEmptyIsPulled: a consumer-info reply that is not the
// consumer leader's view (jspull.Pending.Leader false: a restarted cluster
// node that has not started the consumer's group answers with zero
// counters, racing the leader) does not prove the consumer empty; the
// visit pulls, and the pull delivers the event the leader holds. The
// leader's own empty view ends the visit after consumer info.
func TestReplicaEmptyIsPulled(t *testing.T) {
	r := newRig(t, rtConfig(t, 1), PoolLimits{})
	r.net.publish(0, `[]`)
	r.net.counters = func(int, jspull.Pending) jspull.Pending { return jspull.Pending{} } // a replica's zeros
	if rep := r.step(t); rep.Result != ResultDelivered || r.mon.Snapshot().Totals.Empty != 0 {
		t.Errorf("visit after a replica's empty reply: %v, %d empty; want the event delivered", rep.Result, r.mon.Snapshot().Totals.Empty)
	}
	r.net.counters = nil
	if rep := r.step(t); rep.Result != ResultEmpty || r.mon.Snapshot().Totals.EmptyPulls != 0 {
		t.Errorf("visit after the leader's empty reply: %v, %d empty pulls; want empty by consumer info", rep.Result, r.mon.Snapshot().Totals.EmptyPulls)
	}
}
