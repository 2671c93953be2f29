package soak

import (
	"context"
	"fmt"
	"time"

	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/provision"
	"github.com/latent-systems/latent-nats/trigger"
)

// The binding settings of the run: the suite's profile with a short ack
// wait, so that a lost acknowledgement costs two seconds.
const (
	stream        = "SOAK"
	payloadMax    = 256
	opTimeoutMS   = 1000
	ackWaitMS     = 2000
	maxDeliver    = 3
	requestBudget = 5 * time.Second
	providerID    = "soak"
)

// config returns the configuration of opts' tenants and bindings on b.
func config(b *broker.Broker, opts Options) trigger.Config {
	dest := trigger.Destination{
		Address:        b.Addr(),
		ServerName:     b.ServerName(),
		RootCAsPEM:     string(b.CAPEM()),
		AllowNonPublic: true,
	}
	cfg := trigger.Config{
		Profile:             trigger.ProfileName,
		PollIntervalMS:      trigger.MinPollIntervalMS,
		MaxControlLineBytes: 4096,
		MaxHeaderBytes:      4096,
	}
	for _, id := range b.Tenants() {
		cfg.Tenants = append(cfg.Tenants, trigger.Tenant{ID: id, ProviderID: providerID, Destination: dest})
		for i := range opts.Bindings {
			cfg.Bindings = append(cfg.Bindings, trigger.Binding{
				ID:                 fmt.Sprintf("%s.b%d", id, i),
				Tenant:             id,
				Principal:          "svc:" + id,
				Service:            service,
				Contract:           contract,
				Function:           function,
				Stream:             stream,
				Consumer:           fmt.Sprintf("%s-w%d", id, i),
				FilterSubject:      fmt.Sprintf("%s.in.%d", id, i),
				MaxPayloadBytes:    payloadMax,
				OperationTimeoutMS: opTimeoutMS,
				RootBudgetMS:       opTimeoutMS,
				MaxDeliver:         maxDeliver,
				AckWaitMS:          ackWaitMS,
				NakDelayMS:         trigger.MinNakDelayMS,
			})
		}
	}
	return cfg
}

// credentials mints every tenant's administrator and the runtime's user
// with exactly the permissions provision derives; it returns them bound to
// their tenants. The caller wipes both.
func credentials(b *broker.Broker, cfg trigger.Config) (admins, runtime []trigger.Credential, err error) {
	perms, err := provision.DerivePermissions(cfg)
	if err != nil {
		return nil, nil, err
	}
	for i, t := range cfg.Tenants {
		ac, err := b.Admin(t.ID)
		if err != nil {
			return admins, runtime, err
		}
		as, err := secretOf(ac)
		if err != nil {
			return admins, runtime, err
		}
		admins = append(admins, trigger.Credential{Tenant: t.ID, ProviderID: t.ProviderID, Destination: t.Destination, Secret: as})
		spec := broker.UserSpec{Name: "trigger", PubAllow: perms[i].Permissions.Publish, SubAllow: perms[i].Permissions.Subscribe}
		rc, err := b.User(t.ID, spec)
		if err != nil {
			return admins, runtime, err
		}
		rs, err := secretOf(rc)
		if err != nil {
			return admins, runtime, err
		}
		runtime = append(runtime, trigger.Credential{Tenant: t.ID, ProviderID: t.ProviderID, Destination: t.Destination, Secret: rs})
	}
	return admins, runtime, nil
}

func secretOf(c broker.Creds) (*credential.Secret, error) {
	file, err := c.File()
	if err != nil {
		return nil, err
	}
	defer clear(file)
	return credential.ParseCreds(file)
}

func wipe(creds []trigger.Credential) {
	for _, c := range creds {
		if c.Secret != nil {
			c.Secret.Wipe()
		}
	}
}

// provisionAll creates the streams (file storage, work-queue retention)
// and the profile's consumers.
func provisionAll(ctx context.Context, cfg trigger.Config, admins []trigger.Credential) error {
	po := provision.DefaultOptions()
	po.Timeout = requestBudget
	rep, err := provision.Run(ctx, cfg, admins, po)
	if err != nil {
		return err
	}
	if !rep.OK() {
		return fmt.Errorf("provisioning refused: %d results", len(rep.Results))
	}
	return nil
}
