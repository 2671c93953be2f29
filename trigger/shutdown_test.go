package trigger

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/fakeserver"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/pull"
)

// shutdownWithin bounds how long Run, Step or Close may take to return
// once the owner's context is cancelled (or Close called) while the step
// waits on a stalled broker. The runtime promises 50 ms plus the host's
// activation; the interruption itself is a deadline set on the socket and
// the poller waking the stepping goroutine (well under a millisecond on an
// idle machine, logged by each case). The bound is ten times the promise
// because the machines that run these tests are shared and loaded, and a
// goroutine can wait that long for a processor; without the interruption
// every case but the pull would wait out the 10 s operation timeout, and
// the pull case is held to its own, shorter bound below.
const shutdownWithin = 500 * time.Millisecond

// stallPhase is a phase of a visit in which the scripted broker stops
// answering, with the script that gets there.
type stallPhase struct {
	name   string
	script []fakeserver.Step
	// activated: the host's activation ran before the stall (the ack
	// phase); then the acknowledgement was written but its receipt never
	// came.
	activated bool
	// pull: the stall is the pull, whose own bound (the expiry and margin)
	// is shorter than shutdownWithin; the return must come before it.
	pull bool
}

// stallPhases returns a script per phase of a visit to binding b over a
// connection with inbox prefix inbox: the TLS handshake (the dial), the
// INFO, the PONG after CONNECT, consumer info, the pull, the
// acknowledgement's receipt.
func stallPhases(b Binding, inbox string, nextBody []byte) []stallPhase {
	msg := func(subject, reply, payload string) fakeserver.Step {
		if reply != "" {
			reply += " "
		}
		return fakeserver.SendString("MSG " + subject + " 1 " + reply + strconv.Itoa(len(payload)) + "\r\n" + payload + "\r\n")
	}
	const serverInfo = `{"server_id":"NFAKE","version":"2.14.6","proto":1,"headers":true,"max_payload":1048576,"tls_required":true}`
	ack := "$JS.ACK." + b.Stream + "." + b.Consumer + ".1.1.1.1767322245000000000.0"
	connect := []fakeserver.Step{
		fakeserver.Handshake(),
		fakeserver.Send(fakeserver.Info(serverInfo)),
		fakeserver.ExpectPrefix("CONNECT {"),
		fakeserver.ExpectPrefix("SUB " + inbox + ".* 1\r\n"),
		fakeserver.ExpectPrefix("PING\r\n"),
	}
	connected := append(connect[:len(connect):len(connect)],
		fakeserver.SendString("PONG\r\n"),
		fakeserver.Send(fakeserver.Info(serverInfo)),
	)
	info := append(connected[:len(connected):len(connected)],
		fakeserver.ExpectPrefix("PUB $JS.API.CONSUMER.INFO."+b.Stream+"."+b.Consumer+" "+inbox+".1 0\r\n"),
		fakeserver.ExpectPrefix("\r\n"),
	)
	pulled := append(info[:len(info):len(info)],
		msg(inbox+".1", "", fakeInfoJSON(b)),
		fakeserver.ExpectPrefix("PUB $JS.API.CONSUMER.MSG.NEXT."+b.Stream+"."+b.Consumer+" "+inbox+".2 "),
		fakeserver.ExpectPrefix(string(nextBody)+"\r\n"),
	)
	acked := append(pulled[:len(pulled):len(pulled)],
		msg(b.FilterSubject, ack, `["once"]`),
		fakeserver.ExpectPrefix("PUB "+ack+" "+inbox+".3 4\r\n"),
		fakeserver.ExpectPrefix("+ACK\r\n"),
	)
	stall := func(s []fakeserver.Step) []fakeserver.Step {
		return append(s[:len(s):len(s)], fakeserver.Stall())
	}
	return []stallPhase{
		{name: "tls", script: stall([]fakeserver.Step{fakeserver.ReadClientHello()})},
		{name: "info", script: stall([]fakeserver.Step{fakeserver.Handshake()})},
		{name: "pong", script: stall(connect)},
		{name: "consumer info", script: stall(info)},
		{name: "pull", script: stall(pulled), pull: true},
		{name: "ack", script: stall(acked), activated: true},
	}
}

// stallRig is a runtime with one binding whose operation timeout is the
// longest allowed, dialling the scripted server.
func stallRig(t *testing.T) (*rig, Binding, string, []byte) {
	t.Helper()
	cfg := rtConfig(t, 1)
	cfg.Bindings[0].OperationTimeoutMS = maxOperationTimeoutMS
	cfg.Bindings[0].RootBudgetMS = maxOperationTimeoutMS
	cfg.Bindings[0].AckWaitMS = maxOperationTimeoutMS + AckWaitMarginMS
	b := cfg.Bindings[0]
	pc, err := jspull.NewConsumer(jspull.Binding{
		Stream: b.Stream, Consumer: b.Consumer, FilterSubject: b.FilterSubject,
		PayloadCeiling: b.MaxPayloadBytes, AckWait: b.AckWait(), MaxDeliver: b.MaxDeliver,
	}, jspull.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return newRig(t, cfg, PoolLimits{}), b, InboxPrefix(cfg.Tenants[0].ID) + ".0000000000000000000000", pc.NextBody()
}

// dialTo makes r's runtime dial srv.
func dialTo(r *rig, srv *fakeserver.Server) {
	r.trig.dial = func(ctx context.Context, ts *tenantState) (link, error) {
		c := r.trig.connConfig(ts)
		c.Addr, c.AllowNonPublic, c.ServerName, c.Roots = srv.Addr(), srv.Addr().Addr(), srv.ServerName(), srv.RootCAs()
		c.Rand = zeroRand{}
		cn, err := conn.Dial(ctx, c)
		if err != nil {
			return nil, err
		}
		return r.trig.newConnLink(cn, ts), nil
	}
}

// awaitStall waits until srv's script reached its stall, failing if done
// reports first.
func awaitStall(t *testing.T, srv *fakeserver.Server, done <-chan error) {
	t.Helper()
	select {
	case <-srv.Stalled():
	case err := <-done:
		t.Fatalf("returned before the stall: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the script never reached its stall")
	}
}

// awaitReturn waits for done after the stop made at start and checks the
// bound: shutdownWithin, and for a stalled pull its own bound from the
// stall, which without the interruption it would run into.
func awaitReturn(t *testing.T, done <-chan error, start, stalled time.Time, ph stallPhase) error {
	t.Helper()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("no return 30 s after the stop")
	}
	at := time.Now()
	took := at.Sub(start)
	t.Logf("%s: returned %v after the stop", ph.name, took)
	if took > shutdownWithin {
		t.Errorf("returned %v after the stop, want within %v", took, shutdownWithin)
	}
	if pullBound := stalled.Add(jspull.RequestExpires + jspull.DefaultNextMargin); ph.pull && !at.Before(pullBound) {
		t.Errorf("returned at the pull's own bound, not interrupted")
	}
	return err
}

// checkReleased checks that nothing is held after a stop: no reservation of
// the host, no request, client or connection in the pools, one activation
// at most (the ack phase's) and, in the monitor, no verified
// acknowledgement.
func checkReleased(t *testing.T, r *rig, ph stallPhase) {
	t.Helper()
	if n := r.host.held(); n != 0 {
		t.Errorf("%d host reservations still held", n)
	}
	if u := r.pools.Usage(); u.Requests != 0 || u.Clients != 0 || u.Connections != 0 {
		t.Errorf("pools usage %+v: requests, clients or connections still held", u)
	}
	acts, _ := r.host.acts()
	if want := map[bool]int{false: 0, true: 1}[ph.activated]; len(acts) != want {
		t.Errorf("%d activations, want %d", len(acts), want)
	}
	tot := r.mon.Snapshot().Totals
	want := Counts{Visits: tot.Visits}
	if ph.activated {
		// The acknowledgement was written; its receipt never came.
		want.Delivered, want.Acked, want.Uncertain = 1, 1, 1
	}
	got := Counts{Visits: tot.Visits, Delivered: tot.Delivered, Acked: tot.Acked, Uncertain: tot.Uncertain,
		Termed: tot.Termed, Nacked: tot.Nacked, Exhausted: tot.Exhausted, Late: tot.Late, Empty: tot.Empty, EmptyPulls: tot.EmptyPulls}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Counts{})); diff != "" {
		t.Errorf("monitor totals (-want +got):\n%s", diff)
	}
	if last, ok := r.mon.LastStep(); ph.activated && (!ok || last.Ack != pull.AckUncertain) {
		t.Errorf("last step %+v (%v), want its ack uncertain", last, ok)
	}
}

// TestRunStopsPromptlyInEveryPhase stalls the broker in each phase of a
// visit and cancels Run's context there: Run returns nil at once, not at
// the 10 s operation timeout, with every reservation released and nothing
// acknowledged but what was written before the stall.
func TestRunStopsPromptlyInEveryPhase(t *testing.T) {
	_, b, inbox, body := stallRig(t)
	for _, ph := range stallPhases(b, inbox, body) {
		t.Run(ph.name, func(t *testing.T) {
			r, _, _, _ := stallRig(t)
			srv, err := fakeserver.Start(t.Context(), fakeserver.Config{Script: ph.script})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Close() })
			dialTo(r, srv)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- r.trig.Run(ctx, r.host) }()
			awaitStall(t, srv, done)
			stalled := time.Now()
			cancel()
			if err := awaitReturn(t, done, stalled, stalled, ph); err != nil {
				t.Errorf("Run = %v, want nil", err)
			}
			checkReleased(t, r, ph)
		})
	}
}

// TestStepStopsPromptlyInEveryPhase is TestRunStopsPromptlyInEveryPhase
// for an explicit driver's Step: it returns ctx's error at once.
func TestStepStopsPromptlyInEveryPhase(t *testing.T) {
	_, b, inbox, body := stallRig(t)
	for _, ph := range stallPhases(b, inbox, body) {
		t.Run(ph.name, func(t *testing.T) {
			r, _, _, _ := stallRig(t)
			srv, err := fakeserver.Start(t.Context(), fakeserver.Config{Script: ph.script})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Close() })
			dialTo(r, srv)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := r.trig.Step(ctx, r.host)
				r.trig.CloseIdle()
				done <- err
			}()
			awaitStall(t, srv, done)
			stalled := time.Now()
			cancel()
			err = awaitReturn(t, done, stalled, stalled, ph)
			switch {
			case ph.activated && err != nil:
				// The uncertain acknowledgement ends the step's flow; the
				// step itself reports it, not an error.
				t.Errorf("Step = %v, want nil: the step ended with an uncertain ack", err)
			case !ph.activated && !errors.Is(err, context.Canceled):
				t.Errorf("Step = %v, want context.Canceled", err)
			}
			checkReleased(t, r, ph)
		})
	}
}

// TestCloseStopsPromptly: Close and Pools.Close, called from another
// goroutine while Run's step waits on a stalled broker, end that step at
// once (Run returns ErrClosed) and return themselves within the same
// bound; everything the installation held is released.
func TestCloseStopsPromptly(t *testing.T) {
	_, b, inbox, body := stallRig(t)
	phases := stallPhases(b, inbox, body)
	for _, byPools := range []bool{false, true} {
		for _, ph := range []stallPhase{phases[1], phases[3]} {
			t.Run(fmt.Sprintf("%s/pools %v", ph.name, byPools), func(t *testing.T) {
				r, _, _, _ := stallRig(t)
				srv, err := fakeserver.Start(t.Context(), fakeserver.Config{Script: ph.script})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = srv.Close() })
				dialTo(r, srv)
				done := make(chan error, 1)
				go func() { done <- r.trig.Run(t.Context(), r.host) }()
				awaitStall(t, srv, done)
				start := time.Now()
				if byPools {
					r.pools.Close()
				} else {
					r.trig.Close()
				}
				t.Logf("Close returned %v after it was called", time.Since(start))
				if err := awaitReturn(t, done, start, start, ph); !errors.Is(err, ErrClosed) {
					t.Errorf("Run = %v, want ErrClosed", err)
				}
				checkReleased(t, r, ph)
				if u := r.pools.Usage(); u != (Usage{}) {
					t.Errorf("pools usage %+v after Close, want none", u)
				}
			})
		}
	}
}
