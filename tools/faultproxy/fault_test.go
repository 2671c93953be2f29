package faultproxy_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/tools/faultproxy"
)

// testDelay is the Latency of these tests.
const testDelay = 150 * time.Millisecond

// placement is one direction and whether its fault is set on an open
// connection that has already carried bytes or before a new one is dialled.
type placement struct {
	name      string
	dir       faultproxy.Direction
	midStream bool
}

var placements = []placement{
	{"up/mid-stream", faultproxy.Up, true},
	{"up/new connection", faultproxy.Up, false},
	{"down/mid-stream", faultproxy.Down, true},
	{"down/new connection", faultproxy.Down, false},
}

// earlyBytes is what a mid-stream placement sends before the fault.
const earlyBytes = 64

// open returns a link through p with f on pl.dir, and the bytes forwarded
// in pl.dir before f was set.
func open(t *testing.T, p *faultproxy.Proxy, pe *peer, pl placement, f faultproxy.Fault) (link, int64) {
	t.Helper()
	if !pl.midStream {
		set(t, p, pl.dir, f)
		return dialLink(t, p, pe), 0
	}
	l := dialLink(t, p, pe)
	sender, receiver := l.ends(pl.dir)
	early := payload(earlyBytes, 1)
	write(t, sender, early)
	if got := readN(t, receiver, earlyBytes); !bytes.Equal(got, early) {
		t.Fatalf("before the fault: read %x, want %x", got, early)
	}
	if _, err := p.WaitForwarded(waitCtx(t), pl.dir, earlyBytes); err != nil {
		t.Fatalf("before the fault: %v", err)
	}
	set(t, p, pl.dir, f)
	return l, earlyBytes
}

// TestPass: bytes go through both ways, in order, and are counted.
func TestPass(t *testing.T) {
	pe := startPeer(t)
	p := startProxy(t, pe.addr())
	l := dialLink(t, p, pe)
	up, down := payload(70_000, 2), payload(5, 3)
	write(t, l.client, up)
	if got := readN(t, l.server, len(up)); !bytes.Equal(got, up) {
		t.Fatal("up: bytes differ")
	}
	write(t, l.server, down)
	if got := readN(t, l.client, len(down)); !bytes.Equal(got, down) {
		t.Fatal("down: bytes differ")
	}
	s := waitStats(t, p, "counts", func(s faultproxy.Stats) bool {
		return s.Up.Forwarded == int64(len(up)) && s.Down.Forwarded == int64(len(down))
	})
	want := faultproxy.Stats{
		Accepted: 1, Open: 1,
		Up:   faultproxy.DirStats{Read: int64(len(up)), Forwarded: int64(len(up))},
		Down: faultproxy.DirStats{Read: int64(len(down)), Forwarded: int64(len(down))},
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

// TestHalfClose: a sender's FIN is forwarded after its bytes, the other
// direction keeps working, and the connection is closed once both ends
// went through.
func TestHalfClose(t *testing.T) {
	pe := startPeer(t)
	p := startProxy(t, pe.addr())
	l := dialLink(t, p, pe)
	write(t, l.client, []byte("last words"))
	if err := l.client.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := readToEnd(l.server, 100)
	if !errors.Is(err, io.EOF) || string(got) != "last words" {
		t.Fatalf("server read %q, %v; want %q, EOF", got, err, "last words")
	}
	write(t, l.server, []byte("reply"))
	if err := l.server.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err = readToEnd(l.client, 100)
	if !errors.Is(err, io.EOF) || string(got) != "reply" {
		t.Fatalf("client read %q, %v; want %q, EOF", got, err, "reply")
	}
	waitStats(t, p, "the connection closed", func(s faultproxy.Stats) bool { return s.Open == 0 })
}

// TestBlackhole: bytes are read and dropped, the connection stays open,
// and once cleared later bytes arrive (and none of the dropped ones).
func TestBlackhole(t *testing.T) {
	for _, pl := range placements {
		t.Run(pl.name, func(t *testing.T) {
			pe := startPeer(t)
			p := startProxy(t, pe.addr())
			l, early := open(t, p, pe, pl, faultproxy.Fault{Kind: faultproxy.Blackhole})
			sender, receiver := l.ends(pl.dir)
			lost := payload(3000, 4)
			write(t, sender, lost)
			waitStats(t, p, "the bytes dropped", func(s faultproxy.Stats) bool {
				return s.Dir(pl.dir).Dropped == int64(len(lost))
			})
			if err := p.Clear(pl.dir); err != nil {
				t.Fatal(err)
			}
			marker := payload(10, 5)
			write(t, sender, marker)
			if got := readN(t, receiver, len(marker)); !bytes.Equal(got, marker) {
				t.Fatalf("after clearing: read %x, want the marker %x", got, marker)
			}
			s := waitStats(t, p, "the marker", func(s faultproxy.Stats) bool {
				return s.Dir(pl.dir).Forwarded == early+int64(len(marker))
			})
			want := faultproxy.DirStats{Read: early + int64(len(lost)+len(marker)), Forwarded: early + int64(len(marker)), Dropped: int64(len(lost))}
			if diff := cmp.Diff(want, s.Dir(pl.dir)); diff != "" {
				t.Errorf("%v counts (-want +got):\n%s", pl.dir, diff)
			}
		})
	}
}

// TestStall: bytes are held, none forwarded, and once cleared exactly the
// held bytes arrive, in order, followed by later ones.
func TestStall(t *testing.T) {
	for _, pl := range placements {
		t.Run(pl.name, func(t *testing.T) {
			pe := startPeer(t)
			p := startProxy(t, pe.addr())
			l, early := open(t, p, pe, pl, faultproxy.Fault{Kind: faultproxy.Stall})
			sender, receiver := l.ends(pl.dir)
			held := payload(50_000, 6)
			for _, part := range [][]byte{held[:1], held[1:20_000], held[20_000:]} {
				write(t, sender, part)
			}
			s := waitStats(t, p, "the bytes held", func(s faultproxy.Stats) bool {
				return s.Dir(pl.dir).Queued == int64(len(held))
			})
			if got := s.Dir(pl.dir).Forwarded; got != early {
				t.Fatalf("forwarded %d bytes while stalled, want %d", got, early)
			}
			if err := p.Clear(pl.dir); err != nil {
				t.Fatal(err)
			}
			if got := readN(t, receiver, len(held)); !bytes.Equal(got, held) {
				t.Fatal("released bytes differ from the held ones")
			}
			later := payload(7, 7)
			write(t, sender, later)
			if got := readN(t, receiver, len(later)); !bytes.Equal(got, later) {
				t.Fatalf("after the release: read %x, want %x", got, later)
			}
		})
	}
}

// TestStallBound: a stall holds at most MaxQueuedBytes; past it the proxy
// stops reading and the sender is held back, and nothing is lost.
func TestStallBound(t *testing.T) {
	pe := startPeer(t)
	p := startProxy(t, pe.addr())
	set(t, p, faultproxy.Up, faultproxy.Fault{Kind: faultproxy.Stall})
	l := dialLink(t, p, pe)
	all := payload(faultproxy.MaxQueuedBytes+256<<10, 8)
	wrote := make(chan error, 1)
	go func() {
		_, err := l.client.Write(all)
		wrote <- err
	}()
	s := waitStats(t, p, "a full queue", func(s faultproxy.Stats) bool {
		return s.Up.Queued >= faultproxy.MaxQueuedBytes
	})
	want := faultproxy.DirStats{Read: faultproxy.MaxQueuedBytes, Queued: faultproxy.MaxQueuedBytes}
	if diff := cmp.Diff(want, s.Up); diff != "" {
		t.Fatalf("up counts at the bound (-want +got):\n%s", diff)
	}
	if err := p.Clear(faultproxy.Up); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, l.server, len(all)); !bytes.Equal(got, all) {
		t.Fatal("bytes differ after the release")
	}
	if err := <-wrote; err != nil {
		t.Fatalf("sender: %v", err)
	}
}

// TestLatency: each chunk arrives no earlier than the delay after it was
// sent, and a burst arrives in order.
func TestLatency(t *testing.T) {
	for _, pl := range placements {
		t.Run(pl.name, func(t *testing.T) {
			pe := startPeer(t)
			p := startProxy(t, pe.addr())
			l, _ := open(t, p, pe, pl, faultproxy.Fault{Kind: faultproxy.Latency, Delay: testDelay})
			sender, receiver := l.ends(pl.dir)
			for i := range 3 {
				chunk := payload(100+i, byte(10+i))
				start := time.Now()
				write(t, sender, chunk)
				got := readN(t, receiver, len(chunk))
				if elapsed := time.Since(start); elapsed < testDelay {
					t.Errorf("chunk %d arrived after %v, before the delay of %v", i, elapsed, testDelay)
				}
				if !bytes.Equal(got, chunk) {
					t.Fatalf("chunk %d: read %x, want %x", i, got, chunk)
				}
			}
			burst := payload(40_000, 13)
			for _, part := range [][]byte{burst[:3], burst[3:9_000], burst[9_000:]} {
				write(t, sender, part)
			}
			if got := readN(t, receiver, len(burst)); !bytes.Equal(got, burst) {
				t.Fatal("burst out of order")
			}
		})
	}
}

// cutKinds are the two cuts and what a peer reading the connection sees
// after them.
var cutKinds = []struct {
	kind faultproxy.Kind
	end  error
}{
	{faultproxy.CutFIN, io.EOF},
	{faultproxy.CutRST, syscall.ECONNRESET},
}

// cutAfter is the After of TestCut.
const cutAfter = 100

// TestCut: a cut forwards exactly After more bytes and then ends both
// sides: FIN reads as io.EOF, RST as ECONNRESET, at the receiver and at
// the sender.
func TestCut(t *testing.T) {
	for _, ck := range cutKinds {
		for _, pl := range placements {
			t.Run(ck.kind.String()+"/"+pl.name, func(t *testing.T) {
				pe := startPeer(t)
				p := startProxy(t, pe.addr())
				l, early := open(t, p, pe, pl, faultproxy.Fault{Kind: ck.kind, After: cutAfter})
				sender, receiver := l.ends(pl.dir)
				sent := payload(1000, 14)
				write(t, sender, sent)
				got, err := readToEnd(receiver, len(sent))
				if !errors.Is(err, ck.end) {
					t.Errorf("receiver's read ended with %v, want %v", err, ck.end)
				}
				if !bytes.Equal(got, sent[:cutAfter]) {
					t.Errorf("receiver read %d bytes, want exactly the first %d sent", len(got), cutAfter)
				}
				if _, err := readToEnd(sender, 0); !errors.Is(err, ck.end) {
					t.Errorf("sender's read ended with %v, want %v", err, ck.end)
				}
				s := waitStats(t, p, "the cut counted", func(s faultproxy.Stats) bool { return s.Cut == 1 })
				if got, want := s.Dir(pl.dir).Forwarded, early+cutAfter; got != want {
					t.Errorf("forwarded %d bytes, want %d", got, want)
				}
			})
		}
	}
}

// TestCutAtOnce: a cut with After 0 ends an idle connection at once, both
// sides.
func TestCutAtOnce(t *testing.T) {
	for _, ck := range cutKinds {
		for _, pl := range []placement{placements[0], placements[2]} {
			t.Run(ck.kind.String()+"/"+pl.name, func(t *testing.T) {
				pe := startPeer(t)
				p := startProxy(t, pe.addr())
				l, _ := open(t, p, pe, pl, faultproxy.Fault{Kind: ck.kind})
				for _, side := range []struct {
					name string
					c    *net.TCPConn
				}{{"client", l.client}, {"server", l.server}} {
					if got, err := readToEnd(side.c, 0); len(got) != 0 || !errors.Is(err, ck.end) {
						t.Errorf("%s read %d bytes, %v; want 0, %v", side.name, len(got), err, ck.end)
					}
				}
				waitStats(t, p, "the cut counted", func(s faultproxy.Stats) bool { return s.Cut == 1 && s.Open == 0 })
			})
		}
	}
}

// TestCutAtOnceNewConnection: with a cut of After 0 in force, a new
// connection ends as soon as the proxy has connected it to the target:
// the target's side reads the end, and the client either reads it or, for
// a reset that overtook its connect, fails to connect with it.
func TestCutAtOnceNewConnection(t *testing.T) {
	for _, ck := range cutKinds {
		for _, d := range []faultproxy.Direction{faultproxy.Up, faultproxy.Down} {
			t.Run(ck.kind.String()+"/"+d.String(), func(t *testing.T) {
				pe := startPeer(t)
				p := startProxy(t, pe.addr())
				set(t, p, d, faultproxy.Fault{Kind: ck.kind})
				if err := clientEnd(t, p); !errors.Is(err, ck.end) {
					t.Errorf("client: %v; want %v", err, ck.end)
				}
				if got, err := readToEnd(pe.next(t), 0); len(got) != 0 || !errors.Is(err, ck.end) {
					t.Errorf("server read %d bytes, %v; want 0, %v", len(got), err, ck.end)
				}
				waitStats(t, p, "the cut counted", func(s faultproxy.Stats) bool { return s.Cut == 1 && s.Open == 0 })
			})
		}
	}
}

// clientEnd dials p and reads until the connection ends; it returns the
// error that ended it, the dial's own when the end came first.
func clientEnd(t *testing.T, p *faultproxy.Proxy) error {
	t.Helper()
	c, err := net.DialTimeout("tcp4", p.Addr().String(), testTimeout)
	if err != nil {
		return err
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.SetDeadline(time.Now().Add(testTimeout)); err != nil {
		t.Fatal(err)
	}
	got, err := readToEnd(c, 0)
	if len(got) != 0 {
		t.Errorf("client read %d bytes, want none", len(got))
	}
	return err
}

// TestCutAfterEnd: once a direction's end has gone through, a cut with
// After 0 on that direction still ends the connection.
func TestCutAfterEnd(t *testing.T) {
	pe := startPeer(t)
	p := startProxy(t, pe.addr())
	l := dialLink(t, p, pe)
	if err := l.client.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if _, err := readToEnd(l.server, 0); !errors.Is(err, io.EOF) {
		t.Fatalf("server read ended with %v, want EOF", err)
	}
	set(t, p, faultproxy.Up, faultproxy.Fault{Kind: faultproxy.CutRST})
	if _, err := readToEnd(l.client, 0); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("client read ended with %v, want ECONNRESET", err)
	}
	waitStats(t, p, "the cut counted", func(s faultproxy.Stats) bool { return s.Cut == 1 && s.Open == 0 })
}
