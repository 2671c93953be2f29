package trigger

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"net/netip"
	"slices"
	"time"
)

// Config is one owner's trigger configuration: the tenants whose brokers it
// pulls from and the bindings that route each consumer's messages to a
// function. It holds no secret; credentials are supplied separately (see
// Credential). Build one in Go and check it with Validate, or decode the
// canonical JSON with ParseConfig; MarshalJSON writes that JSON.
//
// Settings that pace the owner or shape its connections are global: the
// poll interval (one timer for the owner) and the control-line and header
// caps (a tenant's connection is shared by its bindings). Settings tied to
// one durable consumer or one activation are per binding: payload ceiling
// (the consumer's max_bytes derives from it), operation timeout, root
// budget, max_deliver and ack wait (both must match the consumer) and NAK
// delay.
type Config struct {
	// Profile names the profile; it must be ProfileName.
	Profile string `json:"profile"`
	// PollIntervalMS paces empty visits, from MinPollIntervalMS.
	PollIntervalMS int `json:"poll_interval_ms"`
	// MaxControlLineBytes caps each protocol line read from a broker, CRLF
	// counted.
	MaxControlLineBytes int `json:"max_control_line_bytes"`
	// MaxHeaderBytes caps each message's header block.
	MaxHeaderBytes int `json:"max_header_bytes"`
	// Tenants are the tenant clients, 1-MaxTenants, unique IDs,
	// each used by at least one binding.
	Tenants []Tenant `json:"tenants"`
	// Bindings are 1-MaxBindings, unique IDs and unique
	// stream/consumer pairs.
	Bindings []Binding `json:"bindings"`
}

// Tenant is one tenant client: the broker identity its bindings share.
type Tenant struct {
	// ID names the tenant; bindings refer to it.
	ID string `json:"id"`
	// ProviderID names the broker provider; several tenants may share one.
	ProviderID string `json:"provider_id"`
	// Destination is the exact TLS endpoint of the tenant's broker.
	Destination Destination `json:"destination"`
}

// Destination is an exact TLS endpoint: one IPv4 socket address, the
// server name verified independently of it, and the roots that verify the
// server. It is comparable; a credential is bound to one with ==.
type Destination struct {
	// Address is the approved IPv4 address and port; no name is resolved.
	Address netip.AddrPort `json:"address"`
	// ServerName is the name the server certificate must be valid for, a
	// lower-case DNS name (not an IP literal), sent as SNI.
	ServerName string `json:"server_name"`
	// RootCAsPEM holds the root certificates, PEM "CERTIFICATE" blocks only,
	// separated by white space, ASCII.
	RootCAsPEM string `json:"root_cas_pem"`
	// AllowNonPublic opts in to Address when it is not a public address
	// (loopback, private, link-local, shared, documentation, benchmark or
	// reserved). It applies to this exact address only, and is refused on a
	// public one.
	AllowNonPublic bool `json:"allow_non_public,omitempty"`
	// SPKISHA256, when set, pins the server certificate's public key:
	// lower-case hex of SHA-256 of its SubjectPublicKeyInfo (see SPKIPin).
	SPKISHA256 string `json:"spki_sha256,omitempty"`
}

// Binding routes one durable pull consumer to one function. Event bytes and
// headers select nothing: everything about authority and routing is here.
type Binding struct {
	// ID names the binding.
	ID string `json:"id"`
	// Tenant is the ID of the tenant whose broker holds the consumer.
	Tenant string `json:"tenant"`
	// Principal is the trusted principal subject activations derive from.
	Principal string `json:"principal"`
	// Service, Contract and Function select what runs.
	Service  string `json:"service"`
	Contract string `json:"contract"`
	Function string `json:"function"`
	// Route optionally pins a route; empty means the current route.
	Route string `json:"route,omitempty"`
	// Stream and Consumer name the stream and its durable consumer.
	Stream   string `json:"stream"`
	Consumer string `json:"consumer"`
	// FilterSubject is the consumer's exact, literal filter subject.
	FilterSubject string `json:"filter_subject"`
	// MaxPayloadBytes is the payload ceiling, at most MaxPayloadBytes.
	MaxPayloadBytes int `json:"max_payload_bytes"`
	// OperationTimeoutMS is the one original deadline of a delivery.
	OperationTimeoutMS int `json:"operation_timeout_ms"`
	// RootBudgetMS is the reduced root wall-time budget of the activation:
	// positive, at most OperationTimeoutMS.
	RootBudgetMS int `json:"root_budget_ms"`
	// MaxDeliver is the consumer's max_deliver, at most MaxMaxDeliver.
	MaxDeliver int `json:"max_deliver"`
	// AckWaitMS is the consumer's ack_wait: at least OperationTimeoutMS +
	// AckWaitMarginMS.
	AckWaitMS int `json:"ack_wait_ms"`
	// NakDelayMS is the delay of a negative acknowledgement,
	// from MinNakDelayMS.
	NakDelayMS int `json:"nak_delay_ms"`
}

// PollInterval returns PollIntervalMS as a duration.
func (c Config) PollInterval() time.Duration { return millis(c.PollIntervalMS) }

// Clone returns a deep copy: the runtime keeps its own.
func (c Config) Clone() Config {
	c.Tenants = slices.Clone(c.Tenants)
	c.Bindings = slices.Clone(c.Bindings)
	return c
}

// TenantIndex returns the index of the tenant with the given ID, or -1.
func (c Config) TenantIndex(id string) int {
	return slices.IndexFunc(c.Tenants, func(t Tenant) bool { return t.ID == id })
}

// OperationTimeout returns OperationTimeoutMS as a duration.
func (b Binding) OperationTimeout() time.Duration { return millis(b.OperationTimeoutMS) }

// RootBudget returns RootBudgetMS as a duration.
func (b Binding) RootBudget() time.Duration { return millis(b.RootBudgetMS) }

// AckWait returns AckWaitMS as a duration.
func (b Binding) AckWait() time.Duration { return millis(b.AckWaitMS) }

// NakDelay returns NakDelayMS as a duration.
func (b Binding) NakDelay() time.Duration { return millis(b.NakDelayMS) }

// millis converts integer milliseconds to a duration.
func millis(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// Certificates parses RootCAsPEM with the rules Validate applies.
func (d Destination) Certificates() ([]*x509.Certificate, error) {
	return parseRoots(d.RootCAsPEM)
}

// CertPool returns a pool of the root certificates.
func (d Destination) CertPool() (*x509.CertPool, error) {
	certs, err := d.Certificates()
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// RetainedRootBytes returns the DER bytes of the root certificates, the
// size installation accounting charges for, or 0 when they do not parse.
func (d Destination) RetainedRootBytes() int {
	certs, err := d.Certificates()
	if err != nil {
		return 0
	}
	n := 0
	for _, c := range certs {
		n += len(c.Raw)
	}
	return n
}

// SPKIPin returns the pin of a certificate's public key in the form of
// Destination.SPKISHA256: lower-case hex of SHA-256 of its
// SubjectPublicKeyInfo.
func SPKIPin(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return hex.EncodeToString(sum[:])
}

// parseRoots parses a root bundle: ASCII, only CERTIFICATE blocks without
// headers, each a parsable certificate, at least one, nothing but white
// space around them.
func parseRoots(s string) ([]*x509.Certificate, error) {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return nil, RuleRootCAs
		}
	}
	var certs []*x509.Certificate
	rest := []byte(s)
	for {
		rest = trimLeadingSpace(rest)
		if len(rest) == 0 {
			break
		}
		if !bytes.HasPrefix(rest, []byte("-----BEGIN ")) {
			return nil, RuleRootCAs
		}
		block, r := pem.Decode(rest)
		if block == nil || block.Type != "CERTIFICATE" || len(block.Headers) != 0 {
			return nil, RuleRootCAs
		}
		// pem.Decode skips a malformed block and returns the next one; the
		// block must be the one that starts here.
		if next := bytes.Index(rest[1:], []byte("-----BEGIN ")); next >= 0 && len(rest)-len(r) > next+1 {
			return nil, RuleRootCAs
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, RuleRootCAs
		}
		certs = append(certs, cert)
		rest = r
	}
	if len(certs) == 0 {
		return nil, RuleRootCAs
	}
	return certs, nil
}

// trimLeadingSpace drops leading ASCII white space.
func trimLeadingSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	return b
}
