package trigger

import (
	"errors"
	"io/fs"
	"net/netip"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/boundedfile"
	"github.com/latent-systems/latent-nats/internal/jsontree"
)

// The credentials file binds each tenant to its provider, its exact
// destination and the file that holds its secret; the secret stays in that
// file, where the operator keeps it. docs/CREDENTIALS.md gives the format.
// It is strict like the configuration: unknown, duplicate or missing keys
// and wrong types are violations, each with its JSON path.
//
//	{"credentials": [{
//	  "tenant": "acme", "provider_id": "nats-eu",
//	  "destination": {"address": "127.0.0.1:4222", "server_name": "broker.latent.test",
//	                  "root_cas_pem": "-----BEGIN CERTIFICATE-----\n...", "allow_non_public": true},
//	  "kind": "creds", "file": "acme.creds"
//	}]}
//
// credentials holds 1 to MaxTenants entries; tenant, provider_id and
// destination must equal the configuration's tenant exactly (the
// destination has the configuration's keys); kind is "creds" (a decorated
// .creds file), "nkey" (a user nkey seed), "token" or "user_password" (the
// file holds the password, "user" names the user, and only this kind has
// that key); file is relative to the credentials file's directory unless
// absolute, a regular file of at most MaxSecretFileBytes with no permission
// bit for group or others. One trailing newline of a token or password file
// is ignored. A user JWT whose expiry has passed is a violation.
//
// A TLS client certificate is named by two more keys: "client_cert", a
// PEM file of the certificate chain (leaf first, at most
// credential.MaxCertChainBytes), and "client_key", a PEM file of its
// unencrypted private key (at most credential.MaxClientKeyBytes, no
// permission bit for group or others), resolved as file is. Both or
// neither. With any kind above the certificate is presented beside the
// NATS credential; kind "certificate" (a broker with verify_and_map)
// takes no "file": the certificate alone authenticates. A key that is not
// the certificate's, and a certificate expired or not yet valid at now,
// are violations.

// Limits of the credentials file and the secret files it names.
const (
	// MaxCredentialsFileBytes bounds the credentials file. It holds no
	// secret, only up to MaxTenants entries with their destinations (root
	// certificates included).
	MaxCredentialsFileBytes = 256 << 10
	// MaxSecretFileBytes bounds one secret file: the credential package's
	// bound for a whole .creds file, the largest kind.
	MaxSecretFileBytes = credential.MaxCredsBytes
	// maxCredentialsDepth bounds the nesting of the credentials file: no
	// value may sit deeper (the document is at depth 0). The schema needs
	// four levels (document, list, entry, destination).
	maxCredentialsDepth = 8
)

// The credentials file's keys.
const (
	keyCredentials = "credentials"
	keyFile        = "file"
	keyUser        = "user"
	keyClientCert  = "client_cert"
	keyClientKey   = "client_key"
)

// LoadCredentials reads the credentials file at path and the secret file
// of every entry, checks them against cfg as MatchCredentials does, and
// returns the credentials in tenant order (result[i] belongs to
// cfg.Tenants[i]), ready for Install. now is what a user JWT's expiry is
// checked against. It reads files and nothing else: no network.
//
// cfg must be valid (else its *ConfigError, and no file is read). Every
// violation of the file, of a secret file and of the matching is reported
// at once in a *CredentialsError, whose paths name the credentials file
// ("credentials[1].file") or the configuration's tenant ("tenants[0]"); an
// entry with a violation of its own is not matched again. The caller owns
// the secrets returned (Secret.Wipe); on an error every secret read was
// wiped.
func LoadCredentials(path string, cfg Config, now time.Time) ([]Credential, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	f := readCredentialsFile(path, now)
	var matched []Credential
	if f.listed {
		var err error
		matched, err = MatchCredentials(cfg, f.creds)
		var ce *CredentialsError
		if errors.As(err, &ce) {
			f.matchViolations(ce)
		}
	}
	if err := f.err(); err != nil {
		f.wipe()
		return nil, err
	}
	return matched, nil
}

// CheckCredentialsFile checks the credentials file at path and the secret
// file of every entry, without a configuration: the *CredentialsError of
// LoadCredentials less the matching, or nil. Every secret read is wiped
// before it returns.
func CheckCredentialsFile(path string, now time.Time) error {
	f := readCredentialsFile(path, now)
	f.wipe()
	return f.err()
}

// credentialsFile is a credentials file as read: one Credential per entry,
// in file order (Secret nil where it could not be had), which entries
// carry violations of their own, and the violations with their causes.
type credentialsFile struct {
	// listed reports that the document held a list of credentials, so
	// matching them against the tenants means something.
	listed bool
	creds  []Credential
	broken []bool
	vs     violationList
	causes []error
}

// add records a violation at path and its cause (nil for none).
func (f *credentialsFile) add(path string, r Rule, d Detail, cause error) {
	n := len(f.vs.list)
	f.vs.addDetail(path, r, d)
	if len(f.vs.list) > n {
		f.causes = append(f.causes, cause)
	}
}

// err returns the *CredentialsError, or nil without a violation.
func (f *credentialsFile) err() error {
	if len(f.vs.list) == 0 && !f.vs.truncated {
		return nil
	}
	return &CredentialsError{Violations: f.vs.list, Details: f.vs.details, Causes: f.causes, Truncated: f.vs.truncated}
}

// wipe wipes every secret read.
func (f *credentialsFile) wipe() {
	for _, c := range f.creds {
		c.Secret.Wipe()
	}
}

// matchViolations records the violations of MatchCredentials. An entry
// with violations of its own (broken) is not reported again, and a
// secret is reported at the entry's "file" key.
func (f *credentialsFile) matchViolations(ce *CredentialsError) {
	for _, v := range ce.Violations {
		if i, ok := entryIndex(v.Path); ok && i < len(f.broken) && f.broken[i] {
			continue
		}
		p := v.Path
		if rest, ok := strings.CutSuffix(p, ".secret"); ok {
			p = rest + "." + keyFile
		}
		f.add(p, v.Rule, Detail{}, nil)
	}
	f.vs.truncated = f.vs.truncated || ce.Truncated
}

// entryIndex returns i of a path "credentials[i]...".
func entryIndex(path string) (int, bool) {
	rest, ok := strings.CutPrefix(path, keyCredentials+"[")
	if !ok {
		return 0, false
	}
	end := strings.IndexByte(rest, ']')
	if end < 1 || end > 3 {
		return 0, false
	}
	n, err := strconv.Atoi(rest[:end])
	return n, err == nil
}

// readCredentialsFile reads the credentials file at path and the secret
// file of every entry (relative paths are resolved against the
// credentials file's directory).
func readCredentialsFile(path string, now time.Time) *credentialsFile {
	f := &credentialsFile{}
	b, _, r, cause := readBounded(path, MaxCredentialsFileBytes)
	if r != 0 {
		f.add("", r, fileDetail(r, MaxCredentialsFileBytes), cause)
		return f
	}
	root, at, r := parseJSON(b, maxCredentialsDepth)
	if root == nil {
		d := Detail{}
		if r == RuleSyntax {
			d = syntaxDetail(maxCredentialsDepth)
		}
		f.add(at, r, d, nil)
		return f
	}
	top := f.object(root, "", []credField{{keyCredentials, jsontree.KindArray, true}})
	list, ok := top[keyCredentials]
	if !ok {
		return f
	}
	f.listed = true
	if n := len(list.Elems); n < 1 || n > MaxTenants {
		f.add(keyCredentials, RuleCount, rangeDetail(n, 1, MaxTenants, unitEntries), nil)
	}
	dir := filepath.Dir(path)
	for i, e := range list.Elems {
		if i == MaxTenants {
			break
		}
		before := len(f.vs.list)
		f.creds = append(f.creds, f.entry(e, jsontree.Index(keyCredentials, i), dir, now))
		f.broken = append(f.broken, len(f.vs.list) > before)
	}
	return f
}

// credField is one key of an object of the credentials file.
type credField struct {
	key      string
	kind     jsontree.Kind
	required bool
}

// entryFields are the keys of one credential entry.
var entryFields = [...]credField{
	{"tenant", jsontree.KindString, true},
	{"provider_id", jsontree.KindString, true},
	{"destination", jsontree.KindObject, true},
	{"kind", jsontree.KindString, true},
	// file is required by every kind but certificate: see entry.
	{keyFile, jsontree.KindString, false},
	{keyUser, jsontree.KindString, false},
	{keyClientCert, jsontree.KindString, false},
	{keyClientKey, jsontree.KindString, false},
}

// destinationFields are the keys of a destination: the same keys and types
// as a tenant's destination in the configuration JSON.
var destinationFields = [...]credField{
	{"address", jsontree.KindString, true},
	{"server_name", jsontree.KindString, true},
	{"root_cas_pem", jsontree.KindString, true},
	{"allow_non_public", jsontree.KindBool, false},
	{"spki_sha256", jsontree.KindString, false},
}

// object walks fields over n (see jsontree.Walker.Object) and returns
// the members present once with the right type. Unknown, duplicate and
// missing keys and wrong types are violations.
func (f *credentialsFile) object(n *jsontree.Node, path string, fields []credField) map[string]*jsontree.Node {
	want := make([]jsontree.Want, len(fields))
	for i, fd := range fields {
		want[i] = jsontree.Want{Name: fd.key, Kind: fd.kind, Optional: !fd.required}
	}
	w := jsontree.Walker{Report: func(path string, err error) {
		r, d := jsonRule(err), Detail{}
		if r == RuleUnknownField {
			d.Want = "is not a field of the credentials file"
		}
		f.add(path, r, d, nil)
	}}
	out := make(map[string]*jsontree.Node, len(fields))
	for i, v := range w.Object(path, n, want) {
		if v != nil {
			out[fields[i].key] = v
		}
	}
	return out
}

// entry decodes one credential entry and loads its secret when everything
// it needs is present.
func (f *credentialsFile) entry(n *jsontree.Node, path, dir string, now time.Time) Credential {
	m := f.object(n, path, entryFields[:])
	var c Credential
	if n.Kind != jsontree.KindObject {
		return c
	}
	if v, ok := m["tenant"]; ok {
		c.Tenant = v.Text
	}
	if v, ok := m["provider_id"]; ok {
		c.ProviderID = v.Text
	}
	if v, ok := m["destination"]; ok {
		c.Destination = f.destination(v, jsontree.Field(path, "destination"))
	}
	k, kindOK := credential.Kind(0), false
	if v, ok := m["kind"]; ok {
		if k, kindOK = parseKind(v.Text); !kindOK {
			f.add(jsontree.Field(path, "kind"), RuleCredentialKind, Detail{}, nil)
		}
	}
	user, hasUser := m[keyUser]
	if kindOK && hasUser != (k == credential.KindUserPassword) {
		if hasUser {
			f.add(jsontree.Field(path, keyUser), RuleUnknownField, Detail{Want: "is a key of the user_password kind only"}, nil)
		} else {
			f.add(jsontree.Field(path, keyUser), RuleMissingField, Detail{Want: "is required with the user_password kind"}, nil)
		}
		kindOK = false
	}
	file, hasFile := m[keyFile]
	certOnly := kindOK && k == credential.KindCertificate
	switch {
	case certOnly && hasFile:
		f.add(jsontree.Field(path, keyFile), RuleUnknownField, Detail{Want: "is not a key of the certificate kind"}, nil)
		kindOK = false
	case !certOnly && !hasFile:
		f.add(jsontree.Field(path, keyFile), RuleMissingField, Detail{}, nil)
	}
	certFile, hasCert := m[keyClientCert]
	keyFileNode, hasKey := m[keyClientKey]
	switch {
	case hasCert && !hasKey:
		f.add(jsontree.Field(path, keyClientKey), RuleMissingField, Detail{Want: "is required with client_cert"}, nil)
		kindOK = false
	case hasKey && !hasCert:
		f.add(jsontree.Field(path, keyClientCert), RuleMissingField, Detail{Want: "is required with client_key"}, nil)
		kindOK = false
	case certOnly && !hasCert:
		f.add(jsontree.Field(path, keyClientCert), RuleMissingField, Detail{Want: "is required with the certificate kind"}, nil)
		f.add(jsontree.Field(path, keyClientKey), RuleMissingField, Detail{Want: "is required with the certificate kind"}, nil)
		kindOK = false
	}
	if !kindOK || (!hasFile && !certOnly) {
		return c
	}
	if !certOnly {
		u := ""
		if hasUser {
			u = user.Text
		}
		c.Secret = f.secret(jsontree.Field(path, keyFile), resolve(dir, file.Text), k, u, now)
		if c.Secret == nil || !hasCert {
			return c
		}
	}
	c.Secret = f.clientCert(path, resolve(dir, certFile.Text), resolve(dir, keyFileNode.Text), c.Secret, now)
	return c
}

// clientCert reads an entry's client certificate and key files and
// attaches them to sec, or, for nil, makes a KindCertificate secret of
// them; nil when they cannot be used (sec is then wiped).
func (f *credentialsFile) clientCert(path, certFile, keyFile string, sec *credential.Secret, now time.Time) *credential.Secret {
	fail := func() *credential.Secret {
		sec.Wipe()
		return nil
	}
	certPath, keyPath := jsontree.Field(path, keyClientCert), jsontree.Field(path, keyClientKey)
	certPEM, _, r, cause := readBounded(certFile, credential.MaxCertChainBytes)
	if r != 0 {
		f.add(certPath, r, fileDetail(r, credential.MaxCertChainBytes), cause)
		return fail()
	}
	keyPEM, mode, r, cause := readBounded(keyFile, credential.MaxClientKeyBytes)
	if r != 0 {
		f.add(keyPath, r, fileDetail(r, credential.MaxClientKeyBytes), cause)
		return fail()
	}
	defer clear(keyPEM)
	if sharedMode(mode) {
		f.add(keyPath, RuleSecretShared, Detail{}, nil)
		return fail()
	}
	var err error
	if sec == nil {
		sec, err = credential.FromClientCertificate(certPEM, keyPEM)
	} else {
		err = sec.AddClientCertificate(certPEM, keyPEM)
	}
	switch {
	case errors.Is(err, credential.ErrCertificateKeyMismatch):
		f.add(keyPath, RuleClientCertKey, Detail{}, err)
		return fail()
	case err != nil:
		f.add(certPath, RuleSecretMalformed, Detail{Want: "and client_key do not hold a PEM certificate chain and its unencrypted private key"}, err)
		return fail()
	}
	if err := sec.CheckCurrent(now); err != nil {
		f.add(certPath, RuleClientCertValidity, Detail{}, err)
		return fail()
	}
	return sec
}

// destination decodes a destination object.
func (f *credentialsFile) destination(n *jsontree.Node, path string) Destination {
	m := f.object(n, path, destinationFields[:])
	var d Destination
	if v, ok := m["address"]; ok {
		ap, err := netip.ParseAddrPort(v.Text)
		if err != nil || !ap.Addr().Is4() {
			f.add(jsontree.Field(path, "address"), RuleAddress, Detail{Want: addressWant, Fix: addressFix}, nil)
		} else {
			d.Address = ap
		}
	}
	if v, ok := m["server_name"]; ok {
		d.ServerName = v.Text
	}
	if v, ok := m["root_cas_pem"]; ok {
		d.RootCAsPEM = v.Text
	}
	if v, ok := m["allow_non_public"]; ok {
		d.AllowNonPublic = v.Bool
	}
	if v, ok := m["spki_sha256"]; ok {
		d.SPKISHA256 = v.Text
	}
	return d
}

// secret reads and decodes one secret file; nil when it cannot be used.
func (f *credentialsFile) secret(path, file string, k credential.Kind, user string, now time.Time) *credential.Secret {
	b, mode, r, cause := readBounded(file, MaxSecretFileBytes)
	if r != 0 {
		f.add(path, r, fileDetail(r, MaxSecretFileBytes), cause)
		return nil
	}
	defer clear(b)
	if sharedMode(mode) {
		f.add(path, RuleSecretShared, Detail{}, nil)
		return nil
	}
	sec, err := decodeSecret(k, b, user)
	if err != nil {
		f.add(path, RuleSecretMalformed, Detail{}, err)
		return nil
	}
	if err := sec.CheckCurrent(now); err != nil {
		sec.Wipe()
		f.add(path, RuleSecretExpired, Detail{}, err)
		return nil
	}
	return sec
}

// fileDetail describes a file that cannot be read (Rule.Detail) or is over
// max bytes.
func fileDetail(r Rule, max int) Detail {
	if r == RuleTooLarge {
		return Detail{Want: "is above the maximum " + strconv.Itoa(max) + " (bytes)"}
	}
	return Detail{}
}

// decodeSecret turns a secret file's bytes into a Secret of kind k.
func decodeSecret(k credential.Kind, b []byte, user string) (*credential.Secret, error) {
	switch k {
	case credential.KindCreds:
		return credential.ParseCreds(b)
	case credential.KindNKey:
		return credential.FromNKeySeed(b)
	case credential.KindToken:
		return credential.FromToken(string(trimLineEnd(b)))
	case credential.KindUserPassword:
		return credential.FromUserPassword(user, string(trimLineEnd(b)))
	}
	return nil, RuleCredentialKind
}

// parseKind maps a kind name to credential.Kind.
func parseKind(s string) (credential.Kind, bool) {
	for _, k := range [...]credential.Kind{credential.KindCreds, credential.KindNKey, credential.KindUserPassword, credential.KindToken, credential.KindCertificate} {
		if k.String() == s {
			return k, true
		}
	}
	return 0, false
}

// trimLineEnd drops one trailing "\n" or "\r\n": a token or password file
// written by an editor or echo.
func trimLineEnd(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

// resolve returns file, relative to dir unless absolute.
func resolve(dir, file string) string {
	if filepath.IsAbs(file) {
		return file
	}
	return filepath.Join(dir, file)
}

// readBounded reads a regular file of at most max bytes
// (internal/boundedfile). On failure it returns the rule broken
// (RuleUnreadable or RuleTooLarge) and the cause, and no bytes.
func readBounded(file string, max int64) ([]byte, fs.FileMode, Rule, error) {
	b, mode, tooLarge, err := boundedfile.Read(file, max)
	switch {
	case err != nil:
		return nil, 0, RuleUnreadable, err
	case tooLarge:
		return nil, 0, RuleTooLarge, nil
	}
	return b, mode, 0, nil
}

// sharedMode reports whether a secret file's mode lets its group or others
// read it. Windows file modes carry no such bits; the check is skipped
// there.
func sharedMode(mode fs.FileMode) bool {
	return runtime.GOOS != "windows" && mode.Perm()&0o077 != 0
}
