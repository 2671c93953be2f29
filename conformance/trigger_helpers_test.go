package conformance_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/broker/brokertest"
	"github.com/latent-systems/latent-nats/tools/ledger"
	prov "github.com/latent-systems/latent-nats/tools/provision"
	"github.com/latent-systems/latent-nats/trigger"
	"github.com/latent-systems/latent-nats/trigger/refhost"
)

// The publication every binding of the suite delivers to, unless a case
// names another function.
const (
	trigService  = "events"
	trigContract = "latent:events/handler@1.0.0"
	trigFunction = "handle"
	// trigAudit is a second function of the same contract: a publication
	// of its own, for revocations scoped to one binding.
	trigAudit = "audit"
	// trigDeclared is the failure code the contract declares.
	trigDeclared = "rejected"
	// trigStream is the stream of every tenant (each tenant is its own
	// account, so the name does not clash).
	trigStream = "TRIG"
	// trigPollTick paces the suite's bounded polling of counters that no
	// event announces.
	trigPollTick = 5 * time.Millisecond
)

// Arguments of the suite's function, the one string parameter of its
// signature; each names what the function does.
const (
	argOK      = "ok"      // returns nil: success
	argFail    = "fail"    // the declared failure: +TERM
	argRetry   = "retry"   // an undeclared error, a platform failure: -NAK, then exhausted
	argBlock   = "block"   // waits for the case's release or its context
	argActions = "actions" // runs the case's action (setAction), else returns nil
)

// trigPayload encodes one argument array of the suite's signature.
func trigPayload(arg string) []byte { return []byte(`["` + arg + `"]`) }

// trigSpec describes one case's broker, tenants and bindings.
type trigSpec struct {
	// tenants and, for each, its number of bindings.
	tenants   []string
	perTenant []int
	// binding adjusts binding i of tenant k after the defaults are set.
	binding func(k, i int, b *trigger.Binding)
	// storage is the stream storage, "memory" unless set ("file" survives
	// a broker restart).
	storage string
	// retention is the stream's retention policy, "limits" unless set
	// ("workqueue" removes a message once acknowledged).
	retention string
	// provision, when set, creates each tenant's stream, consumers and
	// capture streams with tools/provision and these options, as an
	// operator would, in place of storage and retention above.
	provision *prov.Options
	// prefixGrants mints users whose publish grants name the tenant's
	// stream with a wildcard for the consumer rather than each consumer:
	// see TestTriggerIdleBindings.
	prefixGrants bool
	// scopedRole, when set, mints each tenant's runtime user signed by
	// the tenant account's scoped signing key of that role, its JWT free
	// of permissions: the broker must have been started with the key
	// (trigScopedStart).
	scopedRole string
	// clientCerts gives every secret, the administrators' and the
	// runtime's, a client certificate of the broker's client CA (a broker
	// started with ClientCertificates requires one).
	clientCerts bool
	// dialer, when set, makes the pools' Dialer from the started broker.
	dialer func(t *testing.T, b *broker.Broker) conn.Dialer
	// logger, when set, is the pools' Logger.
	logger *slog.Logger
	// host bounds the reference host (default 16 slots, 16 payloads; with
	// wasm, guest memory for 16 activations).
	host *refhost.Config
	// wasm, when set, registers WebAssembly guests (trigger/wasmhost) as
	// revisions r1 and r2 of the function in place of the suite's Go
	// functions: see trigger_wasm_helpers_test.go.
	wasm *trigWasmSpec
}

// trigCall is what the suite's function saw of one activation.
type trigCall struct {
	Binding   string
	Tenant    string
	Function  string
	Revision  string
	Gen       uint64
	StreamSeq uint64
	Delivered uint64
	Arg       string
	At        time.Time
}

// trigTenantEnv is one tenant's account: its administrator (operator-side
// provisioning, publishing and inspecting) and its account key.
type trigTenantEnv struct {
	id      string
	account string
	adm     *trigAdmin
}

// trigEnv is one case: a broker, its tenants, the runtime installed with
// the reference host, and what the function saw.
type trigEnv struct {
	b       *broker.Broker
	tenants []*trigTenantEnv
	cfg     trigger.Config
	pools   *trigger.Pools
	trig    *trigger.Triggers
	mon     *trigger.Monitor
	ref     *refhost.Host
	host    *trigHookHost
	creds   []trigger.Credential
	// files holds each tenant's runtime credentials file, for a second
	// process.
	files [][]byte

	// calls receives one trigCall per function call (while it has room).
	calls chan trigCall
	// started receives one value when an argBlock call starts; release
	// ends it successfully.
	started chan trigCall
	release chan struct{}

	// led records every publish, run and step report of the case
	// (tools/ledger), for the fault scenarios' verdicts.
	led *ledger.Ledger
	// wasm is the WebAssembly runtime of a case whose spec set wasm, and
	// what its guests did; nil otherwise.
	wasm *trigWasm

	mu sync.Mutex
	// action is run by argActions calls.
	action func(ctx context.Context, c refhost.Call) error
	log    []trigCall
}

// trigStart starts a broker and provisions and installs spec.
func trigStart(t *testing.T, spec trigSpec) *trigEnv {
	t.Helper()
	b := brokertest.Start(t, broker.Options{Tenants: spec.tenants})
	return trigInstall(t, b, spec)
}

// trigInstall provisions spec on b (one stream per tenant, one profile
// consumer per binding, one runtime user per tenant with the derived
// permissions) and installs it with the reference host.
func trigInstall(t *testing.T, b *broker.Broker, spec trigSpec) *trigEnv {
	t.Helper()
	storage := spec.storage
	if storage == "" {
		storage = "memory"
	}
	e := &trigEnv{
		b:       b,
		calls:   make(chan trigCall, 1024),
		started: make(chan trigCall, 16),
		release: make(chan struct{}),
	}
	e.cfg = trigger.Config{
		Profile:             trigger.ProfileName,
		PollIntervalMS:      trigger.MinPollIntervalMS,
		MaxControlLineBytes: 4096,
		MaxHeaderBytes:      4096,
	}
	dest := trigger.Destination{
		Address:        b.Addr(),
		ServerName:     b.ServerName(),
		RootCAsPEM:     string(b.CAPEM()),
		AllowNonPublic: true,
	}
	var creds, admins []trigger.Credential
	for k, id := range spec.tenants {
		adminCreds, err := b.Admin(id)
		if err != nil {
			t.Fatal(err)
		}
		acct, err := b.AccountKey(id)
		if err != nil {
			t.Fatal(err)
		}
		adminSecret := trigSecret(t, adminCreds)
		if spec.clientCerts {
			trigAddCert(t, b, adminSecret, id+"-admin")
		}
		adminConn, err := pullDialSecret(t, b, adminSecret)
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		te := &trigTenantEnv{id: id, account: acct, adm: &trigAdmin{t: t, c: adminConn}}
		e.tenants = append(e.tenants, te)
		e.cfg.Tenants = append(e.cfg.Tenants, trigger.Tenant{ID: id, ProviderID: "local", Destination: dest})

		var subjects []string
		var binds []jspull.Binding
		for i := range spec.perTenant[k] {
			bc := spec.bindingOf(k, i)
			e.cfg.Bindings = append(e.cfg.Bindings, bc)
			subjects = append(subjects, bc.FilterSubject)
			binds = append(binds, trigPullBinding(bc))
		}
		if spec.provision != nil {
			admins = append(admins, trigger.Credential{Tenant: id, ProviderID: "local", Destination: dest, Secret: adminSecret})
		} else {
			stream := map[string]any{"name": trigStream, "subjects": subjects, "storage": storage}
			if spec.retention != "" {
				stream["retention"] = spec.retention
			}
			te.adm.api("$JS.API.STREAM.CREATE."+trigStream, stream)
			for _, pb := range binds {
				te.adm.api("$JS.API.CONSUMER.CREATE."+trigStream+"."+pb.Consumer, map[string]any{
					"stream_name": trigStream, "config": profileConfig(pb), "action": "create",
				})
			}
		}
		var user broker.UserSpec
		if spec.scopedRole != "" {
			user = broker.UserSpec{Name: "trigger"} // the scope's permissions, none of its own
		} else if spec.prefixGrants {
			user = broker.UserSpec{
				Name: "trigger",
				PubAllow: []string{
					"$JS.API.CONSUMER.INFO." + trigStream + ".*",
					"$JS.API.CONSUMER.MSG.NEXT." + trigStream + ".*",
					"$JS.ACK." + trigStream + ".>",
					"$JS.ACK.*.*." + trigStream + ".>",
				},
				SubAllow: []string{trigger.InboxPrefix(id) + ".>"},
			}
		} else {
			perms, err := jspull.DerivePermissions(trigger.InboxPrefix(id), binds...)
			if err != nil {
				t.Fatal(err)
			}
			user = broker.UserSpec{Name: "trigger", PubAllow: perms.Publish, SubAllow: perms.Subscribe}
		}
		var uc broker.Creds
		if spec.scopedRole != "" {
			uc, err = b.ScopedUser(id, spec.scopedRole, user)
		} else {
			uc, err = b.User(id, user)
		}
		if err != nil {
			t.Fatal(err)
		}
		secret := trigSecret(t, uc)
		if spec.clientCerts {
			trigAddCert(t, b, secret, id)
		}
		creds = append(creds, trigger.Credential{Tenant: id, ProviderID: "local", Destination: dest, Secret: secret})
		file, err := uc.File()
		if err != nil {
			t.Fatal(err)
		}
		e.files = append(e.files, file)
	}
	if spec.provision != nil {
		ctx, cancel := context.WithTimeout(t.Context(), trigWait)
		rep, err := prov.Run(ctx, e.cfg, admins, *spec.provision)
		cancel()
		if err != nil || !rep.OK() {
			var b strings.Builder
			_, _ = rep.WriteTo(&b)
			t.Fatalf("provision: %v\n%s", err, b.String())
		}
	}

	// The shortest dial backoff: a restarted broker is dialled again soon.
	lim := trigger.DefaultPoolLimits()
	lim.DialBackoff = trigger.MinDialBackoff
	lim.MaxDialBackoff = 50 * time.Millisecond
	pc := trigger.PoolConfig{Limits: lim, Logger: spec.logger}
	if spec.dialer != nil {
		pc.Dialer = spec.dialer(t, b)
	}
	pools, err := trigger.NewPools(pc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pools.Close)
	e.pools = pools
	e.creds = creds
	e.trig, e.mon, err = trigger.Install(pools, trigger.Installation{LogicalID: "conformance", Epoch: 1, Config: e.cfg, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.trig.Close)
	e.led = ledger.New(e.cfg)

	hc := refhost.Config{MaxActivations: 16, MaxInputBytes: 16 * 256}
	if spec.wasm != nil {
		hc.MaxMemoryBytes = hc.MaxActivations * trigWasmMemory
	}
	if spec.host != nil {
		hc = *spec.host
	}
	e.ref, err = refhost.New(hc)
	if err != nil {
		t.Fatal(err)
	}
	e.host = &trigHookHost{Host: e.ref, led: e.led}
	if spec.wasm != nil {
		e.installWasm(t, spec.wasm)
	} else {
		for _, rev := range []string{"r1", "r2"} {
			for _, fn := range []string{trigFunction, trigAudit} {
				e.register(t, rev, fn)
			}
		}
	}
	for _, fn := range []string{trigFunction, trigAudit} {
		if err := e.ref.Publish(refhost.PublicationKey{Service: trigService, Contract: trigContract, Function: fn}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.ref.SetRoute(trigService, "", "r1"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The runtime has returned; no function may outlive the case.
		ctx, cancel := context.WithTimeout(context.Background(), trigWait)
		defer cancel()
		if err := e.ref.WaitIdle(ctx); err != nil {
			t.Errorf("reference host not idle: %v", err)
		}
	})
	return e
}

// trigSecret parses a minted user's credentials, wiped when the case ends.
func trigSecret(t *testing.T, c broker.Creds) *credential.Secret {
	t.Helper()
	file, err := c.File()
	if err != nil {
		t.Fatal(err)
	}
	secret, err := credential.ParseCreds(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(secret.Wipe)
	return secret
}

// trigAddCert attaches a client certificate of b's client CA, valid for
// the next hour, with common name cn, to secret.
func trigAddCert(t *testing.T, b *broker.Broker, secret *credential.Secret, cn string) {
	t.Helper()
	now := time.Now()
	certPEM, keyPEM, err := b.IssueClientCert(cn, now.Add(-time.Minute), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := secret.AddClientCertificate(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
}

// bindingOf returns binding i of tenant k: the suite's defaults, then
// spec.binding's adjustments.
func (spec trigSpec) bindingOf(k, i int) trigger.Binding {
	id := spec.tenants[k]
	bc := trigger.Binding{
		ID:                 fmt.Sprintf("%s.b%d", id, i),
		Tenant:             id,
		Principal:          "svc:" + id,
		Service:            trigService,
		Contract:           trigContract,
		Function:           trigFunction,
		Stream:             trigStream,
		Consumer:           fmt.Sprintf("%s-w%d", id, i),
		FilterSubject:      trigSubject(id, i),
		MaxPayloadBytes:    256,
		OperationTimeoutMS: 1000,
		RootBudgetMS:       1000,
		MaxDeliver:         3,
		AckWaitMS:          2000,
		NakDelayMS:         trigger.MinNakDelayMS,
	}
	if spec.binding != nil {
		spec.binding(k, i, &bc)
	}
	return bc
}

// trigPullBinding is bc as pull sees it.
func trigPullBinding(bc trigger.Binding) jspull.Binding {
	return jspull.Binding{
		Stream: bc.Stream, Consumer: bc.Consumer, FilterSubject: bc.FilterSubject,
		PayloadCeiling: bc.MaxPayloadBytes, AckWait: bc.AckWait(), MaxDeliver: bc.MaxDeliver,
	}
}

// trigSubject is the filter subject of binding i of a tenant.
func trigSubject(tenant string, i int) string { return fmt.Sprintf("%s.in.%d", tenant, i) }

// register adds the suite's function under a revision and name.
func (e *trigEnv) register(t *testing.T, revision, name string) {
	t.Helper()
	err := e.ref.Register(refhost.Function{
		Service: trigService, Revision: revision, Contract: trigContract, Name: name,
		Params:   []refhost.Type{refhost.String()},
		Failures: []string{trigDeclared},
		Func: func(ctx context.Context, c refhost.Call) error {
			arg, _ := c.Args[0].(string)
			call := trigCall{
				Binding: c.Binding.ID, Tenant: c.Binding.Tenant, Function: name, Revision: c.Revision,
				Gen: c.RouteGeneration, StreamSeq: c.StreamSeq, Delivered: c.Delivered, Arg: arg, At: time.Now(),
			}
			e.led.Activated(c.Binding.ID, c.StreamSeq, c.Delivered)
			e.mu.Lock()
			e.log = append(e.log, call)
			action := e.action
			e.mu.Unlock()
			select {
			case e.calls <- call:
			default: // a case that never reads calls; log keeps them all
			}
			switch arg {
			case argFail:
				return &refhost.ApplicationError{Code: trigDeclared}
			case argRetry:
				return errors.New("conformance: transient failure")
			case argBlock:
				e.started <- call
				select {
				case <-e.release:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			case argActions:
				if action != nil {
					return action(ctx, c)
				}
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// setAction sets the hook argActions calls run.
func (e *trigEnv) setAction(f func(ctx context.Context, c refhost.Call) error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.action = f
}

// callLog returns a copy of every call so far.
func (e *trigEnv) callLog() []trigCall {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]trigCall(nil), e.log...)
}

// tenant returns tenant k's environment.
func (e *trigEnv) tenant(k int) *trigTenantEnv { return e.tenants[k] }

// bindingIndex returns the index in the configuration of binding i of
// tenant k.
func (e *trigEnv) bindingIndex(k, i int) int {
	id := fmt.Sprintf("%s.b%d", e.tenants[k].id, i)
	for n, b := range e.cfg.Bindings {
		if b.ID == id {
			return n
		}
	}
	return -1
}

// publish stores arg's payload for binding i of tenant k and returns its
// stream sequence; the message is available to the consumer once this
// returns (the broker's PubAck).
func (e *trigEnv) publish(k, i int, arg string) uint64 {
	te := e.tenants[k]
	te.adm.t.Helper()
	seq := te.publishRaw(trigSubject(te.id, i), trigPayload(arg))
	e.led.Published(e.cfg.Bindings[e.bindingIndex(k, i)].ID, seq)
	return seq
}

func (te *trigTenantEnv) publishRaw(subject string, payload []byte) uint64 {
	te.adm.t.Helper()
	var ack struct {
		Seq uint64 `json:"seq"`
	}
	reply := te.adm.request(subject, payload)
	if len(reply) == 0 {
		// A status without a PubAck (no responders: a stream just
		// created on a cluster whose interest has not yet reached this
		// node; nothing was stored): asked again, polling within trigWait.
		trigEventually(te.adm.t, "a PubAck from "+subject, trigWait, func() bool {
			reply = te.adm.request(subject, payload)
			return len(reply) > 0
		})
	}
	if err := json.Unmarshal(reply, &ack); err != nil || ack.Seq == 0 {
		te.adm.t.Fatalf("publish to %s: %v", subject, err)
	}
	return ack.Seq
}

// redial replaces the administrator's connection, after a broker restart.
func (te *trigTenantEnv) redial(t *testing.T, b *broker.Broker) {
	t.Helper()
	creds, err := b.Admin(te.id)
	if err != nil {
		t.Fatal(err)
	}
	_ = te.adm.c.Close()
	te.adm.c = pullDial(t, b, creds)
}

// trigInfo is the administrator's view of a consumer.
type trigInfo struct {
	NumPending     int `json:"num_pending"`
	NumAckPending  int `json:"num_ack_pending"`
	NumRedelivered int `json:"num_redelivered"`
	NumWaiting     int `json:"num_waiting"`
	Delivered      struct {
		ConsumerSeq uint64 `json:"consumer_seq"`
		StreamSeq   uint64 `json:"stream_seq"`
	} `json:"delivered"`
	AckFloor struct {
		ConsumerSeq uint64 `json:"consumer_seq"`
		StreamSeq   uint64 `json:"stream_seq"`
	} `json:"ack_floor"`
}

// info returns consumer i of the tenant, one broker round trip.
func (te *trigTenantEnv) info(i int) trigInfo {
	te.adm.t.Helper()
	subject := fmt.Sprintf("$JS.API.CONSUMER.INFO.%s.%s-w%d", trigStream, te.id, i)
	var resp struct {
		trigInfo
		Error any `json:"error"`
	}
	if err := json.Unmarshal(te.adm.request(subject, nil), &resp); err != nil || resp.Error != nil {
		te.adm.t.Fatalf("consumer info %s: %v %v", subject, err, resp.Error)
	}
	return resp.trigInfo
}

// trigConn is the broker's view of one client connection (connz).
type trigConn struct {
	CID     uint64 `json:"cid"`
	Name    string `json:"name"`
	InMsgs  int64  `json:"in_msgs"`
	OutMsgs int64  `json:"out_msgs"`
	Subs    uint32 `json:"subscriptions"`
}

// trigSys is a system-account client, for the broker's own counts: this
// project's conn.Conn, whose parser reads the empty reply token of the
// system services' answers (TestSystemServiceReplyEmptyReplyToken).
type trigSys struct {
	t *testing.T
	c *conn.Conn
}

func newTrigSys(t *testing.T, b *broker.Broker) *trigSys {
	t.Helper()
	creds, err := b.System()
	if err != nil {
		t.Fatal(err)
	}
	cfg := connConfig(t, b, creds)
	cfg.Name = "conformance-sys"
	cfg.MaxPayload = conn.MaxPayloadLimit // a CONNZ of many connections
	return &trigSys{t: t, c: connDial(t, cfg)}
}

// request publishes body to subject and returns a copy of the reply.
func (s *trigSys) request(subject string, body []byte) []byte {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.t.Context(), pullTimeout)
	defer cancel()
	defer s.c.Detach() // before cancel: ending ctx runs nothing (conn.Conn.Detach)
	r, err := s.c.Request(ctx, subject, nil, body)
	if err != nil || r.Status != 0 {
		s.t.Fatalf("system request %s: status %d, %v", subject, r.Status, err)
	}
	return append([]byte(nil), r.Payload...)
}

// runtimeConns returns the open connections of an account that the
// trigger runtime made (named trigger.ClientName), as the broker counts
// them.
func (s *trigSys) runtimeConns(account string) []trigConn {
	s.t.Helper()
	body, err := json.Marshal(map[string]any{"acc": account, "limit": 1024})
	if err != nil {
		s.t.Fatal(err)
	}
	var resp struct {
		Data struct {
			Conns []trigConn `json:"connections"`
		} `json:"data"`
		Error any `json:"error"`
	}
	if err := json.Unmarshal(s.request("$SYS.REQ.SERVER.PING.CONNZ", body), &resp); err != nil || resp.Error != nil {
		s.t.Fatalf("connz: %v %v", err, resp.Error)
	}
	var out []trigConn
	for _, c := range resp.Data.Conns {
		if c.Name == trigger.ClientName {
			out = append(out, c)
		}
	}
	return out
}

// trigHookHost is the reference host with hooks a case may set: after a
// reservation, and around an activation. Hooks are set while the runtime
// does not run.
type trigHookHost struct {
	*refhost.Host
	// led is given every step's report (trigger.StepObserver), unless
	// observe is set.
	led *ledger.Ledger
	// observe, when set, is given every step's report in place of led: a
	// WebAssembly case orders the reports after its guests' (trigWasm).
	// Set before the runtime runs.
	observe func(trigger.StepReport)
	mu      sync.Mutex
	// afterReserve runs after a successful reservation, before the
	// runtime's network.
	afterReserve func(trigger.BindingRef)
	// beforeActivate runs before the reference host's activation.
	beforeActivate func(trigger.Activation)
}

func (h *trigHookHost) set(afterReserve func(trigger.BindingRef), beforeActivate func(trigger.Activation)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.afterReserve, h.beforeActivate = afterReserve, beforeActivate
}

func (h *trigHookHost) hooks() (func(trigger.BindingRef), func(trigger.Activation)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.afterReserve, h.beforeActivate
}

func (h *trigHookHost) ObserveStep(r trigger.StepReport) {
	if h.observe != nil {
		h.observe(r)
		return
	}
	h.led.ObserveStep(r)
}

func (h *trigHookHost) ReserveInbound(ctx context.Context, r trigger.InboundRequest) (trigger.Inbound, error) {
	in, err := h.Host.ReserveInbound(ctx, r)
	if err != nil {
		return in, err
	}
	after, before := h.hooks()
	if after != nil {
		after(r.Binding)
	}
	if before == nil {
		return in, nil
	}
	return &trigHookInbound{Inbound: in, before: before}, nil
}

type trigHookInbound struct {
	trigger.Inbound
	before func(trigger.Activation)
}

func (in *trigHookInbound) Activate(ctx context.Context, a trigger.Activation) trigger.Result {
	in.before(a)
	return in.Inbound.Activate(ctx, a)
}

// step makes one explicit step and fails the case on an owner error.
func (e *trigEnv) step(t *testing.T) trigger.StepReport {
	t.Helper()
	r, err := e.trig.Step(t.Context(), e.host)
	if err != nil {
		t.Fatalf("Step: %v", err)
	}
	return r
}

// stepUntil steps until done holds for a report, at most max steps. A
// visit skipped because its binding is backed off (a request its consumer
// left unanswered) is not counted: the driver waits the report's Wait, as
// Run does, until the backoff has passed, within trigWait.
func (e *trigEnv) stepUntil(t *testing.T, what string, max int, done func(trigger.StepReport) bool) trigger.StepReport {
	t.Helper()
	deadline := time.Now().Add(trigWait)
	for i := 0; i < max && time.Now().Before(deadline); i++ {
		r := e.step(t)
		if done(r) {
			return r
		}
		if r.Error == trigger.ClassBindingBackoff {
			i--
			time.Sleep(r.Wait)
		}
	}
	t.Fatalf("%s: not within %d steps", what, max)
	return trigger.StepReport{}
}

// trigRun is one Run of the owner loop on its own goroutine.
type trigRun struct {
	cancel context.CancelFunc
	done   chan error
	err    error
	ended  bool
}

// run starts the case's Run; stop (also registered as cleanup) ends it.
func (e *trigEnv) run(t *testing.T) *trigRun { return runOwner(t, e.trig, e.host) }

// runOwner starts trig.Run(host) on its own goroutine.
func runOwner(t *testing.T, trig *trigger.Triggers, host trigger.Host) *trigRun {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	return runOwnerCtx(t, trig, host, ctx, cancel)
}

// runOwnerCtx starts trig.Run(ctx, host) on its own goroutine; cancel
// ends ctx.
func runOwnerCtx(t *testing.T, trig *trigger.Triggers, host trigger.Host, ctx context.Context, cancel context.CancelFunc) *trigRun {
	t.Helper()
	r := &trigRun{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- trig.Run(ctx, host) }()
	t.Cleanup(func() { _ = r.stop() })
	return r
}

// wait waits for Run to return on its own (its context ended elsewhere).
func (r *trigRun) wait(t *testing.T) error {
	t.Helper()
	if r.ended {
		return r.err
	}
	timer := time.NewTimer(trigWait)
	defer timer.Stop()
	select {
	case r.err = <-r.done:
		r.ended = true
		return r.err
	case <-timer.C:
		t.Fatalf("Run did not return within %v", trigWait)
	}
	return nil
}

// stop cancels Run and returns its result once it returned.
func (r *trigRun) stop() error {
	if !r.ended {
		r.cancel()
		r.err = <-r.done
		r.ended = true
	}
	return r.err
}

// nextCall waits for the function's next call.
func (e *trigEnv) nextCall(t *testing.T) trigCall {
	t.Helper()
	timer := time.NewTimer(trigWait)
	defer timer.Stop()
	select {
	case c := <-e.calls:
		return c
	case <-timer.C:
		t.Fatalf("no activation within %v", trigWait)
	}
	return trigCall{}
}

// waitStarted waits for an argBlock call to start.
func (e *trigEnv) waitStarted(t *testing.T) trigCall {
	t.Helper()
	timer := time.NewTimer(trigWait)
	defer timer.Stop()
	select {
	case c := <-e.started:
		return c
	case <-timer.C:
		t.Fatalf("no blocking activation within %v", trigWait)
	}
	return trigCall{}
}

// trigEventually polls cond every trigPollTick until it holds or timeout
// passes: bounded polling of counters no event announces.
func trigEventually(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(trigPollTick)
	defer tick.Stop()
	for {
		if cond() {
			return
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("%s: not reached within %v", what, timeout)
			return
		}
	}
}

// trigGoroutines counts goroutines whose stack holds a frame of the
// trigger runtime or the reference host (the test's own callers of Run
// included).
func trigGoroutines() (total, runtimeOwned int) {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	for g := range strings.SplitSeq(string(buf[:n]), "\n\n") {
		if strings.Contains(g, "latent-nats/trigger.") || strings.Contains(g, "latent-nats/trigger/refhost.") {
			runtimeOwned++
		}
	}
	return runtime.NumGoroutine(), runtimeOwned
}

// trigAwaitGoroutines waits until the goroutine count is at most want:
// goroutines that returned leave the count shortly after.
func trigAwaitGoroutines(t *testing.T, what string, want int) {
	t.Helper()
	trigEventually(t, what, trigWait, func() bool { return runtime.NumGoroutine() <= want })
}

// trigProxyDialer dials every runtime connection through p. conn checks
// that the socket's peer is the approved address; the proxy forwards
// transparently, as a router would, so the socket reports the address the
// runtime dialled.
func trigProxyDialer(p *cutProxy) conn.Dialer {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		approved, err := net.ResolveTCPAddr(network, address) // a literal a.b.c.d:port
		if err != nil {
			return nil, err
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, network, p.addr().String())
		if err != nil {
			return nil, err
		}
		return &trigProxied{Conn: c, remote: approved}, nil
	}
}

// trigProxied is a socket to the proxy that names the broker as its peer.
type trigProxied struct {
	net.Conn
	remote net.Addr
}

func (c *trigProxied) RemoteAddr() net.Addr { return c.remote }

// SyscallConn passes the TCP socket through, so that conn's idle check
// peeks at it as it does at a direct socket.
func (c *trigProxied) SyscallConn() (syscall.RawConn, error) {
	return c.Conn.(*net.TCPConn).SyscallConn()
}
