// Package validate checks a trigger configuration and a credentials file
// before they are deployed, and reports every violation with its JSON path;
// it refuses to contact a broker, to repair anything, or to print a secret.
//
// Check is the testable core; Main is the validate command
// (cmd/validate):
//
//	validate -config FILE [-credentials FILE] [-any-spelling] [-write-canonical FILE]
//
// It prints one line per violation,
//
//	config: bindings[2].ack_wait_ms: ack_wait_too_short (trigger: config value out of range)
//	credentials: credentials[0].file: secret_expired (credential: jwt expired)
//	config: tenants[1]: credential_missing (trigger: tenant without credential)
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
// and the file that holds its secret, which stays where the operator keeps
// it. The format, strict like the configuration's (unknown, duplicate or
// missing keys and wrong types are violations):
//
//	{
//	  "credentials": [
//	    {
//	      "tenant": "acme",
//	      "provider_id": "nats-eu",
//	      "destination": {
//	        "address": "127.0.0.1:4222",
//	        "server_name": "broker.latent.test",
//	        "root_cas_pem": "-----BEGIN CERTIFICATE-----\n...",
//	        "allow_non_public": true
//	      },
//	      "kind": "creds",
//	      "file": "acme.creds"
//	    }
//	  ]
//	}
//
// Its keys:
//
//   - credentials: 1 to trigger.MaxTenants entries, one per tenant of the
//     configuration.
//   - tenant, provider_id, destination: must equal the configuration's
//     tenant, its provider_id and its destination exactly (the destination
//     object has the same keys as in the configuration, spki_sha256 and
//     allow_non_public included), as trigger.MatchCredentials requires: a
//     credential is bound to one broker endpoint.
//   - kind: "creds" (a decorated .creds file: user JWT and nkey seed),
//     "nkey" (a user nkey seed), "token" (a token) or "user_password" (the
//     file holds the password; "user" names the user, and only this kind
//     has that key).
//   - file: the secret file, relative to the credentials file's directory
//     unless absolute; a regular file of at most MaxSecretFileBytes with no
//     permission bit for group or others (mode 0600 or stricter). One
//     trailing newline of a token or password file is ignored.
//
// A creds file whose JWT has expired is a violation (secret_expired).
//
// # Rules
//
// Configuration violations carry the trigger package's rule names and
// sentinels (trigger.Rule); the credentials file's own rules are this
// package's Rule values. Violation.Err matches with errors.Is either way.
package validate
