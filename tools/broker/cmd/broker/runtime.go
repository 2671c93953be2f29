package main

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/provision"
	"github.com/latent-systems/latent-nats/tools/validate"
	"github.com/latent-systems/latent-nats/trigger"
)

// Names of the trigger runtime's users and their files.
const (
	// runtimeUserName is the name in each runtime user's JWT.
	runtimeUserName = "trigger-runtime"
	// runtimeCredsSuffix follows the tenant ID in a runtime .creds file's
	// name.
	runtimeCredsSuffix = "-runtime.creds"
)

// errNotThisBroker reports a tenant whose destination in the configuration
// is not the running broker: its runtime user is minted all the same (the
// grants do not depend on the destination), but the runtime would dial
// elsewhere.
var errNotThisBroker = errors.New("broker: the tenant's destination is not this broker")

// minter mints users of the tenant accounts: a broker, or a cluster (whose
// users connect to any node).
type minter interface {
	User(tenant string, spec broker.UserSpec) (broker.Creds, error)
}

// endpoint is what a tenant's destination must name to reach the running
// broker: one of its client addresses, its server name and its CA.
type endpoint struct {
	addrs      []netip.AddrPort
	serverName string
	roots      *x509.CertPool
}

// runtimeCreds writes the trigger runtime's credentials for one
// configuration file into a directory.
type runtimeCreds struct {
	config string
	out    string
}

// runtimeFile is one tenant's runtime .creds file, written or not.
type runtimeFile struct {
	tenant string
	path   string
	// mismatch is errNotThisBroker (with what differs) or nil.
	mismatch error
}

// write reads and validates the configuration (any JSON spelling, as
// provision reads it), derives each tenant's permissions with
// provision.DerivePermissions (exactly the grants provision prints: the
// tenant's consumer info, pull and acknowledgement subjects and its private
// inbox trigger.InboxPrefix(tenant) + ".>"), mints for each tenant a user of
// the tenant's account with exactly those grants and writes it to
// <out>/<tenant>-runtime.creds, mode 0600. Every user is minted before any
// file is written; a tenant that is not an account of the broker is an
// error matching broker.ErrUnknownTenant. A tenant whose destination is not
// ep gets its file and the mismatch.
func (rc runtimeCreds) write(m minter, ep endpoint) ([]runtimeFile, error) {
	res := validate.Check(validate.Input{ConfigPath: rc.config, AnySpelling: true})
	if err := res.Err(); err != nil {
		return nil, fmt.Errorf("broker: runtime credentials of %s: %w", rc.config, err)
	}
	perms, err := provision.DerivePermissions(res.Config)
	if err != nil {
		return nil, err
	}
	users := make([]broker.Creds, 0, len(perms))
	defer func() {
		for _, u := range users {
			clear(u.Seed)
		}
	}()
	for _, p := range perms {
		spec := broker.UserSpec{Name: runtimeUserName, PubAllow: p.Permissions.Publish, SubAllow: p.Permissions.Subscribe}
		u, err := m.User(p.Tenant, spec)
		if err != nil {
			return nil, fmt.Errorf("broker: runtime user of tenant %q: %w", p.Tenant, err)
		}
		users = append(users, u)
	}
	out := make([]runtimeFile, 0, len(users))
	for i, u := range users {
		t := res.Config.Tenants[i]
		path, err := writeCredsFile(rc.out, t.ID+runtimeCredsSuffix, u)
		if err != nil {
			return out, err
		}
		out = append(out, runtimeFile{tenant: t.ID, path: path, mismatch: ep.check(t.Destination)})
	}
	return out, nil
}

// check returns errNotThisBroker naming what of d differs from ep, or nil.
func (ep endpoint) check(d trigger.Destination) error {
	roots, err := d.CertPool()
	switch {
	case !slices.Contains(ep.addrs, d.Address):
		return fmt.Errorf("%w: address %s", errNotThisBroker, d.Address)
	case d.ServerName != ep.serverName:
		return fmt.Errorf("%w: server name %q, this broker's is %q", errNotThisBroker, d.ServerName, ep.serverName)
	case err != nil || !roots.Equal(ep.roots):
		return fmt.Errorf("%w: root_cas_pem is not this broker's CA", errNotThisBroker)
	default:
		return nil
	}
}

// writeCredsFile writes c in the .creds layout to dir/name with mode 0600
// (also when the file existed with another mode) and returns its path.
func writeCredsFile(dir, name string, c broker.Creds) (string, error) {
	b, err := c.File()
	if err != nil {
		return "", err
	}
	defer clear(b)
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return "", fmt.Errorf("broker: writing runtime creds: %w", err)
	}
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(b)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("broker: writing runtime creds: %w", err)
	}
	return path, nil
}

// report writes the runtime credentials and prints each file, or the
// error; it reports whether every file was written for this broker.
func (rc runtimeCreds) report(w io.Writer, m minter, ep endpoint) bool {
	files, err := rc.write(m, ep)
	ok := err == nil
	for _, f := range files {
		fmt.Fprintf(w, "  tenant %s: runtime creds %s (exactly provision's grants)\n", f.tenant, f.path)
		if f.mismatch != nil {
			fmt.Fprintf(w, "    warning: %v; point the configuration at this broker, then kill -HUP %d\n", f.mismatch, os.Getpid())
			ok = false
		}
	}
	if err != nil {
		fmt.Fprintf(w, "  runtime creds not written: %v\n", err)
	}
	return ok
}
