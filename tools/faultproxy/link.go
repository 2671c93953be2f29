package faultproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// endKind is how a connection ends.
type endKind uint8

const (
	// endClose closes both sockets: both ends were forwarded, or the proxy
	// is closing.
	endClose endKind = iota + 1
	// endFIN sends FIN both ways, drains input for up to FINLinger, then
	// closes.
	endFIN
	// endRST resets both sockets.
	endRST
)

// endCause is why a connection ends, for Stats.
type endCause uint8

const (
	causeDone  endCause = iota + 1 // both directions forwarded their end
	causeCut                       // a CutFIN or CutRST fault
	causeSever                     // Proxy.Sever
	causeClose                     // Proxy.Close
	causePeer                      // a peer reset, or a write to it failed
)

// link is one proxied connection: the accepted client socket, the socket
// to the target, and a pipe per direction.
type link struct {
	p      *Proxy
	client *net.TCPConn
	server *net.TCPConn
	pipes  [2]*pipe      // by Direction - 1
	done   chan struct{} // closed when the link starts ending
	close  sync.Once     // closes the sockets

	// Under p.mu.
	ending  bool
	ended   int // directions whose end of input was forwarded
	readers int // reader goroutines still running
}

// pipe is one direction of a link: read from src into the queue, written
// from the queue to dst by the writer under the fault in force.
type pipe struct {
	l        *link
	dir      Direction
	src, dst *net.TCPConn
	wake     chan struct{} // to the writer: queue or fault changed
	room     chan struct{} // to the reader: the queue shrank

	// Under p.mu.
	queue  []chunk
	queued int       // bytes in queue
	eof    bool      // src ended after the queued chunks
	eofAt  time.Time // when src ended
}

// chunk is one read, with the time it was read.
type chunk struct {
	b  []byte
	at time.Time
}

func newLink(p *Proxy, client, server *net.TCPConn) *link {
	l := &link{p: p, client: client, server: server, done: make(chan struct{}), readers: 2}
	l.pipes[Up-1] = &pipe{l: l, dir: Up, src: client, dst: server,
		wake: make(chan struct{}, 1), room: make(chan struct{}, 1)}
	l.pipes[Down-1] = &pipe{l: l, dir: Down, src: server, dst: client,
		wake: make(chan struct{}, 1), room: make(chan struct{}, 1)}
	return l
}

// read moves src into the queue, at most MaxQueuedBytes at a time. Once
// the link is ending it reads and drops until src fails (a FIN's drain).
func (q *pipe) read() {
	p, l := q.l.p, q.l
	defer p.wg.Done()
	defer q.readerDone()
	buf := make([]byte, ChunkSize)
	for {
		p.mu.Lock()
		for !l.ending && q.queued >= MaxQueuedBytes {
			p.mu.Unlock()
			select {
			case <-q.room:
			case <-l.done:
			}
			p.mu.Lock()
		}
		n := ChunkSize
		if !l.ending {
			n = min(n, MaxQueuedBytes-q.queued)
		}
		p.mu.Unlock()

		n, err := q.src.Read(buf[:n])

		p.mu.Lock()
		st := p.stats.dir(q.dir)
		ending := l.ending
		if n > 0 {
			st.Read += int64(n)
			if ending {
				st.Dropped += int64(n)
			} else {
				q.queue = append(q.queue, chunk{b: append([]byte(nil), buf[:n]...), at: time.Now()})
				q.queued += n
				st.Queued += int64(n)
			}
			p.notify()
		}
		if errors.Is(err, io.EOF) && !ending {
			q.eof, q.eofAt = true, time.Now()
		}
		p.mu.Unlock()
		if n > 0 || err != nil {
			signal(q.wake)
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF), ending:
			return
		default:
			l.end(endRST, causePeer)
			return
		}
	}
}

// readerDone closes the sockets when the last reader of an ending link
// returns (the end of a FIN's drain).
func (q *pipe) readerDone() {
	p, l := q.l.p, q.l
	p.mu.Lock()
	l.readers--
	last := l.readers == 0 && l.ending
	p.mu.Unlock()
	if last {
		l.closeSockets()
	}
}

// write applies the fault in force to the head of the queue until the
// link ends or the direction's end has been forwarded or dropped.
func (q *pipe) write() {
	p, l := q.l.p, q.l
	defer p.wg.Done()
	var seen uint64 // the gen of the fault last applied; 0 before the first
	var budget int64
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		p.mu.Lock()
		if l.ending {
			p.mu.Unlock()
			return
		}
		s := p.faults[q.dir-1]
		if s.gen != seen {
			seen, budget = s.gen, s.f.After
		}
		f := s.f
		if f.Kind.cut() && budget == 0 {
			p.mu.Unlock()
			l.end(cutEnd(f.Kind), causeCut)
			return
		}
		var wait time.Duration // > 0: the head is due then
		blocked := false
		switch {
		case len(q.queue) == 0 && !q.eof, f.Kind == Stall:
			blocked = true
		case f.Kind == Latency:
			at := q.eofAt
			if len(q.queue) > 0 {
				at = q.queue[0].at
			}
			if wait = time.Until(at.Add(f.Delay)); wait > 0 {
				blocked = true
			}
		}
		if blocked {
			p.mu.Unlock()
			var due <-chan time.Time
			if wait > 0 {
				timer.Reset(wait)
				due = timer.C
			}
			select {
			case <-q.wake:
			case <-due:
			case <-l.done:
				return
			}
			continue
		}
		st := p.stats.dir(q.dir)
		if len(q.queue) == 0 { // the end of input is at the head
			q.eof = false
			p.mu.Unlock()
			if f.Kind == Blackhole || q.forwardEnd() {
				q.afterEnd(seen)
			}
			return
		}
		head := &q.queue[0]
		n := len(head.b)
		if f.Kind.cut() {
			n = int(min(int64(n), budget))
		}
		b := head.b[:n]
		if head.b = head.b[n:]; len(head.b) == 0 {
			q.queue[0] = chunk{}
			q.queue = q.queue[1:]
		}
		q.queued -= n
		st.Queued -= int64(n)
		if f.Kind == Blackhole {
			st.Dropped += int64(n)
			p.notify()
			p.mu.Unlock()
			signal(q.room)
			continue
		}
		p.mu.Unlock()
		signal(q.room)

		w, err := q.dst.Write(b)

		p.mu.Lock()
		st.Forwarded += int64(w)
		st.Dropped += int64(n - w)
		p.notify()
		p.mu.Unlock()
		if f.Kind.cut() {
			budget -= int64(w)
		}
		if err != nil {
			l.end(endRST, causePeer)
			return
		}
	}
}

// forwardEnd half-closes dst; the link closes once both ends are through.
// It reports whether the link is still open.
func (q *pipe) forwardEnd() bool {
	p, l := q.l.p, q.l
	if err := q.dst.CloseWrite(); err != nil {
		l.end(endRST, causePeer)
		return false
	}
	p.mu.Lock()
	l.ended++
	both := l.ended == 2
	p.mu.Unlock()
	if both {
		l.end(endClose, causeDone)
		return false
	}
	return true
}

// afterEnd serves a direction whose end went through (or was dropped)
// until the link ends: no byte will pass any more, so of the faults set
// from now on only a cut with After 0 applies.
func (q *pipe) afterEnd(seen uint64) {
	p, l := q.l.p, q.l
	for {
		select {
		case <-q.wake:
		case <-l.done:
			return
		}
		p.mu.Lock()
		s := p.faults[q.dir-1]
		p.mu.Unlock()
		if s.gen != seen && s.f.Kind.cut() && s.f.After == 0 {
			l.end(cutEnd(s.f.Kind), causeCut)
			return
		}
		seen = s.gen
	}
}

// cutEnd is how a cut of kind k ends a link.
func cutEnd(k Kind) endKind {
	if k == CutRST {
		return endRST
	}
	return endFIN
}

// end ends the link once: the queues are dropped, the goroutines told,
// and the sockets closed as how says. It reports whether this call ended
// it.
func (l *link) end(how endKind, why endCause) bool {
	p := l.p
	p.mu.Lock()
	if l.ending {
		p.mu.Unlock()
		return false
	}
	l.ending = true
	p.stats.Open--
	switch why {
	case causeCut:
		p.stats.Cut++
	case causeSever:
		p.stats.Severed++
	}
	for _, q := range l.pipes {
		st := p.stats.dir(q.dir)
		st.Dropped += int64(q.queued)
		st.Queued -= int64(q.queued)
		q.queue, q.queued, q.eof = nil, 0, false
	}
	p.notify()
	drain := l.readers > 0
	p.mu.Unlock()
	close(l.done)

	switch how {
	case endFIN:
		_ = l.client.CloseWrite()
		_ = l.server.CloseWrite()
		if !drain {
			l.closeSockets()
			break
		}
		deadline := time.Now().Add(FINLinger)
		_ = l.client.SetReadDeadline(deadline)
		_ = l.server.SetReadDeadline(deadline)
	case endRST:
		_ = l.client.SetLinger(0)
		_ = l.server.SetLinger(0)
		l.closeSockets()
	default:
		l.closeSockets()
	}
	return true
}

// closeSockets closes both sockets once and forgets the link.
func (l *link) closeSockets() {
	l.close.Do(func() {
		_ = l.client.Close()
		_ = l.server.Close()
		l.p.mu.Lock()
		delete(l.p.links, l)
		l.p.mu.Unlock()
	})
}
