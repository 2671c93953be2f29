package main

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/internal/wire"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/provision"
	"github.com/latent-systems/latent-nats/trigger"
)

const (
	// requestTimeout bounds each administrative dial and request
	// (provisioning, publishing, inspecting).
	requestTimeout = 5 * time.Second

	// brokerMaxControlLine is nats-server's default max_control_line:
	// the longest CONNECT argument (the JSON after "CONNECT ") it reads
	// before it closes the connection, so a user JWT must leave room in it
	// for the other CONNECT fields. A runtime user's JWT grows with its
	// tenant's bindings (four publish subjects each), so a tenant with many
	// bindings needs a larger max_control_line or fewer bindings per user.
	brokerMaxControlLine = 4096
)

// tenantCreds holds one tenant's minted users for the length of the run:
// the administrator (provisioning, publishing, inspecting) and the
// runtime's user with exactly the derived permissions.
type tenantCreds struct {
	Tenant       string
	Admin        broker.Creds
	AdminSecret  *credential.Secret
	Runtime      broker.Creds
	Permissions  provision.TenantPermissions
	ConnectBytes int
}

// wipe zeroes every seed held.
func (tc *tenantCreds) wipe() {
	clear(tc.Admin.Seed)
	clear(tc.Runtime.Seed)
	if tc.AdminSecret != nil {
		tc.AdminSecret.Wipe()
	}
}

// minter mints users of the tenant accounts: a broker, or a cluster
// (whose users connect to any node).
type minter interface {
	Admin(tenant string) (broker.Creds, error)
	User(tenant string, spec broker.UserSpec) (broker.Creds, error)
}

// destination is the broker's exact TLS endpoint as the configuration
// names it.
func destination(b *broker.Broker) trigger.Destination {
	return trigger.Destination{
		Address:        b.Addr(),
		ServerName:     b.ServerName(),
		RootCAsPEM:     string(b.CAPEM()),
		AllowNonPublic: true,
	}
}

// secretOf parses a minted user's credentials.
func secretOf(c broker.Creds) (*credential.Secret, error) {
	file, err := c.File()
	if err != nil {
		return nil, err
	}
	defer clear(file)
	return credential.ParseCreds(file)
}

// mintUsers mints, for every tenant of cfg, its administrator and the
// runtime's user with exactly the permissions provision (pull) derives for
// the tenant's bindings and its private inbox prefix
// (trigger.InboxPrefix), and checks that the runtime user's CONNECT fits
// the broker's control line. The caller wipes what it returns, also on
// error.
func mintUsers(b minter, cfg trigger.Config) ([]tenantCreds, error) {
	perms, err := provision.DerivePermissions(cfg)
	if err != nil {
		return nil, err
	}
	out := make([]tenantCreds, 0, len(cfg.Tenants))
	for i, t := range cfg.Tenants {
		tc := tenantCreds{Tenant: t.ID, Permissions: perms[i]}
		if tc.Admin, err = b.Admin(t.ID); err != nil {
			return out, err
		}
		out = append(out, tc)
		cur := &out[len(out)-1]
		if cur.AdminSecret, err = secretOf(cur.Admin); err != nil {
			return out, err
		}
		spec := broker.UserSpec{Name: runtimeUser, PubAllow: perms[i].Permissions.Publish, SubAllow: perms[i].Permissions.Subscribe}
		if cur.Runtime, err = b.User(t.ID, spec); err != nil {
			return out, err
		}
		if cur.ConnectBytes, err = checkConnect(cur.Runtime.JWT); err != nil {
			return out, fmt.Errorf("%w (tenant %s)", err, t.ID)
		}
	}
	return out, nil
}

// connectArgLen returns the length of the CONNECT argument the trigger
// runtime sends with a user JWT: the same fields conn writes (TLS
// required, JWT, nonce signature, client name, language, protocol 1,
// headers and no-responders on).
func connectArgLen(jwt string) (int, error) {
	c := wire.Connect{
		TLSRequired: true, JWT: jwt, Sig: strings.Repeat("s", sigLen()),
		Name: trigger.ClientName, Lang: "go", Protocol: 1, Headers: true, NoResponders: true,
	}
	out, err := wire.AppendConnect(nil, &c)
	if err != nil {
		return 0, err
	}
	return len(out) - len("CONNECT ") - len("\r\n"), nil
}

// checkConnect returns the CONNECT argument length of a runtime user with
// jwt, or errConnectTooLong when it exceeds brokerMaxControlLine.
func checkConnect(jwt string) (int, error) {
	n, err := connectArgLen(jwt)
	if err != nil {
		return 0, err
	}
	if n > brokerMaxControlLine {
		return n, fmt.Errorf("%w: %d bytes, at most %d", errConnectTooLong, n, brokerMaxControlLine)
	}
	return n, nil
}

// runtimeCredentials returns the runtime's credentials in tenant order,
// each bound to its tenant, provider and destination. The caller wipes
// their secrets.
func runtimeCredentials(cfg trigger.Config, users []tenantCreds) ([]trigger.Credential, error) {
	out := make([]trigger.Credential, 0, len(users))
	for i, u := range users {
		s, err := secretOf(u.Runtime)
		if err != nil {
			wipeCredentials(out)
			return nil, err
		}
		t := cfg.Tenants[i]
		out = append(out, trigger.Credential{Tenant: t.ID, ProviderID: t.ProviderID, Destination: t.Destination, Secret: s})
	}
	return out, nil
}

// adminCredentials returns the administrators' credentials in tenant
// order, for provisioning. They share the users' secrets.
func adminCredentials(cfg trigger.Config, users []tenantCreds) []trigger.Credential {
	out := make([]trigger.Credential, 0, len(users))
	for i, u := range users {
		t := cfg.Tenants[i]
		out = append(out, trigger.Credential{Tenant: t.ID, ProviderID: t.ProviderID, Destination: t.Destination, Secret: u.AdminSecret})
	}
	return out
}

// wipeCredentials wipes every secret of creds.
func wipeCredentials(creds []trigger.Credential) {
	for _, c := range creds {
		if c.Secret != nil {
			c.Secret.Wipe()
		}
	}
}

// provisionAll creates the streams and consumers of cfg, each with
// replicas copies, with the administrators' credentials through the
// provisioning tool and writes its report, indented, to w.
func provisionAll(ctx context.Context, w io.Writer, cfg trigger.Config, admins []trigger.Credential, replicas int) error {
	opts := provision.DefaultOptions()
	opts.Timeout = requestTimeout
	opts.Stream.Replicas = replicas
	rep, err := provision.Run(ctx, cfg, admins, opts)
	if err != nil {
		return err
	}
	var b strings.Builder
	if _, err := rep.WriteTo(&b); err != nil {
		return err
	}
	writeIndented(w, b.String())
	if !rep.OK() {
		return errProvision
	}
	return nil
}

// writeIndented writes text with every line indented by two spaces.
func writeIndented(w io.Writer, text string) {
	for line := range strings.Lines(text) {
		io.WriteString(w, "  "+line)
	}
}

// published is one event stored by the broker: where, and what the demo
// meant it to exercise.
type published struct {
	Binding int
	Stream  string
	Seq     uint64
	Kind    eventKind
}

// seqKey identifies a stored event by binding and stream sequence.
type seqKey struct {
	Binding int
	Seq     uint64
}

// publishAll publishes events in order, each to its binding's filter
// subject as its tenant's administrator, and returns them with the
// broker's verified acknowledgements. It writes one line per event (never
// its payload).
func publishAll(ctx context.Context, w io.Writer, cfg trigger.Config, admins []trigger.Credential, events []event) ([]published, error) {
	clients := make([]*provision.Client, len(cfg.Tenants))
	defer func() {
		for _, c := range clients {
			if c != nil {
				c.Close()
			}
		}
	}()
	out := make([]published, 0, len(events))
	for _, e := range events {
		b := cfg.Bindings[e.Binding]
		ti := cfg.TenantIndex(b.Tenant)
		if clients[ti] == nil {
			cc, err := provision.ConnConfig(cfg.Tenants[ti].Destination, admins[ti].Secret)
			if err != nil {
				return out, err
			}
			if clients[ti], err = provision.Dial(ctx, cc, requestTimeout); err != nil {
				return out, fmt.Errorf("%w: tenant %s: %w", errPublish, b.Tenant, err)
			}
		}
		ack, err := clients[ti].Publish(ctx, b.FilterSubject, []byte(e.Payload))
		if err != nil {
			return out, fmt.Errorf("%w: %s: %w", errPublish, b.FilterSubject, err)
		}
		if ack.Stream != b.Stream || ack.Duplicate {
			return out, fmt.Errorf("%w: %s: stored in stream %s (duplicate %v), want %s", errPublish, b.FilterSubject, ack.Stream, ack.Duplicate, b.Stream)
		}
		out = append(out, published{Binding: e.Binding, Stream: ack.Stream, Seq: ack.Seq, Kind: e.Kind})
		fmt.Fprintf(w, "  %-16s %-16s %s seq %-3d %s\n", b.ID, b.FilterSubject, ack.Stream, ack.Seq, e.Kind)
	}
	return out, nil
}

// inspectConsumers asks the broker, as each tenant's administrator, what
// every binding's consumer still holds. A consumer whose info cannot be
// had stays unchecked, which verify reports.
func inspectConsumers(ctx context.Context, cfg trigger.Config, admins []trigger.Credential) []consumerState {
	out := make([]consumerState, len(cfg.Bindings))
	for i, b := range cfg.Bindings {
		out[i].Binding = b.ID
	}
	for ti := range cfg.Tenants {
		inspectTenant(ctx, cfg, ti, admins[ti].Secret, out)
	}
	return out
}

// inspectTenant fills the states of tenant ti's consumers, over one
// connection; it stops at the first failure to connect.
func inspectTenant(ctx context.Context, cfg trigger.Config, ti int, secret *credential.Secret, out []consumerState) {
	t := cfg.Tenants[ti]
	cc, err := provision.ConnConfig(t.Destination, secret)
	if err != nil {
		return
	}
	dctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	c, err := conn.Dial(dctx, cc)
	if err != nil {
		return
	}
	defer c.Close()
	for i, b := range cfg.Bindings {
		if b.Tenant != t.ID {
			continue
		}
		pc, err := jspull.NewConsumer(provision.PullBinding(b), jspull.Options{})
		if err != nil {
			continue
		}
		if p, err := pc.Inspect(dctx, c); err == nil {
			out[i] = consumerState{Binding: b.ID, Checked: true, Pending: p.NumPending, AckPending: p.NumAckPending}
		}
	}
}

// sigLen is the length of a CONNECT's nonce signature: an Ed25519
// signature in unpadded base64url.
func sigLen() int { return base64.RawURLEncoding.EncodedLen(ed25519.SignatureSize) }
