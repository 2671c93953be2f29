package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/provision"
	"github.com/latent-systems/latent-nats/tools/validate"
	"github.com/latent-systems/latent-nats/trigger"
)

// The files -keep writes into the broker's directory (which Close
// removes).
const (
	configFile             = "trigger.json"
	runtimeCredentialsFile = "credentials-runtime.json"
	adminCredentialsFile   = "credentials-admin.json"
	permissionsFile        = "permissions.conf"
)

// access is how to reach a kept broker: its endpoint and the files the
// demo wrote for it.
type access struct {
	Addr       netip.AddrPort
	ServerName string
	CAFile     string
	Dir        string
	// Config is the canonical configuration; RuntimeCredentials and
	// AdminCredentials are credentials files in the format of
	// tools/validate, naming the runtime's and the administrators' .creds
	// files; Permissions is the runtime users' permissions as nats-server
	// configuration.
	Config             string
	RuntimeCredentials string
	AdminCredentials   string
	Permissions        string
	Tenants            []tenantFiles
}

// tenantFiles are one tenant's .creds files.
type tenantFiles struct {
	Tenant  string
	Admin   string
	Runtime string
	// InboxPrefix is the private inbox prefix the runtime user's
	// connection must use: its only subscribe permission.
	InboxPrefix string
}

// writeAccess writes the configuration, each tenant's .creds files, two
// credentials files and the permissions into the broker's directory.
func writeAccess(b *broker.Broker, cfg trigger.Config, users []tenantCreds) (access, error) {
	a := access{
		Addr: b.Addr(), ServerName: b.ServerName(), CAFile: b.CAFile(), Dir: b.Dir(),
		Config:             filepath.Join(b.Dir(), configFile),
		RuntimeCredentials: filepath.Join(b.Dir(), runtimeCredentialsFile),
		AdminCredentials:   filepath.Join(b.Dir(), adminCredentialsFile),
		Permissions:        filepath.Join(b.Dir(), permissionsFile),
	}
	raw, err := cfg.MarshalJSON()
	if err != nil {
		return a, err
	}
	if err := os.WriteFile(a.Config, raw, 0o644); err != nil {
		return a, err
	}
	var runtimeDoc, adminDoc validate.CredentialsFile
	perms := make([]provision.TenantPermissions, 0, len(users))
	for i, u := range users {
		t := cfg.Tenants[i]
		adminPath, err := b.WriteCreds(t.ID+"-admin.creds", u.Admin)
		if err != nil {
			return a, err
		}
		runtimePath, err := b.WriteCreds(t.ID+"-runtime.creds", u.Runtime)
		if err != nil {
			return a, err
		}
		a.Tenants = append(a.Tenants, tenantFiles{Tenant: t.ID, Admin: adminPath, Runtime: runtimePath, InboxPrefix: u.Permissions.InboxPrefix})
		entry := validate.CredentialsEntry{Tenant: t.ID, ProviderID: t.ProviderID, Destination: t.Destination, Kind: "creds"}
		entry.File = filepath.Base(runtimePath)
		runtimeDoc.Credentials = append(runtimeDoc.Credentials, entry)
		entry.File = filepath.Base(adminPath)
		adminDoc.Credentials = append(adminDoc.Credentials, entry)
		perms = append(perms, u.Permissions)
	}
	for path, doc := range map[string]validate.CredentialsFile{a.RuntimeCredentials: runtimeDoc, a.AdminCredentials: adminDoc} {
		js, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return a, err
		}
		if err := os.WriteFile(path, js, 0o644); err != nil {
			return a, err
		}
	}
	var pb bytes.Buffer
	if err := provision.WritePermissions(&pb, provision.FormatServer, perms); err != nil {
		return a, err
	}
	if err := os.WriteFile(a.Permissions, pb.Bytes(), 0o644); err != nil {
		return a, err
	}
	return a, nil
}

// describeAccess writes how to reach the kept broker.
func describeAccess(w io.Writer, a access) {
	fmt.Fprintf(w, "the broker keeps running (-keep); Ctrl-C stops it and removes %s\n", a.Dir)
	fmt.Fprintf(w, "  address      %s (TLS first: the ClientHello is the first byte; no plaintext)\n", a.Addr)
	fmt.Fprintf(w, "  server name  %s (send it as SNI; the certificate's only name)\n", a.ServerName)
	fmt.Fprintf(w, "  CA file      %s\n", a.CAFile)
	for _, t := range a.Tenants {
		fmt.Fprintf(w, "  %-12s admin creds %s\n", t.Tenant, t.Admin)
		fmt.Fprintf(w, "  %-12s runtime creds %s (permissions %s; subscribes only its private inbox %s.>)\n", "", t.Runtime, a.Permissions, t.InboxPrefix)
	}
	fmt.Fprintf(w, "  config       %s\n", a.Config)
	fmt.Fprintln(w, "try:")
	fmt.Fprintf(w, "  go run ./tools/validate/cmd/validate -config %s -credentials %s\n", a.Config, a.RuntimeCredentials)
	fmt.Fprintf(w, "  go run ./tools/provision/cmd/provision -assert -config %s -credentials %s\n", a.Config, a.AdminCredentials)
	fmt.Fprintf(w, "  openssl s_client -quiet -connect %s -servername %s -verify_hostname %s -CAfile %s\n", a.Addr, a.ServerName, a.ServerName, a.CAFile)
}

// keep writes the access files, describes them, calls ready (when not nil)
// and waits for ctx: the caller then closes the broker.
func keep(ctx context.Context, w io.Writer, b *broker.Broker, cfg trigger.Config, users []tenantCreds, ready func(access)) error {
	a, err := writeAccess(b, cfg, users)
	if err != nil {
		return err
	}
	describeAccess(w, a)
	if ready != nil {
		ready(a)
	}
	<-ctx.Done()
	return nil
}
