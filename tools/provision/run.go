package provision

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/latent-systems/latent-nats/conn"
	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/trigger"
)

// Mode says whether Run may create what is missing.
type Mode uint8

const (
	// ModeCreate creates missing streams and consumers and asserts those
	// that exist.
	ModeCreate Mode = iota + 1
	// ModeAssert only asserts: nothing is created or changed, a missing
	// stream or consumer is reported.
	ModeAssert
)

// String returns "create" or "assert".
func (m Mode) String() string {
	switch m {
	case ModeCreate:
		return "create"
	case ModeAssert:
		return "assert"
	default:
		return "Mode(" + strconv.Itoa(int(m)) + ")"
	}
}

// Options configure Run.
type Options struct {
	// Mode is ModeCreate or ModeAssert.
	Mode Mode
	// Stream shapes the streams created.
	Stream StreamOptions
	// Capture chooses the capture streams of each tenant's account
	// (DeadLetterStream, CopyStream); they have Stream's replica count.
	Capture CaptureOptions
	// Timeout bounds each dial and each request: MinTimeout to MaxTimeout,
	// zero meaning DefaultTimeout.
	Timeout time.Duration
}

// DefaultOptions creates what is missing: work-queue streams without limits
// of their own, one replica, the dead-letter capture with its default
// limits (and the copy capture's default limits, for when Copies is set),
// DefaultTimeout.
func DefaultOptions() Options {
	return Options{
		Mode:   ModeCreate,
		Stream: StreamOptions{Retention: RetentionWorkQueue, MaxMsgs: NoLimit, MaxBytes: NoLimit, Replicas: DefaultReplicas},
		Capture: CaptureOptions{
			DeadLetters: true, DeadLetterMaxAge: DefaultDeadLetterMaxAge, DeadLetterMaxBytes: DefaultDeadLetterMaxBytes,
			CopyMaxAge: DefaultCopyMaxAge, CopyMaxBytes: DefaultCopyMaxBytes,
		},
		Timeout: DefaultTimeout,
	}
}

// validate checks o.
func (o Options) validate() error {
	if o.Mode != ModeCreate && o.Mode != ModeAssert {
		return fmt.Errorf("%w: mode", ErrInvalidOptions)
	}
	if o.Timeout != 0 && (o.Timeout < MinTimeout || o.Timeout > MaxTimeout) {
		return fmt.Errorf("%w: timeout out of range", ErrInvalidOptions)
	}
	if err := o.Capture.validate(); err != nil {
		return err
	}
	return o.Stream.validate()
}

// Run provisions every tenant of cfg with its credential (creds[i] belongs
// to cfg.Tenants[i], as trigger.MatchCredentials returns them; those
// credentials must be allowed to manage streams and consumers). For each
// tenant it dials the tenant's exact destination once, ensures the capture
// streams opts.Capture enables (DeadLetterStream, then CopyStream: created
// when missing, else checked for their subjects and replica count, never
// changed) and, for each stream its bindings name (in order of first
// appearance), ensures the stream and then each of those bindings'
// durable pull consumers:
//
//   - a missing stream is created (ModeCreate) capturing its bindings'
//     filter subjects (DesiredStream; with opts.Capture.Copies, also
//     RePublishOf the stream); an existing one must capture them, have
//     opts.Stream's replica count (and, with Copies, that republish
//     setting), and is never changed;
//   - a missing consumer is created with exactly the profile's
//     configuration (DesiredConsumer) and the replica count, and then
//     checked with jspull's profile check and for its replica count; an
//     existing one is checked the same way and never changed: every
//     difference is reported (ActionMismatch).
//
// No consumer is created on a stream that was not created or asserted.
// A tenant that cannot be reached gets one ActionFailed result and its
// resources ActionSkipped; other tenants go on. The error is only for
// invalid arguments, before any connection is opened. Run does not wipe the
// credentials.
func Run(ctx context.Context, cfg trigger.Config, creds []trigger.Credential, opts Options) (Report, error) {
	if err := opts.validate(); err != nil {
		return Report{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Report{}, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	if len(creds) != len(cfg.Tenants) {
		return Report{}, fmt.Errorf("%w: one credential per tenant, in tenant order", ErrInvalidOptions)
	}
	for i, t := range cfg.Tenants {
		if creds[i].Tenant != t.ID || creds[i].Destination != t.Destination {
			return Report{}, fmt.Errorf("%w: credential %d is not bound to tenant %d's destination", ErrInvalidOptions, i, i)
		}
	}
	var rep Report
	for i, t := range cfg.Tenants {
		rep.Results = append(rep.Results, provisionTenant(ctx, cfg, t, creds[i], opts)...)
	}
	return rep, nil
}

// capturesOf returns the capture streams opts enables, in the order Run
// ensures them.
func capturesOf(opts Options) []StreamConfig {
	var out []StreamConfig
	if opts.Capture.DeadLetters {
		out = append(out, DesiredDeadLetterStream(opts.Capture, opts.Stream.replicas()))
	}
	if opts.Capture.Copies {
		out = append(out, DesiredCopyStream(opts.Capture, opts.Stream.replicas()))
	}
	return out
}

// tenantStream is one stream of a tenant and its bindings.
type tenantStream struct {
	name     string
	ids      []string
	bindings []jspull.Binding
}

// streamsOf groups the tenant's bindings by stream, in order of first
// appearance.
func streamsOf(cfg trigger.Config, tenant string) []tenantStream {
	var out []tenantStream
	index := make(map[string]int)
	for _, b := range cfg.Bindings {
		if b.Tenant != tenant {
			continue
		}
		i, ok := index[b.Stream]
		if !ok {
			i = len(out)
			index[b.Stream] = i
			out = append(out, tenantStream{name: b.Stream})
		}
		out[i].ids = append(out[i].ids, b.ID)
		out[i].bindings = append(out[i].bindings, PullBinding(b))
	}
	return out
}

// provisionTenant provisions one tenant's streams and consumers.
func provisionTenant(ctx context.Context, cfg trigger.Config, t trigger.Tenant, cred trigger.Credential, opts Options) []Result {
	streams := streamsOf(cfg, t.ID)
	var out []Result
	capture := capturesOf(opts)
	skipAll := func(why error) []Result {
		out = append(out, Result{Tenant: t.ID, Resource: ResourceTenant, Action: ActionFailed, Err: why})
		for _, cs := range capture {
			out = append(out, Result{Tenant: t.ID, Resource: ResourceCapture, Stream: cs.Name, Action: ActionSkipped,
				Err: fmt.Errorf("%w: tenant not reached", ErrSkipped)})
		}
		for _, s := range streams {
			out = append(out, Result{Tenant: t.ID, Resource: ResourceStream, Stream: s.name, Action: ActionSkipped,
				Err: fmt.Errorf("%w: tenant not reached", ErrSkipped)})
			out = append(out, skippedConsumers(t.ID, s, "tenant not reached")...)
		}
		return out
	}
	c, err := dialTenant(ctx, t, cred, opts)
	if err != nil {
		return skipAll(err)
	}
	defer c.Close()

	for _, desired := range capture {
		out = append(out, c.ensureCapture(ctx, Result{Tenant: t.ID, Resource: ResourceCapture, Stream: desired.Name}, desired, opts.Mode))
	}
	for _, s := range streams {
		sr, st := c.ensureStream(ctx, Result{Tenant: t.ID, Resource: ResourceStream, Stream: s.name}, s.bindings, opts)
		out = append(out, sr)
		create := opts.Mode == ModeCreate && sr.Action.OK()
		if sr.Action == ActionFailed || sr.Action == ActionMissing {
			out = append(out, skippedConsumers(t.ID, s, "stream "+sr.Action.String())...)
			continue
		}
		for j, b := range s.bindings {
			res := Result{Tenant: t.ID, Resource: ResourceConsumer, Stream: s.name, Consumer: b.Consumer, Binding: s.ids[j]}
			out = append(out, c.ensureConsumer(ctx, res, b, create, opts.Stream.replicas(), st.replicas))
		}
	}
	return out
}

// dialTenant connects to the tenant's destination with its credential and
// the default inbox prefix (conn.DefaultInboxPrefix). In ModeAssert a
// connection refused for its inbox is dialled once more with the tenant's
// private inbox prefix, trigger.InboxPrefix(tenant), the only inbox the
// trigger runtime's own user may subscribe: -assert with the runtime's
// credentials gets past the handshake, while a management user's replies
// stay out of the runtime's inbox. A refused inbox is ErrInboxDenied,
// naming the last prefix tried.
func dialTenant(ctx context.Context, t trigger.Tenant, cred trigger.Credential, opts Options) (*Client, error) {
	ccfg, err := ConnConfig(t.Destination, cred.Secret)
	if err != nil {
		return nil, err
	}
	c, err := Dial(ctx, ccfg, opts.Timeout)
	if err != nil && inboxDenied(err) && opts.Mode == ModeAssert {
		ccfg.InboxPrefix = trigger.InboxPrefix(t.ID)
		c, err = Dial(ctx, ccfg, opts.Timeout)
	}
	if err != nil && inboxDenied(err) {
		prefix := ccfg.InboxPrefix
		if prefix == "" {
			prefix = conn.DefaultInboxPrefix
		}
		return nil, fmt.Errorf("%w %q %s: %w", ErrInboxDenied, prefix+".>", troubleshooting, err)
	}
	return c, err
}

// inboxDenied reports whether err is a permission violation at the
// connect step, where the only subscription is the inbox's.
func inboxDenied(err error) bool {
	var he *conn.HandshakeError
	return errors.As(err, &he) && he.Step == conn.StepConnect && isPermission(err)
}

// skippedConsumers returns ActionSkipped results for a stream's consumers.
func skippedConsumers(tenant string, s tenantStream, why string) []Result {
	out := make([]Result, 0, len(s.bindings))
	for j, b := range s.bindings {
		out = append(out, Result{Tenant: tenant, Resource: ResourceConsumer, Stream: s.name, Consumer: b.Consumer,
			Binding: s.ids[j], Action: ActionSkipped, Err: fmt.Errorf("%w: %s", ErrSkipped, why)})
	}
	return out
}
