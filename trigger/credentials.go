package trigger

import (
	"fmt"
	"log/slog"
	"strconv"

	"github.com/latent-systems/latent-nats/credential"

	"github.com/latent-systems/latent-nats/internal/jsontree"
)

// Credential is one tenant's broker credential, bound to that tenant, its
// provider and its exact destination: MatchCredentials accepts it only when
// all three equal the configuration's. Credentials are never part of the
// configuration JSON; they come from separately protected storage.
//
// A Credential redacts itself: every fmt verb and slog show the tenant,
// provider and address but never the secret (nor a client certificate's
// key), and marshalling fails.
//
// The Secret may carry a TLS client certificate
// (credential.Secret.AddClientCertificate) presented beside the NATS
// credential, or be that certificate alone (credential.KindCertificate);
// the certificate is bound, checked and rotated with the secret it is
// part of, and its validity window is checked before each use as a JWT's
// expiry is.
type Credential struct {
	Tenant      string
	ProviderID  string
	Destination Destination
	Secret      *credential.Secret
}

// text is the redacted rendering of a Credential.
func (c Credential) text() string {
	kind := "none"
	if c.Secret != nil {
		kind = c.Secret.Kind().String()
		if c.Secret.HasClientCertificate() && c.Secret.Kind() != credential.KindCertificate {
			kind += "+certificate"
		}
	}
	return "trigger.Credential{Tenant:" + strconv.QuoteToASCII(c.Tenant) +
		" ProviderID:" + strconv.QuoteToASCII(c.ProviderID) +
		" Address:" + c.Destination.Address.String() +
		" ServerName:" + strconv.QuoteToASCII(c.Destination.ServerName) +
		" Secret:" + kind + "/[redacted]}"
}

// String returns a redacted description.
func (c Credential) String() string { return c.text() }

// GoString returns the same redacted description as String.
func (c Credential) GoString() string { return c.text() }

// Format writes the redacted description for every verb and flag.
func (c Credential) Format(f fmt.State, verb rune) {
	text := c.text()
	if verb == 'q' {
		text = strconv.Quote(text)
	}
	_, _ = f.Write([]byte(text))
}

// LogValue makes slog log the redacted description.
func (c Credential) LogValue() slog.Value { return slog.StringValue(c.text()) }

// MarshalJSON refuses: credentials are never encoded.
func (c Credential) MarshalJSON() ([]byte, error) { return nil, ErrNotMarshalable }

// MarshalText refuses: credentials are never encoded.
func (c Credential) MarshalText() ([]byte, error) { return nil, ErrNotMarshalable }

// MatchCredentials checks a credential set against a configuration and
// returns it in tenant order (result[i] belongs to cfg.Tenants[i]). The
// configuration must be valid (else its *ConfigError). Every tenant needs
// exactly one credential whose ProviderID and Destination equal the
// tenant's, with a secret that is present and not wiped; a credential for
// a tenant the configuration lacks is refused too. All mismatches are
// reported at once in a *CredentialsError; paths name the credential
// ("credentials[2].destination") or the tenant ("tenants[0]").
// Expiry is not checked here: it is checked before each use.
func MatchCredentials(cfg Config, creds []Credential) ([]Credential, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var vs violationList
	out := make([]Credential, len(cfg.Tenants))
	have := make([]bool, len(cfg.Tenants))
	for i, c := range creds {
		p := jsontree.Index("credentials", i)
		ti := cfg.TenantIndex(c.Tenant)
		if ti < 0 {
			vs.add(jsontree.Field(p, "tenant"), RuleCredentialUnknownTenant)
			continue
		}
		if have[ti] {
			vs.add(jsontree.Field(p, "tenant"), RuleCredentialDuplicate)
			continue
		}
		have[ti] = true
		if matchTenant(&vs, p, &cfg.Tenants[ti], c) {
			out[ti] = c
		}
	}
	for i, h := range have {
		if !h {
			vs.add(jsontree.Index("tenants", i), RuleCredentialMissing)
		}
	}
	if len(vs.list) > 0 || vs.truncated {
		return nil, &CredentialsError{Violations: vs.list, Truncated: vs.truncated}
	}
	return out, nil
}

// matchTenant adds to vs, under the path p of credential c, each way c
// does not belong to its configured tenant t: another provider, another
// destination, a wiped secret (t nil: no tenant is configured for it, and
// only its secret is checked). It reports whether c belongs.
// MatchCredentials and Rotate check a credential with it.
func matchTenant(vs *violationList, p string, t *Tenant, c Credential) bool {
	ok := t != nil
	if t != nil && c.ProviderID != t.ProviderID {
		vs.add(jsontree.Field(p, "provider_id"), RuleCredentialProvider)
		ok = false
	}
	if t != nil && c.Destination != t.Destination {
		vs.add(jsontree.Field(p, "destination"), RuleCredentialDestination)
		ok = false
	}
	if c.Secret.Wiped() {
		vs.add(jsontree.Field(p, "secret"), RuleCredentialSecret)
		ok = false
	}
	return ok
}
