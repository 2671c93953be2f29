package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// Fixed settings of the idle comparison.
const (
	// idleLatentTenant and idleNatsTenant are the two accounts: this
	// project's bindings and nats.go's consumers never share a stream.
	idleLatentTenant = "latent"
	idleNatsTenant   = "natsgo"
	// idleStream is each account's one stream; idleSubjectPrefix its
	// subjects' first tokens ("idle.in.<i>", one per consumer).
	idleStream        = "IDLE"
	idleSubjectPrefix = "idle.in."
	// idleService, idleContract and idleFunction are the one publication
	// every binding delivers to.
	idleService  = "idle"
	idleContract = "latent:idle/handler@1.0.0"
	idleFunction = "handle"
	// idlePayloadCeiling is every binding's payload ceiling, in bytes.
	idlePayloadCeiling = 256
	// idleTimeoutMS and idleAckWaitMS are every binding's operation
	// timeout and ack wait; idleMaxDeliver its max_deliver.
	idleTimeoutMS  = 1000
	idleAckWaitMS  = 2000
	idleMaxDeliver = 3
	// monitorTimeout bounds each request to the broker's HTTP monitor.
	monitorTimeout = 5 * time.Second
	// maxMonitorBody bounds the body read from the HTTP monitor.
	maxMonitorBody = 4 << 20
)

// monitorLine is how nats-server 2.14.6 announces its HTTP monitor; with
// `http: "127.0.0.1:-1"` the port is chosen by the server.
const monitorLine = `Starting http monitor on 127\.0\.0\.1:([0-9]{1,5})`

// idleConsumer is the durable name of consumer i of either account.
func idleConsumer(i int) string { return fmt.Sprintf("c%03d", i) }

// idleGrants are the publish and subscribe grants of both measured users:
// the consumer-info, pull and acknowledgement subjects of every consumer
// of the account's stream, as stream-scoped wildcards, and subscribe on
// inboxPrefix + ".>" only. The exact subjects jspull.DerivePermissions gives
// for 256 bindings (1,024 publish subjects) make a user JWT of about 60 KB:
// over nats-server's default 4,096-byte max_control_line, over
// conn.MaxConnectLen and over tools/broker's MaxSubjects per list, so
// raising max_control_line alone would not do. The wildcards name nothing
// outside this stream and the profile's three operations. The trigger
// runtime's user gets its tenant's private inbox, trigger.InboxPrefix; the
// nats.go user nats.go's own default inbox prefix, "_INBOX".
func idleGrants(name, inboxPrefix string) broker.UserSpec {
	return broker.UserSpec{
		Name: name,
		PubAllow: []string{
			"$JS.API.CONSUMER.INFO." + idleStream + ".*",
			"$JS.API.CONSUMER.MSG.NEXT." + idleStream + ".*",
			"$JS.ACK." + idleStream + ".>",
			"$JS.ACK.*.*." + idleStream + ".>",
		},
		SubAllow: []string{inboxPrefix + ".>"},
	}
}

// idleEnv is the broker with both accounts provisioned, this project's
// configuration and credential, and the reference host.
type idleEnv struct {
	brk         *broker.Broker
	monitorPort int

	cfg    trigger.Config       // MaxBindings bindings of the latent account
	secret *credential.Secret   // the latent runtime user's
	creds  []trigger.Credential // one, the latent tenant's
	host   *refhost.Host

	natsUser broker.Creds // the nats.go user's
}

// startIdleEnv starts the broker with its HTTP monitor, provisions
// trigger.MaxBindings consumers of the profile in the latent account and
// as many nats.go-style consumers in the natsgo account, mints both users
// and builds the configuration and the host. On error everything started
// is stopped and removed.
func startIdleEnv(ctx context.Context, server string) (env *idleEnv, err error) {
	bin := server
	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if bin == "" {
		if bin, err = broker.ServerBinary(sctx); err != nil {
			return nil, fmt.Errorf("peerbench: nats-server %s: %w (build it with `make broker` in the main module and pass -server or set %s)",
				broker.ServerVersion, err, broker.EnvServer)
		}
	} else if bin, err = filepath.Abs(bin); err != nil {
		return nil, err
	}
	brk, err := broker.Start(sctx, broker.Options{
		Tenants: []string{idleLatentTenant, idleNatsTenant},
		Binary:  bin,
		Extra:   `http: "127.0.0.1:-1"`,
	})
	if err != nil {
		return nil, err
	}
	env = &idleEnv{brk: brk}
	defer func() {
		if err != nil {
			err = errors.Join(err, env.close())
			env = nil
		}
	}()
	m := regexp.MustCompile(monitorLine).FindSubmatch(brk.Logs())
	if m == nil {
		return env, errors.New("peerbench: the broker did not announce its HTTP monitor")
	}
	if env.monitorPort, err = strconv.Atoi(string(m[1])); err != nil || env.monitorPort < 1 || env.monitorPort > 65535 {
		return env, errors.New("peerbench: bad HTTP monitor port")
	}

	// The administrators' connections are closed once provisioning is
	// done: conn answers the broker's PINGs only while it reads, so a
	// connection left idle for minutes is closed by the broker as stale.
	env.cfg = idleConfig(brk)
	if err := env.withAdmin(ctx, idleLatentTenant, env.provisionLatent); err != nil {
		return env, err
	}
	if err := env.withAdmin(ctx, idleNatsTenant, provisionNats); err != nil {
		return env, err
	}

	lc, err := brk.User(idleLatentTenant, idleGrants("trigger", trigger.InboxPrefix(idleLatentTenant)))
	if err != nil {
		return env, err
	}
	file, err := lc.File()
	if err != nil {
		return env, err
	}
	env.secret, err = credential.ParseCreds(file)
	clear(file)
	if err != nil {
		return env, err
	}
	t := env.cfg.Tenants[0]
	env.creds = []trigger.Credential{{Tenant: t.ID, ProviderID: t.ProviderID, Destination: t.Destination, Secret: env.secret}}
	if env.natsUser, err = brk.User(idleNatsTenant, idleGrants("natsgo", strings.TrimSuffix(nats.InboxPrefix, "."))); err != nil {
		return env, err
	}
	if env.host, err = idleHost(); err != nil {
		return env, err
	}
	return env, nil
}

// withAdmin runs f on a new connection of the tenant's full-permission
// user and closes it.
func (e *idleEnv) withAdmin(ctx context.Context, tenant string, f func(context.Context, *admin) error) error {
	creds, err := e.brk.Admin(tenant)
	if err != nil {
		return err
	}
	c, err := dialLatent(ctx, e.brk, creds, "peerbench-admin-"+tenant, false)
	if err != nil {
		return err
	}
	return errors.Join(f(ctx, &admin{c: c}), c.Close())
}

// idleConfig is trigger.MaxBindings bindings of the latent tenant, each on
// its own durable consumer of the one stream, polled every
// MinPollIntervalMS (each phase sets its own interval).
func idleConfig(brk *broker.Broker) trigger.Config {
	cfg := trigger.Config{
		Profile:             trigger.ProfileName,
		PollIntervalMS:      trigger.MinPollIntervalMS,
		MaxControlLineBytes: 4096,
		MaxHeaderBytes:      4096,
		Tenants: []trigger.Tenant{{ID: idleLatentTenant, ProviderID: "local", Destination: trigger.Destination{
			Address:        brk.Addr(),
			ServerName:     brk.ServerName(),
			RootCAsPEM:     string(brk.CAPEM()),
			AllowNonPublic: true,
		}}},
	}
	for i := range trigger.MaxBindings {
		cfg.Bindings = append(cfg.Bindings, trigger.Binding{
			ID:                 fmt.Sprintf("idle.b%d", i),
			Tenant:             idleLatentTenant,
			Principal:          "svc:idle",
			Service:            idleService,
			Contract:           idleContract,
			Function:           idleFunction,
			Stream:             idleStream,
			Consumer:           idleConsumer(i),
			FilterSubject:      idleSubjectPrefix + strconv.Itoa(i),
			MaxPayloadBytes:    idlePayloadCeiling,
			OperationTimeoutMS: idleTimeoutMS,
			RootBudgetMS:       idleTimeoutMS,
			MaxDeliver:         idleMaxDeliver,
			AckWaitMS:          idleAckWaitMS,
			NakDelayMS:         trigger.MinNakDelayMS,
		})
	}
	return cfg
}

// pullBinding is the part of a configured binding the profile's consumer
// configuration needs.
func pullBinding(b trigger.Binding) jspull.Binding {
	return jspull.Binding{
		Stream:         b.Stream,
		Consumer:       b.Consumer,
		FilterSubject:  b.FilterSubject,
		PayloadCeiling: b.MaxPayloadBytes,
		AckWait:        b.AckWait(),
		MaxDeliver:     b.MaxDeliver,
	}
}

// provisionLatent creates the latent account's memory stream and one
// consumer with exactly the profile's configuration per binding.
func (e *idleEnv) provisionLatent(ctx context.Context, a *admin) error {
	subjects := make([]string, 0, len(e.cfg.Bindings))
	for _, b := range e.cfg.Bindings {
		subjects = append(subjects, b.FilterSubject)
	}
	if err := a.api(ctx, "$JS.API.STREAM.CREATE."+idleStream, map[string]any{
		"name": idleStream, "subjects": subjects, "storage": "memory",
	}, nil); err != nil {
		return err
	}
	for _, b := range e.cfg.Bindings {
		if err := a.createConsumer(ctx, pullBinding(b)); err != nil {
			return err
		}
	}
	return nil
}

// natsConsumerConfig is what nats.go's CreateConsumer sends for a durable
// pull consumer with only a name, a filter, explicit acks and the same ack
// wait and max_deliver as the bindings: the broker defaults everything
// else (max_waiting 512, max_ack_pending 1000, no batch, expiry or byte
// limit). The profile's consumers (max_batch 1, max_expires 100 ms) would
// refuse Consume's default pull of 500 messages held for 30 s.
func natsConsumerConfig(i int) map[string]any {
	return map[string]any{
		"durable_name":   idleConsumer(i),
		"deliver_policy": "all",
		"ack_policy":     "explicit",
		"ack_wait":       int64(idleAckWaitMS * time.Millisecond),
		"max_deliver":    idleMaxDeliver,
		"filter_subject": idleSubjectPrefix + strconv.Itoa(i),
		"replay_policy":  "instant",
	}
}

// provisionNats creates the natsgo account's memory stream and its
// trigger.MaxBindings durable consumers.
func provisionNats(ctx context.Context, a *admin) error {
	if err := a.api(ctx, "$JS.API.STREAM.CREATE."+idleStream, map[string]any{
		"name": idleStream, "subjects": []string{idleSubjectPrefix + ">"}, "storage": "memory",
	}, nil); err != nil {
		return err
	}
	for i := range trigger.MaxBindings {
		if err := a.api(ctx, "$JS.API.CONSUMER.CREATE."+idleStream+"."+idleConsumer(i), map[string]any{
			"stream_name": idleStream, "config": natsConsumerConfig(i), "action": "create",
		}, nil); err != nil {
			return err
		}
	}
	return nil
}

// idleHost is a reference host with the bindings' one function published
// and routed; no message arrives, so it is never called.
func idleHost() (*refhost.Host, error) {
	// Two owners run side by side in one phase: a slot each, so that no
	// visit is refused admission.
	h, err := refhost.New(refhost.Config{MaxActivations: 2, MaxInputBytes: 2 * idlePayloadCeiling})
	if err != nil {
		return nil, err
	}
	err = h.Register(refhost.Function{
		Service: idleService, Revision: "r1", Contract: idleContract, Name: idleFunction,
		Params: []refhost.Type{refhost.String()},
		Func:   func(context.Context, refhost.Call) error { return nil },
	})
	if err != nil {
		return nil, err
	}
	if err := h.Publish(refhost.PublicationKey{Service: idleService, Contract: idleContract, Function: idleFunction}); err != nil {
		return nil, err
	}
	if _, err := h.SetRoute(idleService, "", "r1"); err != nil {
		return nil, err
	}
	return h, nil
}

// dialNatsIdle connects nats.go as the natsgo user, recording its
// asynchronous errors.
func (e *idleEnv) dialNatsIdle(name string, asyncErr func(error)) (*nats.Conn, error) {
	path, err := e.brk.WriteCreds(name+".creds", e.natsUser)
	if err != nil {
		return nil, err
	}
	return nats.Connect("tls://"+e.brk.Addr().String(),
		nats.Secure(&tls.Config{ServerName: e.brk.ServerName(), MinVersion: tls.VersionTLS12}),
		nats.RootCAs(e.brk.CAFile()),
		nats.TLSHandshakeFirst(),
		nats.UserCredentials(path),
		nats.Name(name),
		nats.NoReconnect(),
		nats.Timeout(adminTimeout),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { asyncErr(err) }),
	)
}

// connStats is the broker's view of one client connection.
type connStats struct {
	CID     uint64 `json:"cid"`
	Name    string `json:"name"`
	InMsgs  int64  `json:"in_msgs"`
	OutMsgs int64  `json:"out_msgs"`
	Subs    int    `json:"subscriptions"`
}

// serverStats are the broker's totals (varz).
type serverStats struct {
	InMsgs  int64 `json:"in_msgs"`
	OutMsgs int64 `json:"out_msgs"`
}

// monitorGet reads one monitor endpoint into v with a plain HTTP/1.0
// request on a connection of its own, closed before it returns (no pooled
// connection and no goroutine outlives it, so the process's counts are
// not disturbed).
func (e *idleEnv) monitorGet(ctx context.Context, path string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, monitorTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(e.monitorPort)))
	if err != nil {
		return fmt.Errorf("peerbench: monitor: %w", err)
	}
	defer c.Close()
	deadline, _ := ctx.Deadline()
	if err := c.SetDeadline(deadline); err != nil {
		return err
	}
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		return fmt.Errorf("peerbench: monitor: %w", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return fmt.Errorf("peerbench: monitor: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("peerbench: monitor %s: status %d", path, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMonitorBody))
	if err != nil {
		return fmt.Errorf("peerbench: monitor: %w", err)
	}
	return json.Unmarshal(body, v)
}

// conns returns the open client connections named name.
func (e *idleEnv) conns(ctx context.Context, name string) ([]connStats, error) {
	var resp struct {
		Conns []connStats `json:"connections"`
	}
	if err := e.monitorGet(ctx, "/connz?limit=1024", &resp); err != nil {
		return nil, err
	}
	var out []connStats
	for _, c := range resp.Conns {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out, nil
}

// oneConn returns the one open client connection named name.
func (e *idleEnv) oneConn(ctx context.Context, name string) (connStats, error) {
	cs, err := e.conns(ctx, name)
	if err != nil {
		return connStats{}, err
	}
	if len(cs) != 1 {
		return connStats{}, fmt.Errorf("peerbench: broker sees %d connections named %s, want 1", len(cs), name)
	}
	return cs[0], nil
}

// varz returns the broker's message totals.
func (e *idleEnv) varz(ctx context.Context) (serverStats, error) {
	var s serverStats
	err := e.monitorGet(ctx, "/varz", &s)
	return s, err
}

// close wipes the credential, stops the broker and removes its directory.
func (e *idleEnv) close() error {
	if e.secret != nil {
		e.secret.Wipe()
	}
	return e.brk.Close()
}
