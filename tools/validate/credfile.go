package validate

import (
	"errors"
	"strings"
	"time"

	"github.com/latent-systems/latent-nats/internal/boundedfile"
	"github.com/latent-systems/latent-nats/trigger"
)

// The credentials file and its secret files are read and checked by
// trigger.LoadCredentials (trigger.CheckCredentialsFile without a valid
// configuration), the one implementation embedders call too; this file
// turns its *trigger.CredentialsError into violations of the two sources.

// checkCredentials reads the credentials file named by in and returns its
// credentials in tenant order when everything is valid, recording every
// violation in res. cfgOK says whether cfg is valid: without it, the file
// is checked alone.
func checkCredentials(in Input, cfg trigger.Config, cfgOK bool, now time.Time, res *Result) []trigger.Credential {
	if !cfgOK {
		res.Violations = append(res.Violations, credentialsViolations(trigger.CheckCredentialsFile(in.CredentialsPath, now))...)
		return nil
	}
	creds, err := trigger.LoadCredentials(in.CredentialsPath, cfg, now)
	res.Violations = append(res.Violations, credentialsViolations(err)...)
	return creds
}

// credentialsViolations converts the violations of
// trigger.LoadCredentials: paths naming a credential entry are in the
// credentials file, "tenants[i]" is the configuration's path.
func credentialsViolations(err error) []Violation {
	if err == nil {
		return nil
	}
	var ce *trigger.CredentialsError
	if !errors.As(err, &ce) {
		return []Violation{{Source: SourceCredentials, Rule: "invalid", Err: err}}
	}
	out := make([]Violation, 0, len(ce.Violations))
	for i, v := range ce.Violations {
		src := SourceCredentials
		if strings.HasPrefix(v.Path, "tenants[") {
			src = SourceConfig
		}
		cv := configViolation(src, v, ce.Detail(i))
		if i < len(ce.Causes) {
			cv.Cause = ce.Causes[i]
		}
		out = append(out, cv)
	}
	return out
}

// readConfig reads the configuration file, a regular file of at most
// trigger.MaxConfigBytes, as trigger reads the credentials file
// (internal/boundedfile). On failure it returns the rule broken
// (trigger.RuleUnreadable or trigger.RuleTooLarge) and the cause, and no
// bytes.
func readConfig(file string) ([]byte, trigger.Rule, error) {
	b, _, tooLarge, err := boundedfile.Read(file, trigger.MaxConfigBytes)
	switch {
	case err != nil:
		return nil, trigger.RuleUnreadable, err
	case tooLarge:
		return nil, trigger.RuleTooLarge, nil
	}
	return b, 0, nil
}
