package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/tools/broker"
)

// Fixed settings of the pull comparison.
const (
	// pullTenant is the one tenant account of the broker.
	pullTenant = "bench"
	// pullStream is the stream every consumer of the comparison reads.
	pullStream = "BENCH"
	// payloadSize is the size of every stored message body, in bytes.
	payloadSize = 256
	// payloadCeiling is the bindings' payload ceiling, so the consumers'
	// and the pull requests' max_bytes is 1024 + jspull.MaxBytesOverhead.
	payloadCeiling = 1024
	// benchAckWait and benchMaxDeliver are the consumers' ack_wait and
	// max_deliver.
	benchAckWait    = 30 * time.Second
	benchMaxDeliver = 5
	// adminTimeout bounds each provisioning request, each dial and each
	// nats.go core request.
	adminTimeout = 5 * time.Second
	// opBound bounds each operation of the nats.go core loop: the same as
	// jspull.DefaultOpTimeout, which bounds Inspect and Ack of this project.
	opBound = jspull.DefaultOpTimeout
	// startTimeout bounds finding the nats-server binary and starting it.
	startTimeout = 3 * time.Minute
)

// loopName names one consumer of the comparison: its durable name and the
// last token of its filter subject.
type loopName string

// The consumers, one per loop, so that no loop sees another's deliveries or
// trailing statuses.
const (
	loopLatent    loopName = "latent"
	loopCore      loopName = "core"
	loopJetStream loopName = "jetstream"
	loopEmpty     loopName = "empty"
)

// binding is the profile binding of one loop's consumer.
func binding(name loopName) jspull.Binding {
	return jspull.Binding{
		Stream:         pullStream,
		Consumer:       string(name),
		FilterSubject:  "bench." + string(name),
		PayloadCeiling: payloadCeiling,
		AckWait:        benchAckWait,
		MaxDeliver:     benchMaxDeliver,
	}
}

// profileConfig is the consumer configuration the profile requires for b,
// as the provisioning tool creates it.
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

// admin provisions the stream and consumers with raw JetStream API requests
// on a connection of the tenant's full-permission user, as the provisioning
// tool does.
type admin struct {
	c *conn.Conn
}

// request sends one request and returns a copy of the reply payload; a
// status reply is an error.
func (a *admin) request(ctx context.Context, subject string, body []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	r, err := a.c.Request(ctx, subject, nil, body)
	if err != nil {
		return nil, fmt.Errorf("peerbench: admin request %s: %w", subject, err)
	}
	if r.Status != 0 {
		return nil, fmt.Errorf("peerbench: admin request %s: status %d", subject, r.Status)
	}
	return append([]byte(nil), r.Payload...), nil
}

// apiError is the error object of a JetStream API reply.
type apiError struct {
	Code    int `json:"code"`
	ErrCode int `json:"err_code"`
}

// api sends a JetStream API request and decodes the reply into resp (nil
// to discard it); an API error is an error.
func (a *admin) api(ctx context.Context, subject string, req, resp any) error {
	var body []byte
	if req != nil {
		var err error
		if body, err = json.Marshal(req); err != nil {
			return err
		}
	}
	payload, err := a.request(ctx, subject, body)
	if err != nil {
		return err
	}
	var envelope struct {
		Error *apiError `json:"error"`
	}
	if err := json.Unmarshal(payload, &envelope); err != nil {
		return fmt.Errorf("peerbench: admin %s: %w", subject, err)
	}
	if envelope.Error != nil {
		return fmt.Errorf("peerbench: admin %s: api error %d/%d", subject, envelope.Error.Code, envelope.Error.ErrCode)
	}
	if resp == nil {
		return nil
	}
	return json.Unmarshal(payload, resp)
}

func (a *admin) createStream(ctx context.Context, storage string) error {
	return a.api(ctx, "$JS.API.STREAM.CREATE."+pullStream, map[string]any{
		"name": pullStream, "subjects": []string{"bench.>"}, "storage": storage,
	}, nil)
}

func (a *admin) createConsumer(ctx context.Context, b jspull.Binding) error {
	return a.api(ctx, "$JS.API.CONSUMER.CREATE."+b.Stream+"."+b.Consumer, map[string]any{
		"stream_name": b.Stream, "config": profileConfig(b), "action": "create",
	}, nil)
}

// publish stores n copies of payload under subject, each acknowledged by
// the stream.
func (a *admin) publish(ctx context.Context, subject string, payload []byte, n int) error {
	for i := range n {
		reply, err := a.request(ctx, subject, payload)
		if err != nil {
			return err
		}
		var ack struct {
			Seq   uint64    `json:"seq"`
			Error *apiError `json:"error"`
		}
		if err := json.Unmarshal(reply, &ack); err != nil || ack.Seq == 0 || ack.Error != nil {
			return fmt.Errorf("peerbench: publish %d to %s: not stored (%v)", i, subject, err)
		}
	}
	return nil
}

// counters are the admin's view of a consumer after the run.
type counters struct {
	NumPending    uint64 `json:"num_pending"`
	NumAckPending int    `json:"num_ack_pending"`
	NumWaiting    int    `json:"num_waiting"`
	Delivered     struct {
		ConsumerSeq uint64 `json:"consumer_seq"`
	} `json:"delivered"`
	AckFloor struct {
		ConsumerSeq uint64 `json:"consumer_seq"`
	} `json:"ack_floor"`
}

func (a *admin) counters(ctx context.Context, name loopName) (counters, error) {
	var c counters
	err := a.api(ctx, binding(name).InfoSubject(), nil, &c)
	return c, err
}

// dialLatent connects this project's client as the given user.
func dialLatent(ctx context.Context, brk *broker.Broker, creds broker.Creds, name string, thread bool) (*conn.Conn, error) {
	file, err := creds.File()
	if err != nil {
		return nil, err
	}
	secret, err := credential.ParseCreds(file)
	clear(file)
	if err != nil {
		return nil, err
	}
	defer secret.Wipe() // CONNECT is the only use of it
	ctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	return conn.Dial(ctx, conn.Config{
		Addr:           brk.Addr(),
		AllowNonPublic: brk.Addr().Addr(),
		ServerName:     brk.ServerName(),
		Roots:          brk.RootCAs(),
		Credential:     secret,
		Name:           name,
		ThreadSocket:   thread,
	})
}

// dialNats connects nats.go as the given user: handshake-first TLS, the
// broker's CA only, its server name verified, the .creds file written into
// the broker's directory (removed with it).
func dialNats(brk *broker.Broker, creds broker.Creds, name string) (*nats.Conn, error) {
	path, err := brk.WriteCreds(name+".creds", creds)
	if err != nil {
		return nil, err
	}
	return nats.Connect("tls://"+brk.Addr().String(),
		nats.Secure(&tls.Config{ServerName: brk.ServerName(), MinVersion: tls.VersionTLS12}),
		nats.RootCAs(brk.CAFile()),
		nats.TLSHandshakeFirst(),
		nats.UserCredentials(path),
		nats.Name(name),
		nats.NoReconnect(),
		nats.Timeout(adminTimeout),
	)
}

// pullEnv is the broker with its provisioned stream, consumers and the
// connections of every loop.
type pullEnv struct {
	brk   *broker.Broker
	admin *admin

	latent *conn.Conn // this project: the latent and empty consumers
	core   *nats.Conn // nats.go core request/reply: the core consumer
	js     *nats.Conn // nats.go jetstream: the jetstream consumer
	floor  *nats.Conn // nats.go core request/reply: the floor loop (admin user)
}

// startEnv starts the broker, provisions the stream and the four consumers,
// publishes perLoop messages for each of the three message loops and dials
// every connection. On error everything started is stopped and removed.
func startEnv(ctx context.Context, o pullOptions, perLoop int) (env *pullEnv, err error) {
	bin := o.server
	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if bin == "" {
		if bin, err = broker.ServerBinary(sctx); err != nil {
			return nil, fmt.Errorf("peerbench: nats-server %s: %w (build it with `make broker` in the main module and pass -server or set %s)",
				broker.ServerVersion, err, broker.EnvServer)
		}
	} else if bin, err = filepath.Abs(bin); err != nil { // the server runs in its own directory
		return nil, err
	}
	brk, err := broker.Start(sctx, broker.Options{Tenants: []string{pullTenant}, Binary: bin})
	if err != nil {
		return nil, err
	}
	env = &pullEnv{brk: brk}
	defer func() {
		if err != nil {
			err = errors.Join(err, env.close())
			env = nil
		}
	}()

	adminCreds, err := brk.Admin(pullTenant)
	if err != nil {
		return env, err
	}
	ac, err := dialLatent(ctx, brk, adminCreds, "peerbench-admin", o.thread)
	if err != nil {
		return env, err
	}
	env.admin = &admin{c: ac}
	if err := env.admin.createStream(ctx, o.storage); err != nil {
		return env, err
	}
	for _, n := range []loopName{loopLatent, loopCore, loopJetStream, loopEmpty} {
		if err := env.admin.createConsumer(ctx, binding(n)); err != nil {
			return env, err
		}
	}
	payload := make([]byte, payloadSize)
	for i := range payload {
		payload[i] = 'a' + byte(i%26)
	}
	for _, n := range []loopName{loopLatent, loopCore, loopJetStream} {
		if err := env.admin.publish(ctx, binding(n).FilterSubject, payload, perLoop); err != nil {
			return env, err
		}
	}

	// Every user holds exactly the permissions the project derives for its
	// bindings; nats.go's inboxes ("_INBOX.<nuid>" and its request mux
	// "_INBOX.<nuid>.*") fall under the same "_INBOX.>" grant.
	user := func(name string, bs ...jspull.Binding) (broker.Creds, error) {
		perms, err := jspull.DerivePermissions(conn.DefaultInboxPrefix, bs...)
		if err != nil {
			return broker.Creds{}, err
		}
		return brk.User(pullTenant, broker.UserSpec{Name: name, PubAllow: perms.Publish, SubAllow: perms.Subscribe})
	}
	lc, err := user("latent", binding(loopLatent), binding(loopEmpty))
	if err != nil {
		return env, err
	}
	if env.latent, err = dialLatent(ctx, brk, lc, "peerbench-latent", o.thread); err != nil {
		return env, err
	}
	cc, err := user("core", binding(loopCore))
	if err != nil {
		return env, err
	}
	if env.core, err = dialNats(brk, cc, "peerbench-core"); err != nil {
		return env, err
	}
	jc, err := user("jetstream", binding(loopJetStream))
	if err != nil {
		return env, err
	}
	if env.js, err = dialNats(brk, jc, "peerbench-jetstream"); err != nil {
		return env, err
	}
	if env.floor, err = dialNats(brk, adminCreds, "peerbench-floor"); err != nil {
		return env, err
	}
	return env, nil
}

// close closes every connection, stops the broker and removes its
// directory.
func (e *pullEnv) close() error {
	var errs []error
	for _, nc := range []*nats.Conn{e.core, e.js, e.floor} {
		if nc != nil {
			nc.Close()
		}
	}
	for _, c := range []*conn.Conn{e.latent, adminConn(e.admin)} {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	errs = append(errs, e.brk.Close())
	return errors.Join(errs...)
}

func adminConn(a *admin) *conn.Conn {
	if a == nil {
		return nil
	}
	return a.c
}
