package validate

import (
	"errors"
	"time"

	"github.com/latent-systems/latent-nats/trigger"
)

// Input names what Check reads.
type Input struct {
	// ConfigPath is the trigger configuration JSON. Required.
	ConfigPath string
	// AnySpelling accepts the configuration in any JSON spelling (white
	// space, key order, escapes), as trigger.CanonicalConfig does. Without
	// it the file must hold exactly the canonical encoding that
	// trigger.ParseConfig accepts, byte for byte, as a deployment persists
	// it.
	AnySpelling bool
	// CredentialsPath, when set, is a credentials file (see the package
	// documentation) to load and match against the configuration.
	CredentialsPath string
	// Now is the clock credential expiry is checked against; nil means
	// time.Now.
	Now func() time.Time
}

// Result is what Check found.
type Result struct {
	// Config is the configuration, set when it has no violation.
	Config trigger.Config
	// Canonical is its canonical encoding, set with Config.
	Canonical []byte
	// Credentials are the loaded credentials in tenant order
	// (Credentials[i] belongs to Config.Tenants[i]), set only when there is
	// no violation at all. The caller owns their secrets: call Wipe.
	Credentials []trigger.Credential
	// Violations lists every violation: the configuration's in document
	// order, then the credentials file's, then those of matching credentials
	// to tenants.
	Violations []Violation
}

// OK reports whether no violation was found.
func (r *Result) OK() bool { return len(r.Violations) == 0 }

// Err returns nil when OK, else an *Error with the violations.
func (r *Result) Err() error {
	if r.OK() {
		return nil
	}
	return &Error{Violations: r.Violations}
}

// Wipe wipes the secrets of Credentials and drops them.
func (r *Result) Wipe() {
	for _, c := range r.Credentials {
		if c.Secret != nil {
			c.Secret.Wipe()
		}
	}
	r.Credentials = nil
}

// Check reads and validates the configuration and, when in names one, the
// credentials file and every secret file it names, and reports every
// violation with its JSON path. It reads files and nothing else: no network.
// Secrets are returned only when everything is valid; otherwise every
// secret loaded is wiped before Check returns.
func Check(in Input) Result {
	now := time.Now
	if in.Now != nil {
		now = in.Now
	}
	var res Result
	cfg, canon, cfgOK := checkConfig(in, &res)
	if in.CredentialsPath == "" {
		if cfgOK {
			res.Config, res.Canonical = cfg, canon
		}
		return res
	}
	creds := checkCredentials(in, cfg, cfgOK, now(), &res)
	if !cfgOK {
		return res
	}
	res.Config, res.Canonical = cfg, canon
	if !res.OK() {
		for _, c := range creds {
			c.Secret.Wipe()
		}
		return res
	}
	res.Credentials = creds
	return res
}

// checkConfig reads and parses the configuration, recording violations.
func checkConfig(in Input, res *Result) (trigger.Config, []byte, bool) {
	b, r, cause := readConfig(in.ConfigPath)
	if r != 0 {
		v := configViolation(SourceConfig, trigger.Violation{Rule: r}, r.Detail())
		v.Cause = cause
		res.Violations = append(res.Violations, v)
		return trigger.Config{}, nil, false
	}
	canon := b
	var err error
	if in.AnySpelling {
		canon, err = trigger.CanonicalConfig(b)
	}
	var cfg trigger.Config
	if err == nil {
		cfg, err = trigger.ParseConfig(canon)
	}
	if err != nil {
		res.Violations = append(res.Violations, triggerViolations(err, SourceConfig)...)
		return trigger.Config{}, nil, false
	}
	return cfg, canon, true
}

// triggerViolations converts a *trigger.ConfigError (or any other error,
// reported at the document) into violations of src.
func triggerViolations(err error, src Source) []Violation {
	var ce *trigger.ConfigError
	if !errors.As(err, &ce) {
		return []Violation{{Source: src, Rule: "invalid", Err: err}}
	}
	out := make([]Violation, 0, len(ce.Violations))
	for i, v := range ce.Violations {
		out = append(out, configViolation(src, v, ce.Detail(i)))
	}
	return out
}
