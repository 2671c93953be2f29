package trigger

import (
	"strings"

	"github.com/latent-systems/latent-nats/conn"
)

// InboxPrefix is the private reply-inbox prefix of a tenant's connection:
// "_INBOX.<tenant>", with each '.' of the tenant ID written as '~' so the
// ID stays one subject token. The mapping is one to one ('~' is never part
// of a tenant ID), so two tenants never share an inbox. A tenant's broker
// user needs subscribe permission on InboxPrefix(tenant) + ".>" and nothing
// wider: no other user granted only its own prefix can read the replies
// and deliveries of this tenant.
func InboxPrefix(tenant string) string {
	return conn.DefaultInboxPrefix + "." + strings.ReplaceAll(tenant, ".", "~")
}
