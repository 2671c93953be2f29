package provision

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/jwt/v2"
)

// ScopeRolePrefix starts the role of every tenant's scoped signing key
// (ScopeRole).
const ScopeRolePrefix = "latent-trigger-"

// ScopeRole returns the role of the scoped signing key that signs the
// trigger runtime's user of tenant: ScopeRolePrefix + tenant, so two
// tenants' users in one account never share a scope.
func ScopeRole(tenant string) string { return ScopeRolePrefix + tenant }

// Scope returns p's permissions as the user scope of a signing key of the
// tenant's account (github.com/nats-io/jwt/v2 UserScope): role
// ScopeRole(p.Tenant), the template's allow lists exactly p.Permissions,
// no deny lists, and the template's subscription, data and payload limits
// unlimited (-1), as jwt.NewUserScope and nsc make them. Key is left
// empty: it is the public key (A...) of the signing key the operator
// generates, which this package never sees.
//
// A user JWT signed by that key carries no permissions of its own (the
// server refuses one that does) and gets the template's, so its size does
// not grow with the bindings: the way to grant exact permissions to a
// tenant whose user JWT with the grants inside would not fit the broker's
// max_control_line.
func Scope(p TenantPermissions) *jwt.UserScope {
	s := jwt.NewUserScope()
	s.Role = ScopeRole(p.Tenant)
	s.Description = "latent-nats trigger runtime, tenant " + p.Tenant
	s.Template.Pub.Allow = jwt.StringList(slices.Clone(p.Permissions.Publish))
	s.Template.Sub.Allow = jwt.StringList(slices.Clone(p.Permissions.Subscribe))
	return s
}

// CheckScope reports whether p's grants can be written into a signing
// key's scope (Scope) as they are: an error wrapping ErrScopeSubject when
// a subject holds "{{", which the server would expand as a scope template
// function into another subject, or, with nsc, ','. The error names the
// tenant and the reason, not the subject.
func CheckScope(p TenantPermissions, nsc bool) error {
	for _, l := range [][]string{p.Permissions.Publish, p.Permissions.Subscribe} {
		for _, s := range l {
			switch {
			case strings.Contains(s, "{{"):
				return fmt.Errorf("%w: tenant %q: a subject holds \"{{\", which the server expands as a scope template", ErrScopeSubject, p.Tenant)
			case nsc && strings.Contains(s, ","):
				return fmt.Errorf("%w: tenant %q: a subject holds ',', on which nsc splits --allow-pub", ErrScopeSubject, p.Tenant)
			}
		}
	}
	return nil
}

// writeNSC writes, per tenant, the nsc commands that give the tenant's
// account a scoped signing key holding the tenant's permissions and add
// the runtime's user signed by it. ACCOUNT and SK are shell variables the
// operator sets: the tenant's account and a signing key of it.
// A tenant whose grants CheckScope refuses is an error, before anything
// is written.
func writeNSC(b *bytes.Buffer, ps []TenantPermissions) error {
	for _, p := range ps {
		if err := CheckScope(p, true); err != nil {
			return err
		}
	}
	b.WriteString("# The trigger runtime's user on each tenant's broker, signed by a scoped signing\n")
	b.WriteString("# key of the tenant's account: the key's scope holds the permissions and the\n")
	b.WriteString("# user JWT none, so its CONNECT stays small whatever the number of bindings.\n")
	b.WriteString("# Per tenant set ACCOUNT to its account and SK to a signing key of it\n")
	b.WriteString("# (nsc edit account --name \"$ACCOUNT\" --sk generate prints one).\n")
	for _, p := range ps {
		role := shellQuote(ScopeRole(p.Tenant))
		fmt.Fprintf(b, "# tenant %q, provider %q, %s, inbox prefix %q, bindings: %s\n",
			p.Tenant, p.ProviderID, p.Address, p.InboxPrefix, strings.Join(p.Bindings, ", "))
		fmt.Fprintf(b, "nsc edit signing-key --account \"$ACCOUNT\" --sk \"$SK\" --role %s", role)
		for _, s := range p.Permissions.Publish {
			fmt.Fprintf(b, " \\\n  --allow-pub %s", shellQuote(s))
		}
		for _, s := range p.Permissions.Subscribe {
			fmt.Fprintf(b, " \\\n  --allow-sub %s", shellQuote(s))
		}
		b.WriteByte('\n')
		fmt.Fprintf(b, "nsc add user --account \"$ACCOUNT\" --name %s -K %s\n", role, role)
	}
	return nil
}

// shellQuote returns s as one POSIX shell word in single quotes, so '$'
// and '*' stay literal.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
