package conformance_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
)

// visitAllocRuns is the number of visits TestPullVisitAllocations counts
// (testing.AllocsPerRun adds one warm-up visit).
const visitAllocRuns = 100

// maxVisitAllocs is the target for one visit, inspect, next and
// a verified +ACK: at most 5 allocations.
const maxVisitAllocs = 5

// TestPullVisitAllocations counts the client's allocations of a whole
// visit against the pinned broker, in another process: crypto/tls's reader
// per record read (three replies, and the trailing "409 Batch Completed"
// when it arrives in a record of its own) and nothing of conn's or jspull's
// (the reply subjects and the ack subject live in fixed buffers; they used
// to be a string each, about 8.6 allocations per visit in all). Under the
// race detector each request costs connRaceAllocs more.
func TestPullVisitAllocations(t *testing.T) {
	b := brokertest.Start(t, broker.Options{Tenants: []string{pullTenant}})
	adm := newAdmin(t, b)
	bind := testBinding("ALLOCS", "worker", "allocs.in")
	bind.AckWait = time.Minute
	provision(adm, bind)
	payload := make([]byte, bind.PayloadCeiling)
	for range visitAllocRuns + 1 {
		adm.publish(bind.FilterSubject, payload)
	}
	p := newPuller(t, b, bind, derive(t, bind), jspull.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var failed error
	visits := 0
	allocs := testing.AllocsPerRun(visitAllocRuns, func() {
		if failed != nil {
			return
		}
		visits++
		if _, err := p.p.Inspect(ctx, p.c); err != nil {
			failed = fmt.Errorf("visit %d: inspect: %w", visits, err)
			return
		}
		res, err := p.p.Next(ctx, p.c)
		if err != nil || res.Kind != jspull.KindMessage || len(res.Payload) != len(payload) {
			failed = fmt.Errorf("visit %d: next: %v, %v", visits, res.Kind, err)
			return
		}
		rec, err := p.p.Ack(ctx, p.c, &res.Delivery, jspull.Ack())
		if err != nil || rec.Outcome != pull.AckVerified {
			failed = fmt.Errorf("visit %d: ack: %v, %v", visits, rec.Outcome, err)
		}
	})
	if failed != nil {
		t.Fatal(failed)
	}
	t.Logf("%.2f allocations per visit", allocs)
	if want := maxVisitAllocs + 3*connRaceAllocs; allocs > float64(want) {
		t.Errorf("%.2f allocations per visit, want at most %d", allocs, want)
	}
	if pend, err := p.inspect(); err != nil || !pend.Empty() {
		t.Errorf("Inspect() after the visits = %+v, %v; want every message acknowledged", pend, err)
	}
}
