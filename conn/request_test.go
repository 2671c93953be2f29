package conn_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/fakeserver"
	"github.com/latent-systems/latent-nats/internal/wire"
	"github.com/latent-systems/latent-nats/parser"
)

// requestMaxPayload is the payload cap of the request tests' connections.
const requestMaxPayload = 1024

// TestFakeRequestFailures sends one request "PUB svc <inbox>.1" and lets
// the server misbehave. Every failure but a permission error closes the
// connection with a typed error.
func TestFakeRequestFailures(t *testing.T) {
	oversizeLine := "MSG " + fakeInbox + ".1 1 " + strings.Repeat("r", parser.MaxLine) + " 0\r\n"
	tests := []struct {
		name     string
		send     []fakeserver.Step // after the request was read
		within   time.Duration
		wantErr  error
		kind     conn.ErrKind
		open     bool // the connection stays usable
		lameDuck bool
		clean    []string
	}{
		{name: "message for another subscription",
			send: steps(fakeserver.SendString("MSG " + fakeInbox + ".1 2 2\r\nhi\r\n")), wantErr: conn.ErrForeignFrame},
		{name: "message for another reply token",
			send: steps(msgTo("7", "hi")), wantErr: conn.ErrForeignFrame},
		{name: "message for another inbox",
			send: steps(fakeserver.SendString("MSG _INBOX.1111111111111111111111.1 1 2\r\nhi\r\n")), wantErr: conn.ErrForeignFrame},
		{name: "forwarded message to a plain request",
			send: steps(fakeserver.SendString("MSG orders.a 1 $JS.ACK.S.C.1.1.1.1.0 2\r\nhi\r\n")), wantErr: conn.ErrForeignFrame},
		{name: "malformed frame",
			send: steps(fakeserver.SendString("MSG " + fakeInbox + ".1\r\n")), wantErr: parser.ErrMalformed},
		{name: "unknown op",
			send: steps(fakeserver.SendString("HELLO\r\n")), wantErr: parser.ErrUnknownOp},
		{name: "payload past the cap is refused before it is read",
			send:    steps(fakeserver.SendString("MSG "+fakeInbox+".1 1 "+itoa(requestMaxPayload+1)+"\r\n"), fakeserver.Stall()),
			wantErr: parser.ErrPayloadTooLarge},
		{name: "header block past the cap is refused before it is read",
			send:    steps(fakeserver.SendString("HMSG "+fakeInbox+".1 1 "+itoa(parser.MaxHeaderBlock+1)+" "+itoa(parser.MaxHeaderBlock+1)+"\r\n"), fakeserver.Stall()),
			wantErr: parser.ErrHeaderTooLarge},
		{name: "control line past the cap",
			send: steps(fakeserver.SendString(oversizeLine)), wantErr: parser.ErrLineTooLong},
		{name: "fatal -ERR",
			send: steps(fakeserver.SendString("-ERR 'Stale Connection'\r\n")), kind: conn.KindStaleConnection},
		{name: "unknown -ERR",
			send:  steps(fakeserver.SendString("-ERR 'something secret-ish happened'\r\n")),
			kind:  conn.KindOther,
			clean: []string{"secret-ish"}},
		{name: "authentication expired",
			send: steps(fakeserver.SendString("-ERR 'User Authentication Expired'\r\n")), kind: conn.KindAuthenticationExpired},
		{name: "permission violation",
			send:  steps(fakeserver.SendString("-ERR 'Permissions Violation for Publish to \"svc\"'\r\n")),
			kind:  conn.KindPermission,
			open:  true,
			clean: []string{"svc", "Publish"}},
		{name: "unsolicited PONG",
			send: steps(fakeserver.SendString("PONG\r\n")), wantErr: conn.ErrUnexpectedFrame},
		{name: "+OK",
			send: steps(fakeserver.SendString("+OK\r\n")), wantErr: conn.ErrUnexpectedFrame},
		{name: "PING flood",
			send:    steps(fakeserver.SendString(strings.Repeat("PING\r\n", conn.MaxPingsPerExchange+1))),
			wantErr: conn.ErrControlFlood},
		{name: "INFO flood",
			send:    steps(fakeserver.Send([]byte(strings.Repeat(string(fakeserver.Info(`{"ldm":false}`)), conn.MaxControlFramesPerExchange+1)))),
			wantErr: conn.ErrControlFlood},
		{name: "malformed async INFO",
			send: steps(fakeserver.SendString("INFO {\"ldm\":\"yes\"} \r\n")), wantErr: conn.ErrMalformedInfo},
		{name: "server hangs up",
			send: steps(fakeserver.Hangup()), wantErr: conn.ErrServerClosed},
		{name: "frame cut short by hangup",
			send: steps(fakeserver.SendString("MSG "+fakeInbox+".1 1 10\r\nabc"), fakeserver.Hangup()), wantErr: conn.ErrServerClosed},
		{name: "stall",
			send: steps(fakeserver.Stall()), within: stallWithin, wantErr: context.DeadlineExceeded},
		{name: "stall inside a payload",
			send:   steps(fakeserver.SendString("MSG "+fakeInbox+".1 1 10\r\nabc"), fakeserver.Stall()),
			within: stallWithin, wantErr: context.DeadlineExceeded},
		{name: "lame-duck INFO, then no reply",
			send:   steps(fakeserver.Send(fakeserver.Info(`{"ldm":true}`)), fakeserver.Stall()),
			within: stallWithin, wantErr: context.DeadlineExceeded, lameDuck: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rest := steps(fakeserver.WaitClose())
			switch last := tt.send[len(tt.send)-1].Kind(); {
			case tt.open:
				// A second request proves the connection usable.
				rest = script(expectPub("2", "q2"), steps(msgTo("2", "a2"), fakeserver.WaitClose()))
			case last == fakeserver.StepStall || last == fakeserver.StepHangup:
				rest = nil
			}
			f := startFake(t, fakeserver.Config{Script: script(
				greet(infoJSON),
				expectPub("1", "q"),
				tt.send,
				rest,
			)})
			cfg := f.config(t)
			cfg.MaxPayload = requestMaxPayload
			c, err := f.dial(t, cfg)
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			within := dialWithin
			if tt.within != 0 {
				within = tt.within
			}
			ctx, cancel := context.WithTimeout(t.Context(), within)
			defer cancel()
			_, err = c.Request(ctx, "svc", nil, []byte("q"))
			if tt.kind != 0 {
				assertKind(t, err, tt.kind)
			} else if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			assertClean(t, err, tt.clean...)
			if got := c.LameDuck(); got != tt.lameDuck {
				t.Errorf("LameDuck = %v, want %v", got, tt.lameDuck)
			}
			if tt.open {
				if errors.Is(err, conn.ErrClosed) || c.Closed() {
					t.Fatalf("connection closed after %v", err)
				}
				r, err := request(t, c, "q2")
				if err != nil || string(r.Payload) != "a2" {
					t.Fatalf("second request: %q, %v", r.Payload, err)
				}
				return
			}
			var ce *conn.ClosedError
			if !errors.As(err, &ce) || !errors.Is(err, conn.ErrClosed) || !c.Closed() {
				t.Fatalf("error %v did not close the connection", err)
			}
			if _, err := request(t, c, "q2"); !errors.Is(err, conn.ErrClosed) {
				t.Errorf("request after close: %v, want ErrClosed", err)
			}
		})
	}
}

// TestFakeRequestControlFrames: PINGs up to the cap are answered, INFOs
// read, and the reply still accepted.
func TestFakeRequestControlFrames(t *testing.T) {
	var pongs []fakeserver.Step
	for range conn.MaxPingsPerExchange {
		pongs = append(pongs, fakeserver.ExpectPrefix("PONG\r\n"))
	}
	f := startFake(t, fakeserver.Config{Script: script(
		greet(infoJSON),
		expectPub("1", "q"),
		steps(fakeserver.SendString(strings.Repeat("PING\r\n", conn.MaxPingsPerExchange))),
		pongs,
		steps(
			fakeserver.Send([]byte(strings.Repeat(string(fakeserver.Info(`{"ldm":true}`)), conn.MaxControlFramesPerExchange-conn.MaxPingsPerExchange))),
			msgTo("1", "a"),
		),
		// The caps are per request: the next one may see as many again.
		expectPub("2", "q"),
		steps(fakeserver.SendString(strings.Repeat("PING\r\n", conn.MaxPingsPerExchange))),
		pongs,
		steps(msgTo("2", "b"), fakeserver.WaitClose()),
	)})
	c, err := f.dial(t, f.config(t))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	for i, want := range []string{"a", "b"} {
		r, err := request(t, c, "q")
		if err != nil || string(r.Payload) != want {
			t.Fatalf("request %d: %q, %v", i, r.Payload, err)
		}
	}
	if !c.LameDuck() {
		t.Error("LameDuck = false after an ldm INFO")
	}
	_ = c.Close()
	if rec := f.session(t); rec.Err != nil {
		t.Errorf("script: %v", rec.Err)
	}
}

// TestFakeOldReplyToken: a reply for an earlier request arriving during a
// later one is foreign.
func TestFakeOldReplyToken(t *testing.T) {
	f := startFake(t, fakeserver.Config{Script: script(
		greet(infoJSON),
		expectPub("1", "q"),
		steps(msgTo("1", "a")),
		expectPub("2", "q"),
		steps(msgTo("1", "late"), fakeserver.WaitClose()),
	)})
	c, err := f.dial(t, f.config(t))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	if _, err := request(t, c, "q"); err != nil {
		t.Fatalf("request 1: %v", err)
	}
	if _, err := request(t, c, "q"); !errors.Is(err, conn.ErrForeignFrame) || !c.Closed() {
		t.Fatalf("request 2: %v, want ErrForeignFrame and a closed connection", err)
	}
}

func TestFakeRequestDelivery(t *testing.T) {
	f := startFake(t, fakeserver.Config{Script: script(
		greet(infoJSON),
		expectPub("1", "pull"),
		steps(fakeserver.SendString("HMSG orders.a 1 $JS.ACK.S.C.1.2.3.4.0 12 15\r\nNATS/1.0\r\n\r\nmsg\r\n")),
		expectPub("2", "pull"),
		steps(hmsgTo("2", "NATS/1.0 404 No Messages\r\n\r\n", "")),
		expectPub("3", "pull"),
		steps(msgTo("9", "x"), fakeserver.WaitClose()),
	)})
	c, err := f.dial(t, f.config(t))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	pull := func() (conn.Reply, error) {
		ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
		defer cancel()
		return c.Exchange(ctx, time.Now().Add(dialWithin), conn.Call{Subject: []byte("svc"), Payload: []byte("pull"), Delivery: true})
	}
	type view struct {
		Subject, ReplyTo, Payload, Description string
		Status                                 int
		Forwarded                              bool
	}
	see := func(r conn.Reply) view {
		return view{string(r.Subject), string(r.ReplyTo), string(r.Payload), string(r.Description), r.Status, r.Forwarded}
	}
	r, err := pull()
	if err != nil {
		t.Fatalf("pull 1: %v", err)
	}
	if diff := cmp.Diff(view{Subject: "orders.a", ReplyTo: "$JS.ACK.S.C.1.2.3.4.0", Payload: "msg", Forwarded: true}, see(r)); diff != "" {
		t.Errorf("delivery (-want +got):\n%s", diff)
	}
	r, err = pull()
	if err != nil {
		t.Fatalf("pull 2: %v", err)
	}
	if diff := cmp.Diff(view{Subject: fakeInbox + ".2", Status: 404, Description: "No Messages"}, see(r)); diff != "" {
		t.Errorf("status reply (-want +got):\n%s", diff)
	}
	if _, err := pull(); !errors.Is(err, conn.ErrForeignFrame) {
		t.Fatalf("pull 3: %v, want ErrForeignFrame for another token under the inbox", err)
	}
}

// TestRequestRefusedBeforeWriting: invalid or oversized requests fail
// before any byte is written and leave the connection usable.
func TestRequestRefusedBeforeWriting(t *testing.T) {
	atLimit := strings.Repeat("p", requestMaxPayload)
	longSubject := strings.Repeat("s", conn.MaxRequestSubjectLen)
	f := startFake(t, fakeserver.Config{Script: script(
		greet(infoJSON),
		steps(fakeserver.ExpectPrefix("PUB "+longSubject+" "+fakeInbox+".1 "+itoa(requestMaxPayload)+"\r\n")),
		steps(fakeserver.ExpectPrefix(atLimit+"\r\n"), msgTo("1", "ok")),
		steps(fakeserver.WaitClose()),
	)})
	cfg := f.config(t)
	cfg.MaxPayload = requestMaxPayload
	c, err := f.dial(t, cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	if got := c.MaxPayload(); got != requestMaxPayload {
		t.Errorf("MaxPayload = %d, want %d", got, requestMaxPayload)
	}
	ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
	defer cancel()
	tests := []struct {
		name    string
		subject string
		header  []byte
		payload []byte
		wantErr error
	}{
		{"empty subject", "", nil, nil, conn.ErrInvalidRequest},
		{"wildcard subject", "svc.*", nil, nil, conn.ErrInvalidRequest},
		{"subject with space", "svc x", nil, nil, conn.ErrInvalidRequest},
		{"subject past the cap", longSubject + "s", nil, nil, conn.ErrTooLarge},
		{"payload past the cap", "svc", nil, []byte(atLimit + "p"), conn.ErrTooLarge},
		{"header off the grammar", "svc", []byte("NATS/1.0\r\nbad header\r\n\r\n"), nil, conn.ErrInvalidRequest},
		{"header past the cap", "svc", []byte("NATS/1.0\r\nX: " + strings.Repeat("v", wire.MaxOutboundHeader) + "\r\n\r\n"), nil, conn.ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Request(ctx, tt.subject, tt.header, tt.payload)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if c.Closed() {
				t.Fatal("refused request closed the connection")
			}
		})
	}
	if _, err := c.Request(t.Context(), "svc", nil, nil); !errors.Is(err, conn.ErrNoDeadline) {
		t.Errorf("request without deadline: %v, want ErrNoDeadline", err)
	}
	// The first request written uses reply token 1: nothing above reached
	// the wire or consumed a token that the script would notice.
	r, err := c.Request(ctx, longSubject, nil, []byte(atLimit))
	if err != nil || string(r.Payload) != "ok" {
		_ = c.Close()
		t.Fatalf("request at the limits: %q, %v (script: %v)", r.Payload, err, f.session(t).Err)
	}
	_ = c.Close()
	if rec := f.session(t); rec.Err != nil {
		t.Errorf("script: %v", rec.Err)
	}
}

// TestFakeTrailingStatus pins the 2.14.6 behaviour a pull with max_bytes
// shows: after the message it sends "409 Batch Completed" to the pull's
// reply subject, which then arrives during the next request. A status-only
// message to an earlier reply subject is skipped; the same status to a reply
// subject not yet issued is foreign.
func TestFakeTrailingStatus(t *testing.T) {
	const done = "NATS/1.0 409 Batch Completed\r\nNats-Pending-Messages: 0\r\nNats-Pending-Bytes: 0\r\n\r\n"
	f := startFake(t, fakeserver.Config{Script: script(
		greet(infoJSON),
		expectPub("1", "q"),
		steps(msgTo("1", "a")),
		expectPub("2", "q"),
		steps(hmsgTo("1", done, ""), msgTo("2", "b")),
		expectPub("3", "q"),
		steps(hmsgTo("9", done, ""), fakeserver.WaitClose()),
	)})
	c, err := f.dial(t, f.config(t))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	if _, err := request(t, c, "q"); err != nil {
		t.Fatalf("request 1: %v", err)
	}
	r, err := request(t, c, "q")
	if err != nil {
		t.Fatalf("request 2: %v", err)
	}
	if got := string(r.Payload); got != "b" {
		t.Errorf("request 2 payload = %q, want %q", got, "b")
	}
	if _, err := request(t, c, "q"); !errors.Is(err, conn.ErrForeignFrame) || !c.Closed() {
		t.Fatalf("request 3: %v, want ErrForeignFrame and a closed connection", err)
	}
}

// TestFakeExchangeBytes: Exchange writes the same PUB as Request for a
// subject given as bytes, and refuses the same subjects before writing
// anything; the caller's bytes may be reused as soon as it returns.
func TestFakeExchangeBytes(t *testing.T) {
	f := startFake(t, fakeserver.Config{Script: script(
		greet(infoJSON),
		expectPub("1", "+ACK"),
		steps(msgTo("1", "")),
		expectPub("2", "again"),
		steps(msgTo("2", "ok"), fakeserver.WaitClose()),
	)})
	c, err := f.dial(t, f.config(t))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), dialWithin)
	defer cancel()
	subject := []byte("svc")
	refused := []struct {
		name    string
		subject []byte
		want    error
	}{
		{"empty", nil, conn.ErrInvalidRequest},
		{"space", []byte("svc x"), conn.ErrInvalidRequest},
		{"wildcard", []byte("svc.>"), conn.ErrInvalidRequest},
		{"past the cap", []byte(strings.Repeat("s", conn.MaxRequestSubjectLen+1)), conn.ErrTooLarge},
	}
	for _, tt := range refused {
		if _, err := c.Exchange(ctx, time.Now().Add(dialWithin), conn.Call{Subject: tt.subject}); !errors.Is(err, tt.want) || c.Closed() {
			t.Fatalf("%s: error = %v (closed %v), want %v with the connection open", tt.name, err, c.Closed(), tt.want)
		}
	}
	r, err := c.Exchange(ctx, time.Now().Add(dialWithin), conn.Call{Subject: subject, Payload: []byte("+ACK")})
	if err != nil || len(r.Payload) != 0 || string(r.Subject) != fakeInbox+".1" {
		t.Fatalf("Exchange: %q %q, %v (script: %v)", r.Subject, r.Payload, err, f.session(t).Err)
	}
	copy(subject, "xxx") // the subject's bytes are free again
	r, err = c.Request(ctx, "svc", nil, []byte("again"))
	if err != nil || string(r.Payload) != "ok" {
		t.Fatalf("Request: %q, %v", r.Payload, err)
	}
	_ = c.Close()
	if rec := f.session(t); rec.Err != nil {
		t.Errorf("script: %v", rec.Err)
	}
}
