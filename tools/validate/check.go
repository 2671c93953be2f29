package validate

import (
	"errors"
	"strings"
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
	l := loadCredentials(in.CredentialsPath, now())
	res.Violations = append(res.Violations, l.vs...)
	if !cfgOK || !l.listed {
		l.wipe()
		return res
	}
	res.Config, res.Canonical = cfg, canon
	matched, err := trigger.MatchCredentials(cfg, l.creds)
	if err != nil {
		res.Violations = append(res.Violations, matchViolations(err, l.broken)...)
	}
	if !res.OK() {
		l.wipe()
		return res
	}
	res.Credentials = matched
	return res
}

// checkConfig reads and parses the configuration, recording violations.
func checkConfig(in Input, res *Result) (trigger.Config, []byte, bool) {
	b, _, r, cause := readBounded(in.ConfigPath, trigger.MaxConfigBytes)
	if r == RuleTooLarge {
		res.Violations = append(res.Violations, configViolation(SourceConfig, trigger.Violation{Rule: trigger.RuleTooLarge}, trigger.RuleTooLarge.Detail()))
		return trigger.Config{}, nil, false
	}
	if r != 0 {
		res.Violations = append(res.Violations, fileViolation(SourceConfig, "", r, cause))
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

// matchViolations converts the violations of trigger.MatchCredentials.
// Paths naming a credential entry stay in the credentials file (a secret
// is reported at the entry's "file" key); "tenants[i]" is the
// configuration's path. Entries with violations of their own (broken) are
// not reported again.
func matchViolations(err error, broken []bool) []Violation {
	var ce *trigger.CredentialsError
	if !errors.As(err, &ce) {
		return []Violation{{Source: SourceCredentials, Rule: "invalid", Err: err}}
	}
	var out []Violation
	for _, v := range ce.Violations {
		src := SourceCredentials
		if strings.HasPrefix(v.Path, "tenants[") {
			src = SourceConfig
		} else if i, ok := entryIndex(v.Path); ok && i < len(broken) && broken[i] {
			continue
		}
		cv := configViolation(src, v, v.Rule.Detail())
		if rest, ok := strings.CutSuffix(cv.Path, ".secret"); ok {
			cv.Path = rest + "." + keyFile
		}
		out = append(out, cv)
	}
	return out
}

// entryIndex returns i of a path "credentials[i]..." .
func entryIndex(path string) (int, bool) {
	rest, ok := strings.CutPrefix(path, keyCredentials+"[")
	if !ok {
		return 0, false
	}
	n := 0
	for i := 0; i < len(rest) && i < 4; i++ {
		c := rest[i]
		if c == ']' {
			return n, i > 0
		}
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return 0, false
}
