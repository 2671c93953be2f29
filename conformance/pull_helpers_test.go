package conformance_test

import (
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/pull"
	"github.com/latent-systems/latent-nats/tools/broker"
)

// pullTimeout bounds one admin request or one dial in the pull tests.
const pullTimeout = 5 * time.Second

// pullTenant is the tenant account the pull tests use.
const pullTenant = "pulls"

// pullNextMargin is the NextMargin of the suite's Consumers, the most
// Options allow. On an idle machine the broker's 408 follows the pull's
// 100 ms expiry at once; on a loaded one (the packages' tests run in
// parallel, each starting brokers) it can come later than the 150 ms
// default, and Next would close the connection and fail the case for no
// fault of either side. The broker's expiry, the bound the cases prove
// things about, stays the profile's 100 ms.
const pullNextMargin = jspull.MaxNextMargin

// nextBound is the most a Next of the suite's Consumers may take: the
// broker's 100 ms expiry plus pullNextMargin.
const nextBound = jspull.RequestExpires + pullNextMargin

// pullOpTimeout is the OpTimeout (Inspect, Ack) of the suite's Consumers,
// unless a case sets its own.
const pullOpTimeout = 3 * time.Second

// pullPrompt is what "promptly" means for an error the broker answers at
// once (a permission violation): well inside pullOpTimeout, so that it
// cannot be the operation's deadline.
const pullPrompt = pullOpTimeout / 2

// pullRedeliverySlack is how long a case waits for a redelivery beyond the
// delay that allows it (ack_wait, a NAK delay): the broker's timers and
// this process's pulls both run late on a loaded machine.
const pullRedeliverySlack = 5 * time.Second

// pullOptions returns opts with the suite's NextMargin and OpTimeout where
// opts leaves the defaults.
func pullOptions(opts jspull.Options) jspull.Options {
	if opts.NextMargin == 0 {
		opts.NextMargin = pullNextMargin
	}
	if opts.OpTimeout == 0 {
		opts.OpTimeout = pullOpTimeout
	}
	return opts
}

// pullDial dials b as the given user.
func pullDial(t testing.TB, b *broker.Broker, creds broker.Creds) *conn.Conn {
	t.Helper()
	c, err := pullDialErr(t, b, creds)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	return c
}

func pullDialErr(t testing.TB, b *broker.Broker, creds broker.Creds) (*conn.Conn, error) {
	t.Helper()
	file, err := creds.File()
	if err != nil {
		t.Fatalf("creds file: %v", err)
	}
	secret, err := credential.ParseCreds(file)
	if err != nil {
		t.Fatalf("ParseCreds: %v", err)
	}
	t.Cleanup(secret.Wipe)
	return pullDialSecret(t, b, secret)
}

// pullDialSecret dials b with secret, closed when the test ends.
func pullDialSecret(t testing.TB, b *broker.Broker, secret *credential.Secret) (*conn.Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), pullTimeout)
	defer cancel()
	c, err := conn.Dial(ctx, conn.Config{
		Addr:           b.Addr(),
		AllowNonPublic: b.Addr().Addr(),
		ServerName:     b.ServerName(),
		Roots:          b.RootCAs(),
		Credential:     secret,
		Name:           "pull-conformance",
	})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, nil
}

// pullUser mints a tenant user holding exactly perms.
func pullUser(t testing.TB, b *broker.Broker, perms jspull.Permissions) broker.Creds {
	t.Helper()
	c, err := b.User(pullTenant, broker.UserSpec{Name: "puller", PubAllow: perms.Publish, SubAllow: perms.Subscribe})
	if err != nil {
		t.Fatalf("minting user: %v", err)
	}
	return c
}

// admin is the tenant's operator-side connection: it provisions streams
// and consumers with raw JetStream API requests, as the provisioning tool
// would. Production code never has it.
type admin struct {
	t *testing.T
	c *conn.Conn
}

func newAdmin(t *testing.T, b *broker.Broker) *admin {
	t.Helper()
	creds, err := b.Admin(pullTenant)
	if err != nil {
		t.Fatalf("admin creds: %v", err)
	}
	return &admin{t: t, c: pullDial(t, b, creds)}
}

// request sends one request and returns the reply payload, copied.
func (a *admin) request(subject string, body []byte) conn.Reply {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(a.t.Context(), pullTimeout)
	defer cancel()
	defer a.c.Detach() // before cancel: ending ctx runs nothing (conn.Conn.Detach)
	r, err := a.c.Request(ctx, subject, nil, body)
	if err != nil {
		a.t.Fatalf("admin request %s: %v", subject, err)
	}
	r.Payload = append([]byte(nil), r.Payload...)
	r.Subject = append([]byte(nil), r.Subject...)
	r.Description = append([]byte(nil), r.Description...)
	r.Header = append([]byte(nil), r.Header...)
	r.ReplyTo = append([]byte(nil), r.ReplyTo...)
	return r
}

// api sends a JetStream API request and fails the test on an API error.
func (a *admin) api(subject string, req any) map[string]any {
	a.t.Helper()
	var body []byte
	if req != nil {
		var err error
		if body, err = json.Marshal(req); err != nil {
			a.t.Fatal(err)
		}
	}
	r := a.request(subject, body)
	var resp map[string]any
	if err := json.Unmarshal(r.Payload, &resp); err != nil {
		a.t.Fatalf("admin %s: status %d, reply %q: %v", subject, r.Status, r.Payload, err)
	}
	if resp["error"] != nil {
		a.t.Fatalf("admin %s: %v", subject, resp["error"])
	}
	return resp
}

// createStream creates a memory stream capturing subjects.
func (a *admin) createStream(name string, subjects ...string) {
	a.t.Helper()
	a.api("$JS.API.STREAM.CREATE."+name, map[string]any{
		"name": name, "subjects": subjects, "storage": "memory",
	})
}

// profileConfig is the consumer configuration the profile requires for b.
func profileConfig(b jspull.Binding) map[string]any {
	return map[string]any{
		"durable_name":    b.Consumer,
		"deliver_policy":  "all",
		"ack_policy":      "explicit",
		"ack_wait":        int64(b.AckWait),
		"max_deliver":     b.MaxDeliver,
		"filter_subject":  b.FilterSubject,
		"replay_policy":   "instant",
		"max_waiting":     1,
		"max_ack_pending": 1,
		"max_batch":       1,
		"max_expires":     int64(jspull.RequestExpires),
		"max_bytes":       b.MaxBytes(),
	}
}

// createConsumer creates consumer name on stream with cfg.
func (a *admin) createConsumer(stream, name string, cfg map[string]any) {
	a.t.Helper()
	a.api("$JS.API.CONSUMER.CREATE."+stream+"."+name, map[string]any{
		"stream_name": stream, "config": cfg, "action": "create",
	})
}

func (a *admin) deleteConsumer(stream, name string) {
	a.t.Helper()
	a.api("$JS.API.CONSUMER.DELETE."+stream+"."+name, nil)
}

// publish stores payload under subject and returns its stream sequence.
//
// A 503 without a payload (no responders: a stream just created on a
// cluster whose interest has not yet reached this node; nothing was
// stored) is asked again, polling within trigWait.
func (a *admin) publish(subject string, payload []byte) uint64 {
	a.t.Helper()
	r := a.request(subject, payload)
	if r.Status == 503 && len(r.Payload) == 0 {
		trigEventually(a.t, "a PubAck from "+subject, trigWait, func() bool {
			r = a.request(subject, payload)
			return !(r.Status == 503 && len(r.Payload) == 0)
		})
	}
	var ack struct {
		Seq   uint64         `json:"seq"`
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(r.Payload, &ack); err != nil || ack.Seq == 0 {
		a.t.Fatalf("publish to %s: status %d, reply %q, %v", subject, r.Status, r.Payload, err)
	}
	return ack.Seq
}

// consumerInfo returns the admin's view of a consumer's counters.
func (a *admin) consumerInfo(stream, name string) (numPending, numAckPending, numWaiting int) {
	a.t.Helper()
	resp := a.api("$JS.API.CONSUMER.INFO."+stream+"."+name, nil)
	num := func(k string) int { v, _ := resp[k].(float64); return int(v) }
	return num("num_pending"), num("num_ack_pending"), num("num_waiting")
}

// waitFor polls cond through the admin connection until it holds or the
// deadline passes; each poll is one broker round trip.
func (a *admin) waitFor(what string, timeout time.Duration, cond func() bool) {
	a.t.Helper()
	deadline := time.Now().Add(timeout)
	for i := 0; i < 10000 && time.Now().Before(deadline); i++ {
		if cond() {
			return
		}
	}
	a.t.Fatalf("%s: not reached within %v", what, timeout)
}

// binding names one stream/consumer pair of a test.
func testBinding(stream, consumer, subject string) jspull.Binding {
	return jspull.Binding{
		Stream:         stream,
		Consumer:       consumer,
		FilterSubject:  subject,
		PayloadCeiling: 256,
		AckWait:        jspull.MinAckWait,
		MaxDeliver:     3,
	}
}

// puller is a tenant connection holding exactly the derived permissions of
// one binding, and the Consumer of that binding.
type puller struct {
	t *testing.T
	c *conn.Conn
	p *jspull.Consumer
}

// newPuller dials b as a user holding perms, with a Consumer of bind made
// with pullOptions(opts).
func newPuller(t *testing.T, b *broker.Broker, bind jspull.Binding, perms jspull.Permissions, opts jspull.Options) *puller {
	t.Helper()
	p, err := jspull.NewConsumer(bind, pullOptions(opts))
	if err != nil {
		t.Fatal(err)
	}
	return &puller{t: t, c: pullDial(t, b, pullUser(t, b, perms)), p: p}
}

func derive(t testing.TB, bind jspull.Binding) jspull.Permissions {
	t.Helper()
	perms, err := jspull.DerivePermissions(conn.DefaultInboxPrefix, bind)
	if err != nil {
		t.Fatal(err)
	}
	return perms
}

func (p *puller) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(p.t.Context(), pullTimeout)
}

func (p *puller) inspect() (jspull.Pending, error) {
	ctx, cancel := p.ctx()
	defer cancel()
	return p.p.Inspect(ctx, p.c)
}

func (p *puller) next() (jspull.Result, error) {
	ctx, cancel := p.ctx()
	defer cancel()
	res, err := p.p.Next(ctx, p.c)
	res.Payload = append([]byte(nil), res.Payload...)
	res.Header = append([]byte(nil), res.Header...)
	return res, err
}

// mustMessage pulls and requires a message.
func (p *puller) mustMessage() jspull.Result {
	p.t.Helper()
	res, err := p.next()
	if err != nil || res.Kind != jspull.KindMessage {
		p.t.Fatalf("Next() = %v, %v; want a message", res.Kind, err)
	}
	return res
}

// nextMessage pulls until a message arrives, within timeout: each pull
// lasts about the broker's 100 ms expiry.
func (p *puller) nextMessage(timeout time.Duration) jspull.Result {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for i := 0; i < 1000 && time.Now().Before(deadline); i++ {
		res, err := p.next()
		if err != nil {
			p.t.Fatalf("Next() = %v", err)
		}
		if res.Kind == jspull.KindMessage {
			return res
		}
	}
	p.t.Fatalf("no message within %v", timeout)
	return jspull.Result{}
}

func (p *puller) ack(d *jspull.Delivery, cmd jspull.Command) (jspull.Receipt, error) {
	ctx, cancel := p.ctx()
	defer cancel()
	return p.p.Ack(ctx, p.c, d, cmd)
}

func (p *puller) mustAck(d *jspull.Delivery, cmd jspull.Command) jspull.Receipt {
	p.t.Helper()
	rec, err := p.ack(d, cmd)
	if err != nil || rec.Outcome != pull.AckVerified {
		p.t.Fatalf("Ack(%v) = %+v, %v; want verified", cmd.Action, rec, err)
	}
	return rec
}

// cutProxy forwards one TCP connection to the broker byte for byte (TLS
// passes through untouched) and can stop forwarding either direction, to
// lose a command before it reaches the broker or a receipt after the broker
// committed the command.
type cutProxy struct {
	ln       net.Listener
	target   string
	dropUp   atomic.Bool // client to broker
	dropDown atomic.Bool // broker to client
	mu       sync.Mutex
	conns    []net.Conn
	wg       sync.WaitGroup
}

func startCutProxy(t *testing.T, target netip.AddrPort) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target.String()}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *cutProxy) addr() netip.AddrPort {
	return netip.MustParseAddrPort(p.ln.Addr().String())
}

func (p *cutProxy) accept() {
	defer p.wg.Done()
	for {
		down, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.DialTimeout("tcp4", p.target, pullTimeout)
		if err != nil {
			_ = down.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, down, up)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(up, down, &p.dropUp)
		go p.pipe(down, up, &p.dropDown)
	}
}

// pipe copies src to dst until either closes, discarding while drop is set.
func (p *cutProxy) pipe(dst, src net.Conn, drop *atomic.Bool) {
	defer p.wg.Done()
	defer func() { _ = dst.Close(); _ = src.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !drop.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *cutProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// dialVia dials the broker through the proxy as the given user.
func dialVia(t *testing.T, b *broker.Broker, via netip.AddrPort, creds broker.Creds) *conn.Conn {
	t.Helper()
	file, err := creds.File()
	if err != nil {
		t.Fatal(err)
	}
	secret, err := credential.ParseCreds(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(secret.Wipe)
	ctx, cancel := context.WithTimeout(t.Context(), pullTimeout)
	defer cancel()
	c, err := conn.Dial(ctx, conn.Config{
		Addr: via, AllowNonPublic: via.Addr(), ServerName: b.ServerName(), Roots: b.RootCAs(),
		Credential: secret, Name: "pull-proxied",
	})
	if err != nil {
		t.Fatalf("Dial via proxy: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
