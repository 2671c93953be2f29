package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/tools/ledger"
	"github.com/latent-systems/latent-nats/trigger"
)

// The bounds of the fault scenarios' verdicts.
const (
	// faultSettle bounds how long the consumers may take to settle after
	// the last fault: a redelivery waits out one ack wait (the suite's
	// 2 s, or a case's own), and a dial backoff and a few steps follow.
	faultSettle = 15 * time.Second
	// faultTick paces the reads of the consumers while they settle.
	faultTick = 20 * time.Millisecond
)

// consumerView reads binding id's consumer as its tenant's administrator.
// An administrator whose connection a fault closed is dialled again for
// the next read; the read that found it closed returns its error.
func (e *trigEnv) consumerView(t *testing.T, ctx context.Context, id string) (ledger.ConsumerView, error) {
	t.Helper()
	var bc *trigger.Binding
	for i := range e.cfg.Bindings {
		if e.cfg.Bindings[i].ID == id {
			bc = &e.cfg.Bindings[i]
		}
	}
	if bc == nil {
		return ledger.ConsumerView{}, fmt.Errorf("no binding %q", id)
	}
	var te *trigTenantEnv
	for _, x := range e.tenants {
		if x.id == bc.Tenant {
			te = x
		}
	}
	if te.adm.c.Closed() {
		creds, err := e.b.Admin(te.id)
		if err != nil {
			return ledger.ConsumerView{}, err
		}
		c, err := pullDialErr(t, e.b, creds)
		if err != nil {
			return ledger.ConsumerView{}, err
		}
		te.adm.c = c
	}
	c := te.adm.c
	return ledger.ReadView(ctx, func(ctx context.Context, subject string, body []byte) ([]byte, error) {
		rctx, cancel := context.WithTimeout(ctx, pullTimeout)
		defer cancel()
		r, err := c.Request(rctx, subject, nil, body)
		return r.Payload, err
	}, *bc)
}

// settle waits, within faultSettle, for every consumer of the case to
// settle, and returns the ledger's verdict with the time it took. A case
// that did not settle fails with the verdict (its losses are the finding).
func (e *trigEnv) settle(t *testing.T) (ledger.Verdict, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), faultSettle)
	defer cancel()
	views, took, err := e.led.WaitSettled(ctx, faultTick, func(ctx context.Context, id string) (ledger.ConsumerView, error) {
		return e.consumerView(t, ctx, id)
	})
	v := e.led.Verdict(views)
	if err != nil {
		t.Fatalf("consumers not settled within %v: %v\n%s", faultSettle, err, v)
	}
	t.Logf("settled in %v: %s", took, v)
	return v, took
}

// checkVerdict fails the case unless the verdict shows nothing lost and,
// when durable, no re-execution after a verified acknowledgement, no
// message kept after one and no retry dropped after a verified NAK
// (ledger.Verdict.Err).
func checkVerdict(t *testing.T, v ledger.Verdict, durable bool) {
	t.Helper()
	err := v.ErrNoLoss()
	if durable {
		err = v.Err()
	}
	var ve *ledger.VerdictError
	if errors.As(err, &ve) {
		t.Errorf("verdict: %v\n%s", err, v)
	}
}
