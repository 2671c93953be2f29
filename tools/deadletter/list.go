package deadletter

import (
	"context"
	"fmt"
	"math"

	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/tools/provision"
)

// Bounds of Query.Limit: how many captured advisories one List reads, one
// request each.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// advisoryAny is the token that matches both give-up advisories in a
// filter: "$JS.EVENT.ADVISORY.CONSUMER.*.<stream>.<consumer>" (the
// capture stream holds no other consumer advisory).
const advisoryFilterPrefix = "$JS.EVENT.ADVISORY.CONSUMER.*."

// Query chooses what List reads from the dead-letter capture stream.
type Query struct {
	// Stream and Consumer name a binding's consumer (the asset-name rule
	// of jspull.ValidName). Both are required.
	Stream, Consumer string
	// After is a capture-stream sequence: entries recorded after it are
	// read (0: from the first one kept). Page.Next continues a page.
	After uint64
	// Limit is the most captured advisories read, 1 to MaxLimit; zero
	// means DefaultLimit.
	Limit int
}

// Page is what one List read.
type Page struct {
	// Entries are the give-ups of the consumer, oldest first.
	Entries []Entry
	// Skipped are the capture-stream sequences of messages on the
	// consumer's advisory subjects that are not an advisory of the shape
	// nats-server 2.14.6 sends (see decodeAdvisory): counted in Limit,
	// never listed as entries.
	Skipped []uint64
	// Next is the capture-stream sequence of the last message read (After
	// when none was): pass it as Query.After for the next page.
	Next uint64
	// More reports that the page ended at its limit: there may be more.
	More bool
}

// List reads the consumer's give-ups from the account's dead-letter
// capture stream (provision.DeadLetterStream), oldest first: at most
// q.Limit messages, one $JS.API.STREAM.MSG.GET request each (the first
// message after the previous one whose subject is one of the consumer's
// two give-up advisories), each bounded by the client's timeout; ctx
// bounds the whole. Errors: ErrInvalidArgument, ErrNoCapture (no capture
// stream), ErrRequestDenied, and the connection's; the entries read
// before an error are returned with it.
func (c *Client) List(ctx context.Context, q Query) (Page, error) {
	if err := jspull.ValidName(q.Stream); err != nil {
		return Page{}, fmt.Errorf("%w: stream: %w", ErrInvalidArgument, err)
	}
	if err := jspull.ValidName(q.Consumer); err != nil {
		return Page{}, fmt.Errorf("%w: consumer: %w", ErrInvalidArgument, err)
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	if limit < 1 || limit > MaxLimit {
		return Page{}, fmt.Errorf("%w: limit must be 1 to %d", ErrInvalidArgument, MaxLimit)
	}
	filter := advisoryFilterPrefix + q.Stream + "." + q.Consumer
	page := Page{Next: q.After}
	for range limit {
		if page.Next == math.MaxUint64 {
			return page, nil
		}
		m, found, err := c.msgGet(ctx, provision.DeadLetterStream, msgGetRequest{Seq: page.Next + 1, NextFor: filter}, ErrNoCapture)
		if err != nil {
			return page, err
		}
		if !found {
			return page, nil
		}
		page.Next = m.Seq
		if e, ok := decodeAdvisory(m.Subject, m.Data, m.Seq); ok {
			page.Entries = append(page.Entries, e)
		} else {
			page.Skipped = append(page.Skipped, m.Seq)
		}
	}
	page.More = true
	return page, nil
}
