package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/pull"
)

// errEmpty: consumer info said nothing is pending where a message was
// expected (the loops' messages are published before the run).
var errEmpty = errors.New("peerbench: consumer unexpectedly empty")

// stepper is one loop of the comparison. step runs one visit; every
// blocking call in it is bounded by ctx's deadline (at most the round's
// time bound away) and by the loop's own per-operation bound.
type stepper interface {
	step(ctx context.Context) error
}

// latentLoop is this project: jspull.Consumer's Inspect, Next and a verified
// +ACK over one conn.Conn. Inspect checks the whole profile and decodes the
// info strictly; Next classifies the reply and parses the ack subject.
type latentLoop struct {
	c *conn.Conn
	p *jspull.Consumer
}

func (l *latentLoop) step(ctx context.Context) error {
	pend, err := l.p.Inspect(ctx, l.c)
	if err != nil {
		return err
	}
	if pend.Empty() {
		return errEmpty
	}
	res, err := l.p.Next(ctx, l.c)
	if err != nil {
		return err
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

// coreLoop is nats.go's core request/reply with the same wire bodies: an
// empty consumer-info request, this project's pull body, and "+ACK" with a
// reply subject, each a nats.Conn.Request bounded by opBound. It does the
// least a caller must: decode the info's counters and error, check that
// the pull answered with a message carrying an ack subject, and that the
// receipt is empty. It checks no profile and parses no ack subject.
type coreLoop struct {
	nc         *nats.Conn
	info, next string
	body, ack  []byte
}

// statusHeader is the header nats.go fills from a status line.
const statusHeader = "Status"

// coreInfo is what the core loop decodes of the consumer-info reply.
type coreInfo struct {
	NumPending    uint64    `json:"num_pending"`
	NumAckPending int       `json:"num_ack_pending"`
	Error         *apiError `json:"error"`
}

func newCoreLoop(nc *nats.Conn, b jspull.Binding, body []byte) *coreLoop {
	return &coreLoop{nc: nc, info: b.InfoSubject(), next: b.NextSubject(), body: body, ack: []byte("+ACK")}
}

func (l *coreLoop) step(context.Context) error {
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
	m, err = l.nc.Request(l.next, l.body, opBound)
	if err != nil {
		return fmt.Errorf("peerbench: core: next: %w", err)
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

// jsLoop is nats.go's jetstream API with the closest options it accepts:
// Consumer.Info, Consumer.Fetch(1, FetchMaxWait(100 ms),
// FetchMaxBytes(ceiling+9216)) and Msg.DoubleAck. It cannot send the
// profile's pull: Fetch has no no_wait, FetchNoWait takes no expiry and no
// max_bytes. The jetstream calls get the round's context, not one per
// operation, so that the harness adds no allocation of its own.
type jsLoop struct {
	cons     jetstream.Consumer
	maxBytes int
}

func newJSLoop(ctx context.Context, nc *nats.Conn, b jspull.Binding) (*jsLoop, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	cons, err := js.Consumer(ctx, b.Stream, b.Consumer)
	if err != nil {
		return nil, err
	}
	return &jsLoop{cons: cons, maxBytes: b.MaxBytes()}, nil
}

func (l *jsLoop) step(ctx context.Context) error {
	info, err := l.cons.Info(ctx)
	if err != nil {
		return fmt.Errorf("peerbench: jetstream: info: %w", err)
	}
	if info.NumPending == 0 && info.NumAckPending == 0 {
		return errEmpty
	}
	batch, err := l.cons.Fetch(1, jetstream.FetchMaxWait(jspull.RequestExpires), jetstream.FetchMaxBytes(l.maxBytes))
	if err != nil {
		return fmt.Errorf("peerbench: jetstream: fetch: %w", err)
	}
	msg := <-batch.Messages()
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

// emptyInspect is the visit to a dormant consumer this project makes: one
// Inspect whose counters prove that a pull would deliver nothing.
type emptyInspect struct{ latentLoop }

func (l *emptyInspect) step(ctx context.Context) error {
	pend, err := l.p.Inspect(ctx, l.c)
	if err != nil {
		return err
	}
	if !pend.Empty() {
		return fmt.Errorf("peerbench: empty consumer not proven empty: %+v", pend)
	}
	return nil
}

// emptyPull is the visit that pulls anyway: the profile's no-wait pull with
// its 100 ms expiry, which the broker holds until it expires (408).
type emptyPull struct{ latentLoop }

func (l *emptyPull) step(ctx context.Context) error {
	res, err := l.p.Next(ctx, l.c)
	if err != nil {
		return err
	}
	if res.Kind != jspull.KindRequestTimeout {
		return fmt.Errorf("peerbench: empty pull answered %v, want %v", res.Kind, jspull.KindRequestTimeout)
	}
	return nil
}

// floorSubject has no subscriber: the broker answers a request to it with
// a 503 status from the requesting connection's own read loop, without
// JetStream, which makes it the cheapest round trip the broker offers.
const floorSubject = "peerbench.floor"

// floorRoundTrips is the number of bare round trips of one floor visit:
// as many as a visit of the profile makes.
const floorRoundTrips = 3

// latentFloor is three bare round trips over this project's conn.Conn:
// what any visit of three sequential round trips costs this client before
// it does any of the profile's work.
type latentFloor struct{ c *conn.Conn }

func (l *latentFloor) step(ctx context.Context) error {
	for range floorRoundTrips {
		r, err := l.c.Request(ctx, floorSubject, nil, nil)
		if err != nil {
			return fmt.Errorf("peerbench: floor: %w", err)
		}
		if r.Status != 503 {
			return fmt.Errorf("peerbench: floor: status %d, want 503", r.Status)
		}
	}
	return nil
}

// natsFloor is the same three bare round trips over nats.go's core
// request/reply.
type natsFloor struct{ nc *nats.Conn }

func (l *natsFloor) step(context.Context) error {
	for range floorRoundTrips {
		if _, err := l.nc.Request(floorSubject, nil, opBound); !errors.Is(err, nats.ErrNoResponders) {
			return fmt.Errorf("peerbench: nats.go floor: %v, want no responders", err)
		}
	}
	return nil
}
