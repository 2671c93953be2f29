package trigger

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/internal/fakeserver"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/pull"
)

// zeroRand is an all-zero random source: the inbox token is 22 zeros, so a
// script can name the reply subjects.
type zeroRand struct{}

func (zeroRand) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// fakeInfoJSON is the consumer info of binding b, matching the profile,
// with one message pending.
func fakeInfoJSON(b Binding) string {
	return fmt.Sprintf(`{"type":"io.nats.jetstream.api.v1.consumer_info_response","stream_name":%q,"name":%q,`+
		`"created":"2026-01-02T03:04:05Z","config":{"durable_name":%q,"name":%q,"deliver_policy":"all",`+
		`"ack_policy":"explicit","ack_wait":%d,"max_deliver":%d,"filter_subject":%q,"replay_policy":"instant",`+
		`"max_waiting":1,"max_ack_pending":1,"headers_only":false,"max_batch":1,"max_expires":%d,"max_bytes":%d,`+
		`"num_replicas":0},"delivered":{"consumer_seq":0,"stream_seq":0},"ack_floor":{"consumer_seq":0,"stream_seq":0},`+
		`"num_ack_pending":0,"num_redelivered":0,"num_waiting":0,"num_pending":1,"ts":"2026-01-02T03:04:07Z"}`,
		b.Stream, b.Consumer, b.Consumer, b.Consumer, b.AckWait().Nanoseconds(), b.MaxDeliver, b.FilterSubject,
		jspull.RequestExpires.Nanoseconds(), b.MaxPayloadBytes+jspull.MaxBytesOverhead)
}

// TestLameDuckDuringPullOverConn runs one step over a real connection to
// the scripted server, which sends INFO {"ldm":true} while the pull is
// outstanding: the message is delivered, activated and acknowledged with a
// verified receipt on that connection, which is closed when the step ends.
// The connection's inbox is the tenant's own prefix.
func TestLameDuckDuringPullOverConn(t *testing.T) {
	cfg := rtConfig(t, 1)
	b := cfg.Bindings[0]
	inbox := InboxPrefix(cfg.Tenants[0].ID) + ".0000000000000000000000"
	pc, err := jspull.NewConsumer(jspull.Binding{
		Stream: b.Stream, Consumer: b.Consumer, FilterSubject: b.FilterSubject,
		PayloadCeiling: b.MaxPayloadBytes, AckWait: b.AckWait(), MaxDeliver: b.MaxDeliver,
	}, jspull.Options{})
	if err != nil {
		t.Fatal(err)
	}
	msg := func(subject, reply, payload string) fakeserver.Step {
		if reply != "" {
			reply += " "
		}
		return fakeserver.SendString("MSG " + subject + " 1 " + reply + strconv.Itoa(len(payload)) + "\r\n" + payload + "\r\n")
	}
	info := fakeInfoJSON(b)
	ack := "$JS.ACK." + b.Stream + "." + b.Consumer + ".1.1.1.1767322245000000000.0"
	const serverInfo = `{"server_id":"NFAKE","version":"2.14.6","proto":1,"headers":true,"max_payload":1048576,"tls_required":true%s}`
	srv, err := fakeserver.Start(t.Context(), fakeserver.Config{Script: []fakeserver.Step{
		fakeserver.Handshake(),
		fakeserver.Send(fakeserver.Info(fmt.Sprintf(serverInfo, ""))),
		fakeserver.ExpectPrefix("CONNECT {"),
		fakeserver.ExpectPrefix("SUB " + inbox + ".* 1\r\n"),
		fakeserver.ExpectPrefix("PING\r\n"),
		fakeserver.SendString("PONG\r\n"),
		fakeserver.Send(fakeserver.Info(fmt.Sprintf(serverInfo, ""))), // 2.12 and later follow the PONG with an INFO
		// Consumer info.
		fakeserver.ExpectPrefix("PUB $JS.API.CONSUMER.INFO." + b.Stream + "." + b.Consumer + " " + inbox + ".1 0\r\n"),
		fakeserver.ExpectPrefix("\r\n"),
		msg(inbox+".1", "", info),
		// The pull, answered after a lame-duck INFO.
		fakeserver.ExpectPrefix("PUB $JS.API.CONSUMER.MSG.NEXT." + b.Stream + "." + b.Consumer + " " + inbox + ".2 "),
		fakeserver.ExpectPrefix(string(pc.NextBody()) + "\r\n"),
		fakeserver.Send(fakeserver.Info(fmt.Sprintf(serverInfo, `,"ldm":true`))),
		msg(b.FilterSubject, ack, `["once"]`),
		// The acknowledgement and its receipt.
		fakeserver.ExpectPrefix("PUB " + ack + " " + inbox + ".3 4\r\n"),
		fakeserver.ExpectPrefix("+ACK\r\n"),
		msg(inbox+".3", "", ""),
		fakeserver.WaitClose(),
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })

	r := newRig(t, cfg, PoolLimits{})
	dialTo(r, srv)
	rep := r.step(t)
	if rep.Result != ResultDelivered || rep.Ack != pull.AckVerified || rep.Error != 0 {
		t.Errorf("report %+v, want delivered and verified", rep)
	}
	if acts, payloads := r.host.acts(); len(acts) != 1 || payloads[0] != `["once"]` {
		t.Errorf("activations %d, payloads %q", len(acts), payloads)
	}
	if u := r.pools.Usage(); u.Connections != 0 {
		t.Errorf("usage %+v: the lame-duck connection outlived its step", u)
	}
	if got, want := r.trig.bindings[0].consumer.Scratch(), r.trig.tenants[0].scratch; got == nil || got != want {
		t.Errorf("the binding's consumer uses scratch %p, want its tenant's %p", got, want)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	rec, err := srv.Session(ctx, 0)
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	if rec.Err != nil {
		t.Errorf("script: %v", rec.Err)
	}
}

// TestTraceLinkOverConn runs two steps over a real connection to the
// scripted server: the first delivers an HMSG whose header block carries a
// traceparent beside other fields, the second a MSG without headers. The
// first activation's Link is the header's trace context and its Trace a
// fresh one; the second has no link; everything the binding selects is
// the same in both.
func TestTraceLinkOverConn(t *testing.T) {
	cfg := rtConfig(t, 1)
	b := cfg.Bindings[0]
	inbox := InboxPrefix(cfg.Tenants[0].ID) + ".0000000000000000000000"
	pc, err := jspull.NewConsumer(jspull.Binding{
		Stream: b.Stream, Consumer: b.Consumer, FilterSubject: b.FilterSubject,
		PayloadCeiling: b.MaxPayloadBytes, AckWait: b.AckWait(), MaxDeliver: b.MaxDeliver,
	}, jspull.Options{})
	if err != nil {
		t.Fatal(err)
	}
	info := fakeInfoJSON(b)
	ack := func(seq int) string {
		return "$JS.ACK." + b.Stream + "." + b.Consumer + ".1." + strconv.Itoa(seq) + "." + strconv.Itoa(seq) + ".1767322245000000000.0"
	}
	header := "NATS/1.0\r\nNats-Msg-Id: order-1\r\nTraceparent: " + tpExample + "\r\ntracestate: k=v\r\n\r\n"
	const payload = `["once"]`
	const serverInfo = `{"server_id":"NFAKE","version":"2.14.6","proto":1,"headers":true,"max_payload":1048576,"tls_required":true}`
	visit := func(reply int, delivery string, ackSubject string) []fakeserver.Step {
		r := func(n int) string { return inbox + "." + strconv.Itoa(reply+n) }
		return []fakeserver.Step{
			fakeserver.ExpectPrefix("PUB $JS.API.CONSUMER.INFO." + b.Stream + "." + b.Consumer + " " + r(0) + " 0\r\n"),
			fakeserver.ExpectPrefix("\r\n"),
			fakeserver.SendString("MSG " + r(0) + " 1 " + strconv.Itoa(len(info)) + "\r\n" + info + "\r\n"),
			fakeserver.ExpectPrefix("PUB $JS.API.CONSUMER.MSG.NEXT." + b.Stream + "." + b.Consumer + " " + r(1) + " "),
			fakeserver.ExpectPrefix(string(pc.NextBody()) + "\r\n"),
			fakeserver.SendString(delivery),
			fakeserver.ExpectPrefix("PUB " + ackSubject + " " + r(2) + " 4\r\n"),
			fakeserver.ExpectPrefix("+ACK\r\n"),
			fakeserver.SendString("MSG " + r(2) + " 1 0\r\n\r\n"),
		}
	}
	script := []fakeserver.Step{
		fakeserver.Handshake(),
		fakeserver.Send(fakeserver.Info(serverInfo)),
		fakeserver.ExpectPrefix("CONNECT {"),
		fakeserver.ExpectPrefix("SUB " + inbox + ".* 1\r\n"),
		fakeserver.ExpectPrefix("PING\r\n"),
		fakeserver.SendString("PONG\r\n"),
		fakeserver.Send(fakeserver.Info(serverInfo)), // 2.12 and later follow the PONG with an INFO
	}
	script = append(script, visit(1, "HMSG "+b.FilterSubject+" 1 "+ack(1)+" "+strconv.Itoa(len(header))+" "+
		strconv.Itoa(len(header)+len(payload))+"\r\n"+header+payload+"\r\n", ack(1))...)
	script = append(script, visit(4, "MSG "+b.FilterSubject+" 1 "+ack(2)+" "+strconv.Itoa(len(payload))+"\r\n"+payload+"\r\n", ack(2))...)
	script = append(script, fakeserver.WaitClose())
	srv, err := fakeserver.Start(t.Context(), fakeserver.Config{Script: script})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })

	r := newRig(t, cfg, PoolLimits{})
	dialTo(r, srv)
	for i := range 2 {
		if rep := r.step(t); rep.Result != ResultDelivered || rep.Ack != pull.AckVerified || rep.Error != 0 {
			t.Fatalf("step %d: report %+v, want delivered and verified", i, rep)
		}
	}
	r.trig.CloseIdle()
	acts, payloads := r.host.acts()
	if len(acts) != 2 || payloads[0] != payload || payloads[1] != payload {
		t.Fatalf("activations %d, payloads %q", len(acts), payloads)
	}
	with, without := acts[0], acts[1]
	if with.Link != tpExampleLink || with.Link.String() != tpExample {
		t.Errorf("with the header: Link %v, want %v", with.Link, tpExample)
	}
	if without.Link.IsValid() {
		t.Errorf("without a header: Link %v, want none", without.Link)
	}
	if with.Trace == (TraceID{}) || with.Trace == with.Link.TraceID || with.Trace == without.Trace {
		t.Errorf("traces %v and %v, link %v: want two fresh traces", with.Trace, without.Trace, with.Link.TraceID)
	}
	// What the binding selects is the same with or without the header.
	same := func(a Activation) Activation {
		a.Link, a.Trace, a.ActivationID, a.Deadline, a.StreamSeq = TraceLink{}, TraceID{}, ActivationID{}, time.Time{}, 0
		return a
	}
	if diff := cmp.Diff(same(with), same(without)); diff != "" {
		t.Errorf("activations differ beyond the link and the fresh IDs (-with +without):\n%s", diff)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	rec, err := srv.Session(ctx, 0)
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	if rec.Err != nil {
		t.Errorf("script: %v", rec.Err)
	}
}
