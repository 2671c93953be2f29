// Package trigger owns the bounded trigger runtime of the
// nats-jetstream-pull-v1 profile: its configuration and every bound of it,
// the tenant credentials bound to that configuration, and (in later
// files) installation, the run loop, the host interface, outcome mapping
// and the monitor. It knows no wire detail and refuses any configuration
// outside the profile's bounds rather than adjusting it.
//
// Configuration:
//
//   - limits.go: the profile's bounds as named constants.
//   - config.go: Config, Tenant, Destination, Binding and their duration
//     accessors.
//   - config_validate.go: Validate, every rule with the JSON path of the
//     value that breaks it.
//   - config_json.go: the canonical encoding, MarshalJSON, ParseConfig,
//     CanonicalConfig.
//   - config_decode.go: the strict decoder behind ParseConfig.
//   - credentials.go: Credential and MatchCredentials.
//   - errors.go: sentinels, Rule, Violation, ConfigError, CredentialsError.
//
// A configuration is persisted only as the bytes MarshalJSON writes, and
// ParseConfig accepts only those bytes: a configuration that parses
// re-encodes to the same bytes. Every violation is reported at once, each
// with its JSON path, in one *ConfigError.
//
// Global and per-binding settings: the poll interval paces the owner's one
// timer and the control-line and header caps shape the connections a
// tenant's bindings share, so they are global. The payload ceiling,
// operation timeout, root budget, max_deliver, ack wait and NAK delay
// belong to one durable consumer or one activation, so they are per
// binding.
//
// Credentials never appear in the configuration JSON. Each tenant has one
// Credential bound to its ID, provider ID and exact Destination; it
// redacts itself everywhere and refuses to be marshalled.
package trigger
