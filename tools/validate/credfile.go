package validate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/latent-systems/latent-nats/credential"
	"github.com/latent-systems/latent-nats/internal/jsonlex"
	"github.com/latent-systems/latent-nats/internal/jsontree"
	"github.com/latent-systems/latent-nats/trigger"
)

// Limits of the files this package reads. Each has a test at the limit and
// one past it.
const (
	// MaxCredentialsFileBytes bounds the credentials file. It holds no
	// secret, only up to trigger.MaxTenants entries with their
	// destinations (root certificates included).
	MaxCredentialsFileBytes = 256 << 10
	// MaxSecretFileBytes bounds one secret file: the credential package's
	// bound for a whole .creds file, the largest kind.
	MaxSecretFileBytes = credential.MaxCredsBytes
)

// maxDepth bounds the nesting of the credentials file: no value may sit
// deeper (the document is at depth 0). The schema needs four levels
// (document, list, entry, destination); anything deeper is a syntax
// violation.
const maxDepth = 8

// The credentials file's keys.
const (
	keyCredentials    = "credentials"
	keyTenant         = "tenant"
	keyProviderID     = "provider_id"
	keyDestination    = "destination"
	keyKind           = "kind"
	keyFile           = "file"
	keyUser           = "user"
	keyAddress        = "address"
	keyServerName     = "server_name"
	keyRootCAsPEM     = "root_cas_pem"
	keyAllowNonPublic = "allow_non_public"
	keySPKISHA256     = "spki_sha256"
)

// The credentials file is decoded in two passes, as the configuration is:
// parseTree reads the JSON into a tree that keeps every key (duplicates
// included) in order; the schema below then walks that tree and reports
// unknown, duplicate and missing keys and wrong types with their paths
// instead of stopping at the first.

// parseTree reads exactly one JSON value from b. It returns false for a
// syntax error, a value deeper than maxDepth or data after the value.
// jsontree.Parse bounds the nesting of containers, so a container may open
// at maxDepth (and must then be empty); the scalars it would admit one
// level further are refused here.
//
// A string with invalid UTF-8 or half a surrogate pair is refused too, by
// the module's one UTF-8 policy for JSON (internal/jsonlex): jsontree
// would replace it with U+FFFD, and a tenant ID or file path rewritten so
// must not be read as another.
func parseTree(b []byte) (*jsontree.Node, bool) {
	root, err := jsontree.Parse(b, maxDepth+1)
	if err != nil || root.Depth() > maxDepth {
		return nil, false
	}
	if _, err := jsonlex.Skip(b, 0, 0, maxDepth); err != nil {
		return nil, false
	}
	return root, true
}

// field is one key of an object in the schema.
type field struct {
	key      string
	kind     jsontree.Kind
	required bool
}

// entrySchema returns the keys of one credential entry.
func entrySchema() []field {
	return []field{
		{keyTenant, jsontree.KindString, true},
		{keyProviderID, jsontree.KindString, true},
		{keyDestination, jsontree.KindObject, true},
		{keyKind, jsontree.KindString, true},
		{keyFile, jsontree.KindString, true},
		{keyUser, jsontree.KindString, false},
	}
}

// destinationSchema returns the keys of a destination: the same keys and
// types as a tenant's destination in the configuration JSON.
func destinationSchema() []field {
	return []field{
		{keyAddress, jsontree.KindString, true},
		{keyServerName, jsontree.KindString, true},
		{keyRootCAsPEM, jsontree.KindString, true},
		{keyAllowNonPublic, jsontree.KindBool, false},
		{keySPKISHA256, jsontree.KindString, false},
	}
}

// loaded is the credentials file as read: one Credential per entry, in
// file order (Secret nil where it could not be had), and which entries
// carry violations of their own.
type loaded struct {
	// listed reports that the document held a list of credentials, so
	// matching them against the tenants means something.
	listed bool
	creds  []trigger.Credential
	broken []bool
	vs     []Violation
}

// wipe wipes every secret loaded.
func (l *loaded) wipe() {
	for _, c := range l.creds {
		if c.Secret != nil {
			c.Secret.Wipe()
		}
	}
}

// loadCredentials reads the credentials file at path and the secret file
// of every entry (relative paths are resolved against the credentials
// file's directory). now is the time expiry is checked against.
func loadCredentials(path string, now time.Time) *loaded {
	l := &loaded{}
	b, _, r, cause := readBounded(path, MaxCredentialsFileBytes)
	if r != 0 {
		l.vs = append(l.vs, fileViolation(SourceCredentials, "", r, cause))
		return l
	}
	root, ok := parseTree(b)
	if !ok {
		l.vs = append(l.vs, fileViolation(SourceCredentials, "", RuleSyntax, nil))
		return l
	}
	s := schema{}
	top := s.object(root, "", []field{{keyCredentials, jsontree.KindArray, true}})
	list, ok := top[keyCredentials]
	if !ok {
		l.vs = append(l.vs, s.vs...)
		return l
	}
	l.listed = true
	if n := len(list.Elems); n < 1 || n > trigger.MaxTenants {
		s.add(keyCredentials, RuleCount, nil)
	}
	dir := filepath.Dir(path)
	for i, e := range list.Elems {
		if i == trigger.MaxTenants {
			break
		}
		before := len(s.vs)
		c := s.entry(e, jsontree.Index(keyCredentials, i), dir, now)
		l.creds = append(l.creds, c)
		l.broken = append(l.broken, len(s.vs) > before)
	}
	l.vs = append(l.vs, s.vs...)
	return l
}

// schema walks a parsed credentials file and collects violations.
type schema struct {
	vs []Violation
}

func (s *schema) add(path string, r Rule, cause error) {
	s.vs = append(s.vs, fileViolation(SourceCredentials, path, r, cause))
}

// object checks n against fields and returns the members present with the
// right type. Unknown, duplicate and missing keys and wrong types are
// violations.
func (s *schema) object(n *jsontree.Node, path string, fields []field) map[string]*jsontree.Node {
	out := make(map[string]*jsontree.Node, len(fields))
	if n.Kind != jsontree.KindObject {
		s.add(path, RuleWrongType, nil)
		return out
	}
	seen := make(map[string]bool, len(n.Members))
	for _, m := range n.Members {
		p := jsontree.Field(path, m.Key)
		if seen[m.Key] {
			s.add(p, RuleDuplicateKey, nil)
			continue
		}
		seen[m.Key] = true
		f, known := lookupField(fields, m.Key)
		switch {
		case !known:
			s.add(p, RuleUnknownField, nil)
		case m.Value.Kind != f.kind:
			s.add(p, RuleWrongType, nil)
		default:
			out[m.Key] = m.Value
		}
	}
	for _, f := range fields {
		if f.required && !seen[f.key] {
			s.add(jsontree.Field(path, f.key), RuleMissingField, nil)
		}
	}
	return out
}

func lookupField(fields []field, key string) (field, bool) {
	for _, f := range fields {
		if f.key == key {
			return f, true
		}
	}
	return field{}, false
}

// entry decodes one credential entry and loads its secret when everything
// it needs is present.
func (s *schema) entry(n *jsontree.Node, path, dir string, now time.Time) trigger.Credential {
	m := s.object(n, path, entrySchema())
	var c trigger.Credential
	if v, ok := m[keyTenant]; ok {
		c.Tenant = v.Text
	}
	if v, ok := m[keyProviderID]; ok {
		c.ProviderID = v.Text
	}
	if v, ok := m[keyDestination]; ok {
		c.Destination = s.destination(v, jsontree.Field(path, keyDestination))
	}
	k, kindOK := credential.Kind(0), false
	if v, ok := m[keyKind]; ok {
		if k, kindOK = parseKind(v.Text); !kindOK {
			s.add(jsontree.Field(path, keyKind), RuleKind, nil)
		}
	}
	user, hasUser := m[keyUser]
	if kindOK && hasUser != (k == credential.KindUserPassword) {
		if hasUser {
			s.add(jsontree.Field(path, keyUser), RuleUnknownField, nil)
		} else {
			s.add(jsontree.Field(path, keyUser), RuleMissingField, nil)
		}
		kindOK = false
	}
	file, hasFile := m[keyFile]
	if !kindOK || !hasFile {
		return c
	}
	u := ""
	if hasUser {
		u = user.Text
	}
	c.Secret = s.secret(jsontree.Field(path, keyFile), resolve(dir, file.Text), k, u, now)
	return c
}

// destination decodes a destination object.
func (s *schema) destination(n *jsontree.Node, path string) trigger.Destination {
	m := s.object(n, path, destinationSchema())
	var d trigger.Destination
	if v, ok := m[keyAddress]; ok {
		ap, err := netip.ParseAddrPort(v.Text)
		if err != nil || !ap.Addr().Is4() {
			s.add(jsontree.Field(path, keyAddress), RuleAddress, nil)
		} else {
			d.Address = ap
		}
	}
	if v, ok := m[keyServerName]; ok {
		d.ServerName = v.Text
	}
	if v, ok := m[keyRootCAsPEM]; ok {
		d.RootCAsPEM = v.Text
	}
	if v, ok := m[keyAllowNonPublic]; ok {
		d.AllowNonPublic = v.Bool
	}
	if v, ok := m[keySPKISHA256]; ok {
		d.SPKISHA256 = v.Text
	}
	return d
}

// secret reads and decodes one secret file; nil when it cannot be used.
func (s *schema) secret(path, file string, k credential.Kind, user string, now time.Time) *credential.Secret {
	b, mode, r, cause := readBounded(file, MaxSecretFileBytes)
	if r != 0 {
		s.add(path, r, cause)
		return nil
	}
	defer clear(b)
	if sharedMode(mode) {
		s.add(path, RuleSecretShared, nil)
		return nil
	}
	sec, err := decodeSecret(k, b, user)
	if err != nil {
		s.add(path, RuleSecretMalformed, err)
		return nil
	}
	if err := sec.CheckCurrent(now); err != nil {
		sec.Wipe()
		s.add(path, RuleSecretExpired, err)
		return nil
	}
	return sec
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
	default:
		return nil, ErrKind
	}
}

// parseKind maps a kind name to credential.Kind.
func parseKind(s string) (credential.Kind, bool) {
	for _, k := range []credential.Kind{credential.KindCreds, credential.KindNKey, credential.KindUserPassword, credential.KindToken} {
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

// errNotRegular reports a path that is not a regular file.
var errNotRegular = errors.New("validate: not a regular file")

// readBounded reads a regular file of at most max bytes. On failure it
// returns the rule broken (RuleUnreadable or RuleTooLarge) and the cause,
// and no bytes.
func readBounded(file string, max int64) ([]byte, fs.FileMode, Rule, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, 0, RuleUnreadable, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, RuleUnreadable, err
	}
	if !st.Mode().IsRegular() {
		return nil, 0, RuleUnreadable, fmt.Errorf("%w: %s", errNotRegular, file)
	}
	if st.Size() > max {
		return nil, 0, RuleTooLarge, nil
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		clear(b)
		return nil, 0, RuleUnreadable, err
	}
	if int64(len(b)) > max {
		clear(b)
		return nil, 0, RuleTooLarge, nil
	}
	return b, st.Mode(), 0, nil
}

// sharedMode reports whether a secret file's mode lets its group or others
// read it. Windows file modes carry no such bits; the check is skipped
// there.
func sharedMode(mode fs.FileMode) bool {
	return runtime.GOOS != "windows" && mode.Perm()&0o077 != 0
}
