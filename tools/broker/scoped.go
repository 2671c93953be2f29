package broker

import (
	"fmt"
	"slices"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

const (
	// MaxSigningKeys is the most [Options.SigningKeys] of one broker.
	MaxSigningKeys = 64
	// MaxRoleLen is the longest [SigningKey.Role], in bytes.
	MaxRoleLen = 64
	// MaxScopeSubjects is the most subjects in one allow or deny list of a
	// [SigningKey]: the publish grants of the trigger profile's 256
	// bindings (four subjects each). The list lives in the account JWT,
	// which the broker is given in its configuration, not in the CONNECT
	// of a user, so it is not bound by the user's control line.
	MaxScopeSubjects = 1024
)

// SigningKey is a scoped signing key of a tenant's account: the account
// JWT lists the key with a user scope (jwt.UserScope) whose template holds
// the permissions, and every user [Broker.ScopedUser] signs with it gets
// exactly those permissions from the server, whatever its own JWT says. A
// scoped user's JWT carries no permissions (the server refuses one that
// does, jwt.UserScope.ValidateScopedSigner), so it stays the same small
// size however long the lists are. This is how the operator tool nsc
// shapes it (`nsc edit signing-key --role ... --allow-pub ...`).
//
// A nil allow list leaves that direction unrestricted; to forbid every
// publish or subscription, deny ">". Subjects are taken literally: the
// server expands template functions written in double braces ("{{name()}}")
// and refuses a user whose template does not expand.
type SigningKey struct {
	// Tenant is the account's tenant, one of [Options.Tenants].
	Tenant string
	// Role names the key within its tenant's account (the scope's role),
	// 1 to [MaxRoleLen] bytes, unique per tenant.
	Role     string
	PubAllow []string
	PubDeny  []string
	SubAllow []string
	SubDeny  []string
}

// validateSigningKeys checks keys against tenants.
func validateSigningKeys(keys []SigningKey, tenants []string) error {
	if len(keys) > MaxSigningKeys {
		return &OptionError{Field: "SigningKeys"}
	}
	type tenantRole struct{ tenant, role string }
	seen := make(map[tenantRole]bool, len(keys))
	for _, k := range keys {
		if !slices.Contains(tenants, k.Tenant) {
			return &OptionError{Field: "SigningKey.Tenant"}
		}
		tr := tenantRole{k.Tenant, k.Role}
		if k.Role == "" || len(k.Role) > MaxRoleLen || seen[tr] {
			return &OptionError{Field: "SigningKey.Role"}
		}
		seen[tr] = true
		for _, l := range [][]string{k.PubAllow, k.PubDeny, k.SubAllow, k.SubDeny} {
			if len(l) > MaxScopeSubjects || slices.Contains(l, "") {
				return &OptionError{Field: "SigningKey subjects"}
			}
		}
	}
	return nil
}

// scope returns the key's user scope for the signing key pub.
func (k SigningKey) scope(pub string) *jwt.UserScope {
	s := jwt.NewUserScope()
	s.Key = pub
	s.Role = k.Role
	s.Template.Pub.Allow = slices.Clone(k.PubAllow)
	s.Template.Pub.Deny = slices.Clone(k.PubDeny)
	s.Template.Sub.Allow = slices.Clone(k.SubAllow)
	s.Template.Sub.Deny = slices.Clone(k.SubDeny)
	return s
}

// scopedKey is a generated scoped signing key of an account.
type scopedKey struct {
	role string
	kp   nkeys.KeyPair
	pub  string
}

// addScopedKeys generates a key pair for each of keys that names the
// account's tenant and lists it in ac.
func (a *account) addScopedKeys(ac *jwt.AccountClaims, keys []SigningKey) error {
	for _, k := range keys {
		if k.Tenant != a.name {
			continue
		}
		kp, err := nkeys.CreateAccount()
		if err != nil {
			return fmt.Errorf("broker: signing key: %w", err)
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return fmt.Errorf("broker: signing key: %w", err)
		}
		ac.SigningKeys.AddScopedSigner(k.scope(pub))
		a.scoped = append(a.scoped, scopedKey{role: k.Role, kp: kp, pub: pub})
	}
	return nil
}

// mintScoped creates a user of acc signed by its scoped key of role. The
// user JWT names the key as its issuer and acc as its issuer account, and
// carries no permissions: spec may set Name and Expires only.
func mintScoped(acc *account, tenant, role string, spec UserSpec) (Creds, error) {
	if spec.PubAllow != nil || spec.PubDeny != nil || spec.SubAllow != nil || spec.SubDeny != nil {
		return Creds{}, &OptionError{Field: "UserSpec subjects of a scoped user"}
	}
	i := slices.IndexFunc(acc.scoped, func(k scopedKey) bool { return k.role == role })
	if i < 0 {
		return Creds{}, ErrUnknownRole
	}
	return mintWith(acc, acc.scoped[i].kp, acc.pub, tenant, spec)
}

// ScopedUser mints a user of a tenant's account signed by the account's
// scoped signing key of role ([Options.SigningKeys]): its JWT names the
// signing key as issuer and the account as issuer account, carries no
// permissions, and the server gives it the key's. spec may set Name and
// Expires only; a subject list is an [*OptionError]. An unknown tenant is
// [ErrUnknownTenant], an unknown role [ErrUnknownRole].
func (b *Broker) ScopedUser(tenant, role string, spec UserSpec) (Creds, error) {
	acc, err := b.identity.tenant(tenant)
	if err != nil {
		return Creds{}, err
	}
	return mintScoped(acc, tenant, role, spec)
}

// ScopedUser mints a scoped user as [Broker.ScopedUser] does; it connects
// to any node.
func (c *Cluster) ScopedUser(tenant, role string, spec UserSpec) (Creds, error) {
	acc, err := c.identity.tenant(tenant)
	if err != nil {
		return Creds{}, err
	}
	return mintScoped(acc, tenant, role, spec)
}
