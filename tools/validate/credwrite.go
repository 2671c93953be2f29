package validate

import "github.com/latent-systems/latent-nats/trigger"

// CredentialsFile is a credentials file as the tools write one for
// trigger.LoadCredentials (the format CREDENTIALS.md gives), marshalled
// with encoding/json: the demo's, the test harness's and the tests'.
type CredentialsFile struct {
	Credentials []CredentialsEntry `json:"credentials"`
}

// CredentialsEntry is one tenant's entry of a CredentialsFile: Kind and
// the fields each kind takes are trigger's (see trigger.LoadCredentials);
// the paths are relative to the file's directory.
type CredentialsEntry struct {
	Tenant      string              `json:"tenant"`
	ProviderID  string              `json:"provider_id"`
	Destination trigger.Destination `json:"destination"`
	Kind        string              `json:"kind"`
	File        string              `json:"file,omitempty"`
	User        string              `json:"user,omitempty"`
	ClientCert  string              `json:"client_cert,omitempty"`
	ClientKey   string              `json:"client_key,omitempty"`
}
