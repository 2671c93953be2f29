package broker

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

const (
	// SystemAccountName is the name in the system account's JWT.
	SystemAccountName = "SYS"
	// MaxSubjects is the most subjects in one allow or deny list of a
	// [UserSpec].
	MaxSubjects = 256
	// MaxUserNameLen is the longest [UserSpec.Name], in bytes.
	MaxUserNameLen = 64
)

// UserSpec describes a user to mint. A nil allow list leaves that
// direction unrestricted (the server's rule); to forbid every publish or
// subscription, deny ">".
type UserSpec struct {
	// Name is the JWT's name; empty means "user".
	Name     string
	PubAllow []string
	PubDeny  []string
	SubAllow []string
	SubDeny  []string
	// Expires is when the JWT expires, at one-second resolution; zero
	// means never. A time already past mints an expired user (use at least
	// a second in the past).
	Expires time.Time
}

func (s UserSpec) validate() error {
	if len(s.Name) > MaxUserNameLen {
		return &OptionError{Field: "UserSpec.Name"}
	}
	for _, l := range [][]string{s.PubAllow, s.PubDeny, s.SubAllow, s.SubDeny} {
		if len(l) > MaxSubjects {
			return &OptionError{Field: "UserSpec subjects"}
		}
		for _, subj := range l {
			if subj == "" {
				return &OptionError{Field: "UserSpec subjects"}
			}
		}
	}
	if !s.Expires.IsZero() && s.Expires.Unix() <= 0 {
		return &OptionError{Field: "UserSpec.Expires"}
	}
	return nil
}

// Creds are one user's credentials: its JWT and nkey seed. They print
// redacted with every fmt verb.
type Creds struct {
	// Tenant is the tenant's name; empty for the system account and for an
	// account the server does not know.
	Tenant string
	// Account is the public key (A...) of the user's account.
	Account string
	// User is the user's public key (U...).
	User string
	// JWT is the user JWT, signed by the account.
	JWT string
	// Seed is the user's nkey seed (SU...). The caller may wipe it.
	Seed []byte
}

// File returns the credentials in the .creds layout of
// jwt.FormatUserConfig.
func (c Creds) File() ([]byte, error) {
	b, err := jwt.FormatUserConfig(c.JWT, c.Seed)
	if err != nil {
		return nil, fmt.Errorf("broker: formatting creds: %w", err)
	}
	return b, nil
}

// String returns the tenant and public keys, never the JWT or the seed.
func (c Creds) String() string {
	return fmt.Sprintf("broker.Creds{Tenant:%q Account:%s User:%s JWT:[redacted] Seed:[redacted]}", c.Tenant, c.Account, c.User)
}

// GoString is String.
func (c Creds) GoString() string { return c.String() }

// Format writes String for every verb.
func (c Creds) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(c.String())) }

// account is a generated account: its key pair, its JWT and the scoped
// signing keys the JWT lists.
type account struct {
	name   string
	kp     nkeys.KeyPair
	pub    string
	jwt    string
	scoped []scopedKey
}

// identity is a generated operator with its system and tenant accounts.
type identity struct {
	operatorJWT string
	// operator signs the account JWTs, again when a user is revoked
	// (revoke.go); it lives as long as the broker's accounts.
	operator nkeys.KeyPair
	system   *account
	tenants  []*account // in Options.Tenants order
	// mu guards every account's jwt, which a revocation replaces.
	mu sync.Mutex
}

// newIdentity generates an operator, its system account and one account per
// tenant, each listing the scoped signing keys of keys that name it.
func newIdentity(tenants []string, limits AccountLimits, keys ...SigningKey) (*identity, error) {
	opKP, err := nkeys.CreateOperator()
	if err != nil {
		return nil, fmt.Errorf("broker: operator key: %w", err)
	}
	kept := false
	defer func() {
		if !kept {
			opKP.Wipe()
		}
	}()
	opPub, err := opKP.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("broker: operator key: %w", err)
	}
	sys, err := newAccount(opKP, SystemAccountName, nil)
	if err != nil {
		return nil, err
	}
	oc := jwt.NewOperatorClaims(opPub)
	oc.Name = "latent-test-operator"
	oc.SystemAccount = sys.pub
	opJWT, err := oc.Encode(opKP)
	if err != nil {
		return nil, fmt.Errorf("broker: operator jwt: %w", err)
	}
	id := &identity{operatorJWT: opJWT, operator: opKP, system: sys}
	for _, name := range tenants {
		acc, err := newAccount(opKP, name, &limits, keys...)
		if err != nil {
			return nil, err
		}
		id.tenants = append(id.tenants, acc)
	}
	kept = true
	return id, nil
}

// newAccount generates an account signed by the operator; limits nil
// leaves JetStream disabled. The account lists a scoped signing key for
// each of keys whose tenant is name.
func newAccount(opKP nkeys.KeyPair, name string, limits *AccountLimits, keys ...SigningKey) (*account, error) {
	kp, err := nkeys.CreateAccount()
	if err != nil {
		return nil, fmt.Errorf("broker: account key: %w", err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("broker: account key: %w", err)
	}
	ac := jwt.NewAccountClaims(pub)
	ac.Name = name
	if limits != nil {
		ac.Limits.JetStreamLimits = jwt.JetStreamLimits{
			MemoryStorage: limits.MemoryStorage,
			DiskStorage:   limits.DiskStorage,
			Streams:       limits.Streams,
			Consumer:      limits.Consumers,
		}
	}
	acc := &account{name: name, kp: kp, pub: pub}
	if err := acc.addScopedKeys(ac, keys); err != nil {
		return nil, err
	}
	if opKP != nil {
		if acc.jwt, err = ac.Encode(opKP); err != nil {
			return nil, fmt.Errorf("broker: account jwt: %w", err)
		}
	}
	return acc, nil
}

func (id *identity) tenant(name string) (*account, error) {
	i := slices.IndexFunc(id.tenants, func(a *account) bool { return a.name == name })
	if i < 0 {
		return nil, ErrUnknownTenant
	}
	return id.tenants[i], nil
}

// Tenants returns the tenant names in the order given at the start.
func (id *identity) Tenants() []string {
	names := make([]string, len(id.tenants))
	for i, a := range id.tenants {
		names[i] = a.name
	}
	return names
}

// AccountKey returns the public key of a tenant's account.
func (id *identity) AccountKey(tenant string) (string, error) {
	acc, err := id.tenant(tenant)
	if err != nil {
		return "", err
	}
	return acc.pub, nil
}

// SystemAccountKey returns the public key of the system account.
func (id *identity) SystemAccountKey() string { return id.system.pub }

// User mints a user of a tenant's account with the given permissions. It
// connects to any node of a cluster.
func (id *identity) User(tenant string, spec UserSpec) (Creds, error) {
	acc, err := id.tenant(tenant)
	if err != nil {
		return Creds{}, err
	}
	return mint(acc, tenant, spec)
}

// Admin mints a user of a tenant's account with full permissions, for
// provisioning streams and consumers and for the leader helpers.
func (id *identity) Admin(tenant string) (Creds, error) {
	return id.User(tenant, UserSpec{Name: "admin"})
}

// System mints a user of the system account with full permissions.
func (id *identity) System() (Creds, error) {
	return mint(id.system, "", UserSpec{Name: "system"})
}

// mint creates a user of acc signed by the account's own key. tenant is
// recorded in the Creds.
func mint(acc *account, tenant string, spec UserSpec) (Creds, error) {
	return mintWith(acc, acc.kp, "", tenant, spec)
}

// mintWith creates a user of acc signed by signer: the account's own key
// (issuerAccount empty), or one of its signing keys (issuerAccount is
// acc's public key, which the JWT then names as its issuer account).
func mintWith(acc *account, signer nkeys.KeyPair, issuerAccount, tenant string, spec UserSpec) (Creds, error) {
	if err := spec.validate(); err != nil {
		return Creds{}, err
	}
	ukp, err := nkeys.CreateUser()
	if err != nil {
		return Creds{}, fmt.Errorf("broker: user key: %w", err)
	}
	defer ukp.Wipe()
	upub, err := ukp.PublicKey()
	if err != nil {
		return Creds{}, fmt.Errorf("broker: user key: %w", err)
	}
	uc := jwt.NewUserClaims(upub)
	uc.Name = spec.Name
	if uc.Name == "" {
		uc.Name = "user"
	}
	uc.Permissions.Pub.Allow = slices.Clone(spec.PubAllow)
	uc.Permissions.Pub.Deny = slices.Clone(spec.PubDeny)
	uc.Permissions.Sub.Allow = slices.Clone(spec.SubAllow)
	uc.Permissions.Sub.Deny = slices.Clone(spec.SubDeny)
	if !spec.Expires.IsZero() {
		uc.Expires = spec.Expires.Unix()
	}
	if issuerAccount != "" {
		// A scoped user's limits and permissions are the scope's: the
		// server refuses a JWT with any of its own, the "unlimited"
		// defaults of NewUserClaims included
		// (jwt.UserScope.ValidateScopedSigner).
		uc.IssuerAccount = issuerAccount
		uc.UserPermissionLimits = jwt.UserPermissionLimits{}
	}
	tok, err := uc.Encode(signer)
	if err != nil {
		return Creds{}, fmt.Errorf("broker: user jwt: %w", err)
	}
	seed, err := ukp.Seed()
	if err != nil {
		return Creds{}, fmt.Errorf("broker: user seed: %w", err)
	}
	return Creds{
		Tenant:  tenant,
		Account: acc.pub,
		User:    upub,
		JWT:     tok,
		Seed:    slices.Clone(seed),
	}, nil
}

// writeCreds writes c in the .creds layout to dir/name with mode 0600.
func writeCreds(dir, name string, c Creds) (string, error) {
	if name == "" || filepath.Base(name) != name || name == "." || name == ".." {
		return "", &OptionError{Field: "creds file name"}
	}
	b, err := c.File()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return "", fmt.Errorf("broker: writing creds: %w", err)
	}
	return path, nil
}
