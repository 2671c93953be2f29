package faultproxy

import "context"

// Stats are the proxy's counts since Start.
type Stats struct {
	// Accepted counts connections accepted on the proxy's address.
	Accepted int64
	// Refused counts accepted connections reset because the target could
	// not be dialled.
	Refused int64
	// Open counts connections forwarding now.
	Open int64
	// Cut counts connections ended by CutFIN or CutRST.
	Cut int64
	// Severed counts connections reset by Sever.
	Severed int64
	// Up and Down count the bytes of each direction.
	Up, Down DirStats
}

// DirStats count the bytes of one direction over all connections. At any
// moment Read = Forwarded + Dropped + Queued, but for the chunk a writer
// is writing.
type DirStats struct {
	// Read counts bytes read from the senders.
	Read int64
	// Forwarded counts bytes written to the receivers.
	Forwarded int64
	// Dropped counts bytes read and never forwarded: blackholed, queued when
	// a connection ended, read while a cut connection drained.
	Dropped int64
	// Queued counts bytes read and waiting to be forwarded now.
	Queued int64
}

// Dir returns the counts of direction d (zero for an invalid one).
func (s Stats) Dir(d Direction) DirStats {
	switch d {
	case Up:
		return s.Up
	case Down:
		return s.Down
	default:
		return DirStats{}
	}
}

// dir returns the counts of a valid direction d, to update under p.mu.
func (s *Stats) dir(d Direction) *DirStats {
	if d == Up {
		return &s.Up
	}
	return &s.Down
}

// Stats returns the counts now.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// notify wakes the waiters; p.mu is held.
func (p *Proxy) notify() {
	if p.changed != nil {
		close(p.changed)
		p.changed = nil
	}
}

// Wait blocks until cond holds for the counts, and returns them. cond is
// called without the proxy's lock, once per change, and may call the
// proxy. ctx must have a deadline (ErrNoDeadline); when it ends first the
// error is a *WaitError. A closed proxy whose counts do not satisfy cond
// returns ErrClosed.
func (p *Proxy) Wait(ctx context.Context, cond func(Stats) bool) (Stats, error) {
	if _, ok := ctx.Deadline(); !ok {
		return p.Stats(), ErrNoDeadline
	}
	for {
		p.mu.Lock()
		s, closed := p.stats, p.closed
		if p.changed == nil {
			p.changed = make(chan struct{})
		}
		changed := p.changed
		p.mu.Unlock()
		if cond(s) {
			return s, nil
		}
		if closed {
			return s, ErrClosed
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return s, &WaitError{Stats: s, Err: ctx.Err()}
		}
	}
}

// WaitAccepted waits until n connections have been accepted in all (see
// Wait).
func (p *Proxy) WaitAccepted(ctx context.Context, n int64) (Stats, error) {
	return p.Wait(ctx, func(s Stats) bool { return s.Accepted >= n })
}

// WaitForwarded waits until n bytes have been forwarded in direction d
// over all connections (see Wait). It refuses an invalid direction.
func (p *Proxy) WaitForwarded(ctx context.Context, d Direction, n int64) (Stats, error) {
	if !d.valid() {
		return p.Stats(), ErrInvalidDirection
	}
	return p.Wait(ctx, func(s Stats) bool { return s.Dir(d).Forwarded >= n })
}
