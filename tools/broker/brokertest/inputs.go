package brokertest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/latent-systems/latent-nats/tools/broker"
	"github.com/latent-systems/latent-nats/tools/validate"
	"github.com/latent-systems/latent-nats/trigger"
)

// WriteInputs writes cfg, each tenant's administrator creds file and a
// credentials file naming them into dir, as an operator gives them to the
// tools (provision, deadletter); it returns the paths of the
// configuration and the credentials file. It fails the test on any error.
func WriteInputs(t testing.TB, b *broker.Broker, cfg trigger.Config, dir string) (cfgPath, credsPath string) {
	t.Helper()
	raw, err := cfg.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	cfgPath = filepath.Join(dir, "trigger.json")
	if err := os.WriteFile(cfgPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	var doc validate.CredentialsFile
	for _, tn := range cfg.Tenants {
		c, err := b.Admin(tn.ID)
		if err != nil {
			t.Fatal(err)
		}
		file, err := c.File()
		if err != nil {
			t.Fatal(err)
		}
		name := tn.ID + "-admin.creds"
		if err := os.WriteFile(filepath.Join(dir, name), file, 0o600); err != nil {
			t.Fatal(err)
		}
		doc.Credentials = append(doc.Credentials, validate.CredentialsEntry{Tenant: tn.ID, ProviderID: tn.ProviderID, Destination: tn.Destination, Kind: "creds", File: name})
	}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	credsPath = filepath.Join(dir, "credentials.json")
	if err := os.WriteFile(credsPath, js, 0o644); err != nil {
		t.Fatal(err)
	}
	return cfgPath, credsPath
}
