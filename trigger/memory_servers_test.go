package trigger

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/fakeserver"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/parser"
)

// The scripted servers of TestMemoryUnderHostileInput run in a process of
// their own: the test binary started again with memServersEnv set, as
// TestMain below dispatches. The live heap the test measures then holds the
// client side only, as it would beside a broker in its own process.
//
// Every server plays one script on each connection it accepts. The valid
// script pushes every cap of the connection at once in each exchange, and
// the attack scripts send one frame (or one control frame too many) past a
// cap.

const (
	// memServersEnv carries the JSON memSpec of the server process.
	memServersEnv = "LATENT_TRIGGER_MEMORY_SERVERS"
	// memServerLife bounds the server process: it ends when its standard
	// input closes, and the parent kills it after this long.
	memServerLife = 2 * time.Minute
	// memSessionWait bounds the wait for the valid server's sessions to
	// end once the parent is done (its connections are closed by then).
	memSessionWait = 10 * time.Second
	// memTenant is the one tenant of every installation; the pools'
	// per-tenant ceilings are raised to the number of installations.
	memTenant = "t0"
	// memAck is the ack subject of the delivered message.
	memAck = "$JS.ACK.ORDERS.c0.1.1.1.1767322245000000000.0"
	// memValid names the server whose script pushes every cap and stays
	// valid.
	memValid = "valid"
)

// memAttack is one attack server: its script sends one frame past a cap
// (or one control frame too many) in place of a reply, and the step's
// error must match want.
type memAttack struct {
	kind string
	want error
}

// memAttacks lists the attacks on a connection whose payload cap is
// maxPayload: a control line one byte over its cap, a header block one
// byte over its cap and a payload one byte over the connection's payload
// cap (each in place of the consumer info reply), one PING more than an
// exchange answers, one control frame (an INFO at the line cap) more than
// an exchange reads, and a delivered message one byte over the binding's
// ceiling. Such a message is read whole and refused by the pull layer
// when the ceiling is below the connection's cap; over the cap the parser
// refuses its size before reading it.
func memAttacks(ceiling, maxPayload int) []memAttack {
	overCeiling := jspull.ErrOverCeiling
	if ceiling+1 > maxPayload {
		overCeiling = parser.ErrPayloadTooLarge
	}
	return []memAttack{
		{"line", parser.ErrLineTooLong},
		{"header", parser.ErrHeaderTooLarge},
		{"payload", parser.ErrPayloadTooLarge},
		{"pings", conn.ErrControlFlood},
		{"frames", conn.ErrControlFlood},
		{"ceiling", overCeiling},
	}
}

// memCaps are the read caps and the payload ceiling of one measurement.
type memCaps struct {
	Name    string
	Line    int // Config.MaxControlLineBytes
	Header  int // Config.MaxHeaderBytes
	Ceiling int // Binding.MaxPayloadBytes
}

// memSpec is what the server process is told.
type memSpec struct {
	Caps memCaps
	// MaxPayload is the connection's payload cap (conn.Config.MaxPayload
	// as the runtime sets it).
	MaxPayload int
	// Conns is the number of connections each server serves.
	Conns int
}

// memServer is one server the process started.
type memServer struct {
	Kind       string
	Addr       netip.AddrPort
	ServerName string
	CAPEM      []byte
}

func TestMain(m *testing.M) {
	if spec := os.Getenv(memServersEnv); spec != "" {
		os.Exit(serveMemory(spec))
	}
	os.Exit(m.Run())
}

// serveMemory starts the valid server and one server per attack kind,
// prints them as one JSON line, waits for standard input to close and
// reports, in its exit status, any session of the valid server that did
// not play its script to the end.
func serveMemory(specJSON string) int {
	var sp memSpec
	if err := json.Unmarshal([]byte(specJSON), &sp); err != nil {
		fmt.Fprintln(os.Stderr, "memory servers: spec:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), memServerLife)
	defer cancel()
	var servers []*fakeserver.Server
	defer func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}()
	kinds := []string{memValid}
	for _, a := range memAttacks(sp.Caps.Ceiling, sp.MaxPayload) {
		kinds = append(kinds, a.kind)
	}
	var out []memServer
	for _, kind := range kinds {
		script, err := memScript(kind, sp)
		if err != nil {
			fmt.Fprintln(os.Stderr, "memory servers:", kind, err)
			return 2
		}
		s, err := fakeserver.Start(ctx, fakeserver.Config{Script: script, MaxConns: sp.Conns})
		if err != nil {
			fmt.Fprintln(os.Stderr, "memory servers:", kind, err)
			return 2
		}
		servers = append(servers, s)
		out = append(out, memServer{Kind: kind, Addr: s.Addr(), ServerName: s.ServerName(), CAPEM: s.CAPEM()})
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "memory servers:", err)
		return 2
	}
	// Until the parent closes its end (or dies, or kills this process).
	_, _ = io.Copy(io.Discard, os.Stdin)

	wctx, wcancel := context.WithTimeout(ctx, memSessionWait)
	defer wcancel()
	valid, failed := servers[0], 0
	for i := range min(valid.Accepted(), sp.Conns) {
		rec, err := valid.Session(wctx, i)
		if err == nil {
			err = rec.Err
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "memory servers: valid session %d: %v\n", i, err)
			failed++
		}
	}
	if failed > 0 {
		return 1
	}
	return 0
}

// memBinding is the one binding of every installation.
func memBinding(c memCaps) Binding {
	b := testBinding(memTenant, 0)
	b.MaxPayloadBytes = c.Ceiling
	b.OperationTimeoutMS, b.RootBudgetMS = maxOperationTimeoutMS, maxOperationTimeoutMS
	return b
}

// memInbox is the connection's inbox with the all-zero token (zeroRand).
func memInbox() string { return InboxPrefix(memTenant) + ".0000000000000000000000" }

// memScript returns the script of one server kind.
func memScript(kind string, sp memSpec) ([]fakeserver.Step, error) {
	c := sp.Caps
	b := memBinding(c)
	pc, err := jspull.NewConsumer(jspull.Binding{
		Stream: b.Stream, Consumer: b.Consumer, FilterSubject: b.FilterSubject,
		PayloadCeiling: b.MaxPayloadBytes, AckWait: b.AckWait(), MaxDeliver: b.MaxDeliver,
	}, jspull.Options{})
	if err != nil {
		return nil, err
	}
	inbox := memInbox()
	pongs := func(n int) []fakeserver.Step {
		s := make([]fakeserver.Step, n)
		for i := range s {
			s[i] = fakeserver.ExpectPrefix("PONG\r\n")
		}
		return s
	}
	send := fakeserver.Send
	full := conn.MaxControlFramesPerExchange

	// The handshake: INFO at the line cap, then every control frame the
	// wait for PONG reads (PINGs and INFOs at the cap), PONG, and the INFO
	// at the cap that follows it.
	s := []fakeserver.Step{
		fakeserver.Handshake(),
		send(memInfoLine(c.Line)),
		fakeserver.ExpectPrefix("CONNECT {"),
		fakeserver.ExpectPrefix("SUB " + inbox + ".* 1\r\n"),
		fakeserver.ExpectPrefix("PING\r\n"),
		send(memControlFlood(c.Line, full)),
		fakeserver.SendString("PONG\r\n"),
		send(memInfoLine(c.Line)),
	}
	s = append(s, pongs(conn.MaxPingsPerExchange)...)
	s = append(s,
		fakeserver.ExpectPrefix("PUB $JS.API.CONSUMER.INFO."+b.Stream+"."+b.Consumer+" "+inbox+".1 0\r\n"),
		fakeserver.ExpectPrefix("\r\n"),
	)
	var attack []byte
	switch kind {
	case memValid, "ceiling":
	case "line":
		attack = memInfoLine(c.Line + 1)
	case "header":
		attack = memHMsg(inbox+".1", "", memHeader(c.Header+1), nil)
	case "payload":
		attack = memMsg(inbox+".1", "", memPayload(sp.MaxPayload+1))
	case "pings":
		attack = bytes.Repeat([]byte("PING\r\n"), conn.MaxPingsPerExchange+1)
	case "frames":
		attack = bytes.Repeat(memInfoLine(c.Line), full+1)
	default:
		return nil, fmt.Errorf("unknown kind %q", kind)
	}
	if attack != nil {
		return append(s, send(attack), fakeserver.WaitClose()), nil
	}

	// Consumer info: every control frame, then the largest info reply.
	s = append(s, send(memControlFlood(c.Line, full)), send(memMsg(inbox+".1", "", memInfo(b))))
	s = append(s, pongs(conn.MaxPingsPerExchange)...)
	// The pull: every control frame, then the message with a header
	// block at the cap and a payload at the ceiling, then the "409 Batch
	// Completed" the broker sends after it.
	s = append(s,
		fakeserver.ExpectPrefix("PUB $JS.API.CONSUMER.MSG.NEXT."+b.Stream+"."+b.Consumer+" "+inbox+".2 "),
		fakeserver.ExpectPrefix(string(pc.NextBody())+"\r\n"),
	)
	if kind == "ceiling" {
		return append(s, send(memMsg(b.FilterSubject, memAck, memPayload(c.Ceiling+1))), fakeserver.WaitClose()), nil
	}
	s = append(s,
		send(memControlFlood(c.Line, full)),
		send(memHMsg(b.FilterSubject, memAck, memHeader(c.Header), memPayload(c.Ceiling))),
		send(memHMsg(inbox+".2", "", []byte("NATS/1.0 409 Batch Completed\r\n\r\n"), nil)),
	)
	s = append(s, pongs(conn.MaxPingsPerExchange)...)
	// The acknowledgement: the trailing status and the control frames
	// left make a full exchange, then the receipt.
	s = append(s,
		fakeserver.ExpectPrefix("PUB "+memAck+" "+inbox+".3 4\r\n"),
		fakeserver.ExpectPrefix("+ACK\r\n"),
		send(memControlFlood(c.Line, full-1)),
		send(memMsg(inbox+".3", "", nil)),
	)
	s = append(s, pongs(conn.MaxPingsPerExchange)...)
	return append(s, fakeserver.WaitClose()), nil
}

// memInfoLine returns an INFO line of exactly n bytes, CRLF counted, as
// 2.14.6 would send it with a long server name.
func memInfoLine(n int) []byte {
	const head = `{"server_id":"NFAKE","version":"2.14.6","proto":1,"headers":true,"max_payload":1048576,` +
		`"tls_required":true,"jetstream":true,"server_name":"`
	const tail = `"}`
	pad := n - len(fakeserver.Info("")) - len(head) - len(tail)
	return fakeserver.Info(head + strings.Repeat("n", pad) + tail)
}

// memControlFlood returns n control frames: as many PINGs as an exchange
// answers (at most n), then INFO lines at the line cap.
func memControlFlood(line, n int) []byte {
	pings := min(n, conn.MaxPingsPerExchange)
	out := bytes.Repeat([]byte("PING\r\n"), pings)
	return append(out, bytes.Repeat(memInfoLine(line), n-pings)...)
}

// memHeader returns a header block of exactly n bytes, its blank line
// counted.
func memHeader(n int) []byte {
	const head, tail = "NATS/1.0\r\nNats-Msg-Id: ", "\r\n\r\n"
	return []byte(head + strings.Repeat("h", n-len(head)-len(tail)) + tail)
}

// memPayload returns a payload of exactly n >= 2 bytes: one JSON string.
func memPayload(n int) []byte {
	return []byte(`"` + strings.Repeat("p", n-2) + `"`)
}

// memInfo returns the consumer info of b, matching the profile with one
// message pending, padded with JSON whitespace to exactly
// jspull.MaxInfoSize bytes.
func memInfo(b Binding) []byte {
	info := fakeInfoJSON(b)
	return []byte("{" + strings.Repeat(" ", jspull.MaxInfoSize-len(info)) + info[1:])
}

// memMsg returns a MSG frame on the inbox subscription (sid 1).
func memMsg(subject, reply string, payload []byte) []byte {
	line := "MSG " + subject + " 1 "
	if reply != "" {
		line += reply + " "
	}
	line += strconv.Itoa(len(payload)) + "\r\n"
	return append(append([]byte(line), payload...), "\r\n"...)
}

// memHMsg returns an HMSG frame on the inbox subscription (sid 1).
func memHMsg(subject, reply string, header, payload []byte) []byte {
	line := "HMSG " + subject + " 1 "
	if reply != "" {
		line += reply + " "
	}
	line += strconv.Itoa(len(header)) + " " + strconv.Itoa(len(header)+len(payload)) + "\r\n"
	out := append([]byte(line), header...)
	return append(append(out, payload...), "\r\n"...)
}
