package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/pull"
)

// maxStatusesBeforeMessage bounds the status messages the core loop skips
// while it waits for the pulled message: a "409 Batch Completed" that an
// R3 consumer sends before the message, and one that trailed the
// previous pull.
const maxStatusesBeforeMessage = 2

// maxExpiredPulls bounds the pulls one visit repeats when a pull expires
// (408) although consumer info counted a message: on a loaded cluster the
// consumer's leader can take longer than the pull's 100 ms expiry to
// deliver. The runtime would find the message on its next visit; the
// loops pull again at once and count it.
const maxExpiredPulls = 3

// expiredStatus is the status of a pull that expired with nothing
// delivered.
const expiredStatus = "408"

// coreFollowLoop is coreLoop for a replicated consumer. A replicated
// consumer answers the profile's pull (batch 1 with max_bytes) with "409
// Batch Completed" first and sends the message once its delivered state
// has a quorum, so nats.go's Request, which returns the first reply, is of
// no use for the pull: the loop publishes it with a reply subject of its
// own subscription and reads until the message arrives, skipping status
// messages. Info and ack are Requests, as in coreLoop.
type coreFollowLoop struct {
	coreLoop
	inbox   string
	sub     *nats.Subscription
	expired int // pulls that expired empty although info counted a message
}

func newCoreFollowLoop(nc *nats.Conn, b jspull.Binding, body []byte) (*coreFollowLoop, error) {
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return nil, err
	}
	return &coreFollowLoop{coreLoop: *newCoreLoop(nc, b, body), inbox: inbox, sub: sub}, nil
}

func (l *coreFollowLoop) step(context.Context) error {
	m, err := l.nc.Request(l.info, nil, opBound)
	if err != nil {
		return fmt.Errorf("peerbench: core: info: %w", err)
	}
	var ci coreInfo
	if err := json.Unmarshal(m.Data, &ci); err != nil {
		return fmt.Errorf("peerbench: core: info: %w", err)
	}
	if ci.Error != nil {
		return fmt.Errorf("peerbench: core: info: api error %d/%d", ci.Error.Code, ci.Error.ErrCode)
	}
	if ci.NumPending == 0 && ci.NumAckPending == 0 {
		return errEmpty
	}
	for attempt := 0; ; attempt++ {
		if m, err = l.pull(); err != nil {
			return err
		}
		if m.Header.Get(statusHeader) != expiredStatus || attempt == maxExpiredPulls {
			break
		}
		l.expired++
	}
	if m.Header.Get(statusHeader) != "" || !strings.HasPrefix(m.Reply, "$JS.ACK.") || len(m.Data) != payloadSize {
		return fmt.Errorf("peerbench: core: next: not a message (status %q)", m.Header.Get(statusHeader))
	}
	r, err := l.nc.Request(m.Reply, l.ack, opBound)
	if err != nil {
		return fmt.Errorf("peerbench: core: ack: %w", err)
	}
	if len(r.Data) != 0 || r.Header.Get(statusHeader) != "" {
		return errors.New("peerbench: core: ack: not an empty receipt")
	}
	return nil
}

// pull publishes the pull and returns the message that answers it, or
// the 408 status of a pull that expired, skipping other statuses.
func (l *coreFollowLoop) pull() (*nats.Msg, error) {
	if err := l.nc.PublishRequest(l.next, l.inbox, l.body); err != nil {
		return nil, fmt.Errorf("peerbench: core: next: %w", err)
	}
	var m *nats.Msg
	for range maxStatusesBeforeMessage + 1 {
		var err error
		if m, err = l.sub.NextMsg(opBound); err != nil {
			return nil, fmt.Errorf("peerbench: core: next: %w", err)
		}
		if st := m.Header.Get(statusHeader); st == "" || st == expiredStatus {
			break
		}
	}
	return m, nil
}

// jsClusterLoop is jsLoop without FetchMaxBytes: a replicated consumer
// answers a pull with max_bytes with "409 Batch Completed" before the
// message, which nats.go's Fetch takes as the end of the batch
// (ErrBatchCompleted), leaving the message delivered to an inbox nobody
// reads until ack_wait. Without max_bytes the broker sends no such
// status; the consumer's max_bytes refuses only a larger request.
type jsClusterLoop struct {
	jsLoop
	expired int // fetches that ended empty although info counted a message
}

func (l *jsClusterLoop) step(ctx context.Context) error {
	info, err := l.cons.Info(ctx)
	if err != nil {
		return fmt.Errorf("peerbench: jetstream: info: %w", err)
	}
	if info.NumPending == 0 && info.NumAckPending == 0 {
		return errEmpty
	}
	var batch jetstream.MessageBatch
	var msg jetstream.Msg
	for attempt := 0; ; attempt++ {
		batch, err = l.cons.Fetch(1, jetstream.FetchMaxWait(jspull.RequestExpires))
		if err != nil {
			return fmt.Errorf("peerbench: jetstream: fetch: %w", err)
		}
		msg = <-batch.Messages()
		if msg != nil || batch.Error() != nil || attempt == maxExpiredPulls {
			break
		}
		l.expired++
	}
	if msg == nil {
		return fmt.Errorf("peerbench: jetstream: fetch: no message (%v)", batch.Error())
	}
	if len(msg.Data()) != payloadSize {
		return errors.New("peerbench: jetstream: fetch: wrong payload size")
	}
	if err := msg.DoubleAck(ctx); err != nil {
		return fmt.Errorf("peerbench: jetstream: ack: %w", err)
	}
	return nil
}

// emptyCoreInfo is nats.go core's visit to an empty consumer: the
// consumer-info request whose counters say there is nothing to pull.
type emptyCoreInfo struct{ coreLoop }

func (l *emptyCoreInfo) step(context.Context) error {
	m, err := l.nc.Request(l.info, nil, opBound)
	if err != nil {
		return fmt.Errorf("peerbench: core: info: %w", err)
	}
	var ci coreInfo
	if err := json.Unmarshal(m.Data, &ci); err != nil || ci.Error != nil {
		return fmt.Errorf("peerbench: core: info: %v", err)
	}
	if ci.NumPending != 0 || ci.NumAckPending != 0 {
		return errors.New("peerbench: core: empty consumer not empty")
	}
	return nil
}

// emptyJSInfo is nats.go jetstream's: Consumer.Info.
type emptyJSInfo struct{ jsLoop }

func (l *emptyJSInfo) step(ctx context.Context) error {
	info, err := l.cons.Info(ctx)
	if err != nil {
		return fmt.Errorf("peerbench: jetstream: info: %w", err)
	}
	if info.NumPending != 0 || info.NumAckPending != 0 {
		return errors.New("peerbench: jetstream: empty consumer not empty")
	}
	return nil
}

// emptyJSFetch is the jetstream visit that pulls without looking first:
// Fetch(1) with FetchMaxWait(100 ms), which the broker holds until it
// expires.
type emptyJSFetch struct{ jsLoop }

func (l *emptyJSFetch) step(context.Context) error {
	batch, err := l.cons.Fetch(1, jetstream.FetchMaxWait(jspull.RequestExpires))
	if err != nil {
		return fmt.Errorf("peerbench: jetstream: fetch: %w", err)
	}
	if msg := <-batch.Messages(); msg != nil {
		return errors.New("peerbench: jetstream: empty consumer delivered")
	}
	if err := batch.Error(); err != nil {
		return fmt.Errorf("peerbench: jetstream: fetch: %w", err)
	}
	return nil
}

// latentRetryLoop is latentLoop that pulls again, at most maxExpiredPulls
// times, when a pull expires (408) although Inspect counted a message.
type latentRetryLoop struct {
	latentLoop
	expired int
}

func (l *latentRetryLoop) step(ctx context.Context) error {
	pend, err := l.p.Inspect(ctx, l.c)
	if err != nil {
		return err
	}
	if pend.Empty() {
		return errEmpty
	}
	var res jspull.Result
	for attempt := 0; ; attempt++ {
		if res, err = l.p.Next(ctx, l.c); err != nil {
			return err
		}
		if res.Kind != jspull.KindRequestTimeout || attempt == maxExpiredPulls {
			break
		}
		l.expired++
	}
	if res.Kind != jspull.KindMessage || len(res.Payload) != payloadSize {
		return fmt.Errorf("peerbench: latent: next: %v, %d bytes", res.Kind, len(res.Payload))
	}
	rec, err := l.p.Ack(ctx, l.c, &res.Delivery, jspull.Ack())
	if err != nil {
		return err
	}
	if rec.Outcome != pull.AckVerified {
		return fmt.Errorf("peerbench: latent: ack %v", rec.Outcome)
	}
	return nil
}
