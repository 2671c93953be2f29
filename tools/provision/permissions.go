package provision

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/nats-io/jwt/v2"

	"github.com/latent-systems/latent-nats/internal/jspull"
	"github.com/latent-systems/latent-nats/trigger"
)

// TenantPermissions are the permissions the trigger runtime's user needs on
// one tenant's broker: exactly what jspull.DerivePermissions returns for the
// tenant's bindings and the tenant's private inbox prefix.
type TenantPermissions struct {
	Tenant     string
	ProviderID string
	// Address is the tenant's destination, "a.b.c.d:port".
	Address string
	// InboxPrefix is the private inbox prefix of the runtime's connection
	// for this tenant, trigger.InboxPrefix(Tenant); the only subscribe
	// permission is InboxPrefix + ".>".
	InboxPrefix string
	// Bindings are the IDs of the tenant's bindings, in configuration
	// order.
	Bindings    []string
	Permissions jspull.Permissions
}

// DerivePermissions returns the permissions of every tenant of cfg, in
// tenant order. Each tenant's subscribe permission is its own private inbox,
// trigger.InboxPrefix(tenant) + ".>" ("_INBOX.<tenant>.>", each '.' of the
// tenant ID written '~'), the prefix the trigger runtime's connection for
// that tenant uses; no tenant's user may read another tenant's replies or
// deliveries, nor those of other users of the account.
func DerivePermissions(cfg trigger.Config) ([]TenantPermissions, error) {
	out := make([]TenantPermissions, 0, len(cfg.Tenants))
	for _, t := range cfg.Tenants {
		tp := TenantPermissions{
			Tenant: t.ID, ProviderID: t.ProviderID, Address: t.Destination.Address.String(),
			InboxPrefix: trigger.InboxPrefix(t.ID),
		}
		var bs []jspull.Binding
		for _, b := range cfg.Bindings {
			if b.Tenant == t.ID {
				tp.Bindings = append(tp.Bindings, b.ID)
				bs = append(bs, PullBinding(b))
			}
		}
		p, err := jspull.DerivePermissions(tp.InboxPrefix, bs...)
		if err != nil {
			return nil, fmt.Errorf("provision: permissions of tenant %q: %w", t.ID, err)
		}
		tp.Permissions = p
		out = append(out, tp)
	}
	return out, nil
}

// Format selects how WritePermissions writes.
type Format uint8

const (
	// FormatServer is nats-server configuration: per tenant a comment
	// naming it and a `permissions: {...}` line (ServerConfigJSON) to
	// put in that tenant's user entry.
	FormatServer Format = iota + 1
	// FormatJSON is one JSON document (AccountDocument) for account
	// tooling: per tenant the permissions in the form of a user JWT's
	// claims ("pub"/"sub" allow lists), as github.com/nats-io/jwt/v2
	// encodes them, and beside them the same permissions as the user
	// scope of a signing key of the tenant's account (Scope).
	FormatJSON
	// FormatNSC is a shell script of nsc commands (operator mode): per
	// tenant, `nsc edit signing-key` giving a signing key of the tenant's
	// account the role ScopeRole(tenant) with the permissions as its
	// scope, and `nsc add user` signing the runtime's user with that role,
	// its JWT free of permissions (Scope says why).
	FormatNSC
)

// String returns "server", "json" or "nsc".
func (f Format) String() string {
	switch f {
	case FormatServer:
		return "server"
	case FormatJSON:
		return "json"
	case FormatNSC:
		return "nsc"
	default:
		return "Format(" + strconv.Itoa(int(f)) + ")"
	}
}

// ParseFormat returns the Format named s.
func ParseFormat(s string) (Format, error) {
	for _, f := range []Format{FormatServer, FormatJSON, FormatNSC} {
		if f.String() == s {
			return f, nil
		}
	}
	return 0, fmt.Errorf("%w: permissions format must be server, json or nsc", ErrInvalidOptions)
}

// AccountDocument is what FormatJSON writes.
type AccountDocument struct {
	Tenants []AccountUser `json:"tenants"`
}

// AccountUser is the runtime's user on one tenant's broker.
type AccountUser struct {
	Tenant     string `json:"tenant"`
	ProviderID string `json:"provider_id"`
	Address    string `json:"address"`
	// InboxPrefix is the private inbox prefix the runtime's connection
	// for the tenant uses (TenantPermissions.InboxPrefix).
	InboxPrefix string   `json:"inbox_prefix"`
	Bindings    []string `json:"bindings"`
	// Permissions are the user JWT's permissions claims.
	Permissions jwt.Permissions `json:"permissions"`
	// Scope holds the same permissions as the user scope of a signing key
	// of the tenant's account (Scope; its "key" is empty), for a user JWT
	// that carries none. It is absent when CheckScope refuses the grants,
	// and ScopeRefused says why.
	Scope        *jwt.UserScope `json:"scope,omitempty"`
	ScopeRefused string         `json:"scope_refused,omitempty"`
}

// WritePermissions writes ps in format f.
func WritePermissions(w io.Writer, f Format, ps []TenantPermissions) error {
	var b bytes.Buffer
	switch f {
	case FormatServer:
		fmt.Fprintf(&b, "# Permissions of the trigger runtime's user on each tenant's broker\n")
		fmt.Fprintf(&b, "# (each tenant's private inbox prefix); place each line in that user's entry.\n")
		for _, p := range ps {
			conf, err := ServerConfigJSON(p.Permissions)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "# tenant %q, provider %q, %s, inbox prefix %q, bindings: %s\n",
				p.Tenant, p.ProviderID, p.Address, p.InboxPrefix, strings.Join(p.Bindings, ", "))
			fmt.Fprintf(&b, "permissions: %s\n", conf)
		}
	case FormatJSON:
		doc := AccountDocument{Tenants: make([]AccountUser, 0, len(ps))}
		for _, p := range ps {
			u := AccountUser{
				Tenant: p.Tenant, ProviderID: p.ProviderID, Address: p.Address,
				InboxPrefix: p.InboxPrefix, Bindings: p.Bindings,
				Permissions: jwt.Permissions{
					Pub: jwt.Permission{Allow: jwt.StringList(p.Permissions.Publish)},
					Sub: jwt.Permission{Allow: jwt.StringList(p.Permissions.Subscribe)},
				},
			}
			if err := CheckScope(p, false); err != nil {
				u.ScopeRefused = err.Error()
			} else {
				u.Scope = Scope(p)
			}
			doc.Tenants = append(doc.Tenants, u)
		}
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // subjects end in '>'
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return fmt.Errorf("provision: encoding permissions: %w", err)
		}
	case FormatNSC:
		if err := writeNSC(&b, ps); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: permissions format", ErrInvalidOptions)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// ServerConfigJSON returns p as the JSON of a nats-server user's
// "permissions" block:
//
//	{"publish":{"allow":[...]},"subscribe":{"allow":[...]}}
//
// The server's configuration format accepts JSON, so the bytes can be placed
// after `permissions:` in a user entry. Its lexer knows only the escapes
// \" \\ \t \n \r \xXX, so strings are written with '"' and '\' escaped and
// everything else literal (no \u escapes, no HTML escaping); a subject with
// a control byte cannot be written and is an error wrapping
// jspull.ErrInvalidSubject.
func ServerConfigJSON(p jspull.Permissions) ([]byte, error) {
	out := make([]byte, 0, 64+32*(len(p.Publish)+len(p.Subscribe)))
	out = append(out, `{"publish":{"allow":`...)
	out, err := appendConfigList(out, p.Publish)
	if err != nil {
		return nil, err
	}
	out = append(out, `},"subscribe":{"allow":`...)
	if out, err = appendConfigList(out, p.Subscribe); err != nil {
		return nil, err
	}
	return append(out, "}}"...), nil
}

func appendConfigList(dst []byte, list []string) ([]byte, error) {
	dst = append(dst, '[')
	for i, s := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		for j := 0; j < len(s); j++ {
			switch c := s[j]; {
			case c < 0x20 || c == 0x7f:
				return nil, fmt.Errorf("%w: control byte in a permission subject", jspull.ErrInvalidSubject)
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			default:
				dst = append(dst, c)
			}
		}
		dst = append(dst, '"')
	}
	return append(dst, ']'), nil
}
