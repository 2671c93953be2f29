// Package validate owns the check of a trigger configuration and a
// credentials file before they are deployed: it reports every violation
// with its JSON path; it refuses to contact a broker, to repair anything,
// or to print a secret.
//
// Check is the testable core; Main is the validate command
// (cmd/validate):
//
//	validate -config FILE [-credentials FILE] [-any-spelling] [-write-canonical FILE]
//
// It prints one line per violation,
//
//	config: poll_interval_ms: out_of_range: 5 is below the minimum 10 (ms)
//	credentials: credentials[0].file: secret_expired: names a user JWT whose expiry has passed; issue a new one (credential: jwt expired)
//	config: tenants[1]: credential_missing: has no credential; add one credential for this tenant
//
// and exits 0 when there is none, 1 when there is any, 2 for a usage error.
//
// # The configuration
//
// The configuration is checked by trigger.ParseConfig, with every rule and
// bound of the nats-jetstream-pull-v1 profile. By default the file must hold
// exactly the canonical encoding (what trigger.Config.MarshalJSON writes:
// compact, no trailing newline), because that is what a deployment persists
// and restores. -any-spelling accepts any JSON spelling of a valid
// configuration; -write-canonical FILE also writes its canonical encoding.
//
// # The credentials file
//
// Secrets never appear in the configuration, and not in the credentials
// file either: it binds each tenant to its provider, its exact destination
// and the file that holds its secret. It is read, with every secret file it
// names, by trigger.LoadCredentials (trigger.CheckCredentialsFile while the
// configuration is invalid), the loader embedders call too; its format and
// rules are there and in docs/CREDENTIALS.md.
//
// # Rules
//
// Every violation carries a trigger.Rule's name and the rule itself as its
// sentinel (Violation.Err, matched with errors.Is), and Violation.Cause
// the file-system error or package credential's sentinel behind it.
package validate
