package soak

import (
	"context"
	"fmt"
	"io"
	"time"
)

// probeSubject is a core subject nothing subscribes to: the server itself
// answers a request to it with a 503 status (no responders).
const probeSubject = "latent.soak.probe"

// probes asks the broker three requests over one fresh connection of the
// first tenant's administrator, after a failed settle phase and before
// the broker's stacks are taken, and prints how each was answered: a core
// request nothing listens to, which the server answers itself; the
// account's JetStream information; the first binding's consumer info, the
// read that failed. Each takes another path through the server, so the
// answers tell requests that never reach JetStream apart from replies
// that never reach the client.
func (p *publisher) probes(ctx context.Context, out io.Writer, when string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*requestBudget)
	defer cancel()
	p.close()
	defer p.close()
	_, c, err := p.client(ctx, 0)
	if err != nil {
		fmt.Fprintf(out, "soak: probes (%s): %v\n", when, err)
		return
	}
	b := p.cfg.Bindings[0]
	for _, pr := range []struct{ what, subject string }{
		{"a core request nothing listens to", probeSubject},
		{"the account's JetStream information", "$JS.API.INFO"},
		{"binding " + b.ID + "'s consumer info", "$JS.API.CONSUMER.INFO." + b.Stream + "." + b.Consumer},
	} {
		rctx, cancel := context.WithTimeout(ctx, requestBudget)
		began := time.Now()
		r, err := c.Request(rctx, pr.subject, nil, nil)
		took := time.Since(began).Round(time.Microsecond)
		cancel()
		switch {
		case err != nil:
			fmt.Fprintf(out, "soak: probe (%s), %s: no answer after %v: %v\n", when, pr.what, took, err)
			return // the connection is closed
		case r.Status != 0:
			fmt.Fprintf(out, "soak: probe (%s), %s: status %d in %v\n", when, pr.what, r.Status, took)
		default:
			fmt.Fprintf(out, "soak: probe (%s), %s: %d bytes in %v\n", when, pr.what, len(r.Payload), took)
		}
	}
}
