package trigger

import "slices"

// Part is one installation's share of a configuration divided by Split:
// a valid configuration holding some of the bindings, and the credentials
// of its tenants in its tenant order, ready for Install.
type Part struct {
	Config      Config
	Credentials []Credential
}

// Split divides cfg into n parts for n installations that share one Pools,
// each installed under its own logical ID and driven by its own Run: one
// installation makes one activation at a time across all its bindings, so
// n installations make up to n at once. It is the profile's way to run a
// configuration's bindings in parallel without changing the one loop of an
// installation.
//
// Part k holds the bindings of cfg from index k*len/n up to
// (k+1)*len/n (len = len(cfg.Bindings)): contiguous runs in configuration
// order whose sizes differ by at most one, so that a configuration listing
// each tenant's bindings together spreads as few tenants as it can over
// several parts. Each binding is in exactly one part, so no two
// installations pull the same consumer. A part keeps cfg's global settings
// and, in cfg's order, the tenants its bindings name and only those, with
// their credentials (the same *credential.Secret values, which are safe
// for concurrent use: the caller still owns and wipes them).
//
// What a part costs and what it changes is in the package documentation
// (Parallel work) and docs/OPERATIONS.md. Step reports, logs and the
// monitor of a part's installation index bindings in the part's
// configuration, not in cfg.
//
// Errors: the *ConfigError of cfg.Validate, the *CredentialsError of
// MatchCredentials, ErrInvalidSplit when n is below 1 or above the number
// of bindings.
func Split(cfg Config, creds []Credential, n int) ([]Part, error) {
	matched, err := MatchCredentials(cfg, creds)
	if err != nil {
		return nil, err
	}
	if n < 1 || n > len(cfg.Bindings) {
		return nil, ErrInvalidSplit
	}
	parts := make([]Part, n)
	for k := range parts {
		lo, hi := k*len(cfg.Bindings)/n, (k+1)*len(cfg.Bindings)/n
		p := &parts[k]
		p.Config = cfg
		p.Config.Tenants = nil
		p.Config.Bindings = slices.Clone(cfg.Bindings[lo:hi])
		for i, t := range cfg.Tenants {
			if slices.ContainsFunc(p.Config.Bindings, func(b Binding) bool { return b.Tenant == t.ID }) {
				p.Config.Tenants = append(p.Config.Tenants, t)
				p.Credentials = append(p.Credentials, matched[i])
			}
		}
	}
	return parts, nil
}
